// The PROJECTED_GRADIENT compute op on the GPU (docs/ARCHITECTURE.md, 'The
// algorithms', 'Determinism contract' and 'Runtime'): gathers the step's
// per-example losses in the canonical example order, reduces them to the
// SPSA projected gradient g (zo_math.h ProjectedGradient, bit for bit) and
// the mean loss, and stores the pending update in device memory, where the
// next step's fused update reads it (update.h), so g never has to visit the
// host inside a step.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/zo/zo_state.h"

namespace zosched {

// One thread on `stream`. For e in [0, batch), with L+_e = losses[plus_index[e]]
// and L-_e = losses[minus_index[e]] (the +ε and -ε losses of example e of
// the global batch, in example order):
//   *state     = {seed, g, learning_rate}, g = ProjectedGradient(L+, L-, batch, eps)
//                evaluated in exactly zo_math.h's operation order (double sum
//                of double(L+_e) - double(L-_e) in e order, divided by
//                double(batch) * (2.0 * double(eps)), rounded to float once);
//   *mean_loss = (sum_e 0.5 * (double(L+_e) + double(L-_e))) / batch, the
//                sum in e order in double: the CPU backend's step loss.
// The losses are gathered on the fly: no scratch memory.
//   losses        device, the step's loss buffer (floats, loss units).
//   plus_index    device, batch int32 indices into `losses`.
//   minus_index   device, batch int32 indices into `losses`.
//   batch         examples (>= 1).
//   eps           ε > 0 of the step's perturbation.
//   seed          the step seed z was drawn with (zo_math.h StepSeed).
//   learning_rate η of the step (0: the update is a no-op).
//   state         device, written.
//   mean_loss     device, written.
// Only enqueues. Returns cudaErrorInvalidValue (nothing launched) for
// batch < 1, otherwise cudaGetLastError() after the launch.
cudaError_t LaunchProjectedGradient(const float* losses, const int32_t* plus_index,
                                    const int32_t* minus_index, int batch, float eps, uint64_t seed,
                                    float learning_rate, ZoState* state, double* mean_loss,
                                    cudaStream_t stream);

}  // namespace zosched
