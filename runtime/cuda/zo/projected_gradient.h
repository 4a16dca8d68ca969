// The PROJECTED_GRADIENT compute op on the GPU (docs/ARCHITECTURE.md, 'The
// algorithms', 'Determinism contract' and 'Runtime'): gathers the step's
// per-example losses of every perturbation direction in the canonical
// (direction, example) order, reduces each direction's to its SPSA
// projected gradient g_i (zo_math.h ProjectedGradient, bit for bit) and all
// of them to the mean loss, and stores the q pending entries in device
// memory, where the next step's fused update reads them (update.h), so no g
// ever has to visit the host inside a step.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/zo/zo_state.h"

namespace zosched {

// One thread on `stream`. With q = `directions` and, for direction i in
// [0, q) and example e in [0, batch), L+_ie = losses[plus_index[i·batch + e]]
// and L-_ie = losses[minus_index[i·batch + e]] (the +ε and -ε losses of
// example e of the global batch along direction i, in example order):
//   state[i]   = {DirectionSeed(seed, i), g_i, learning_rate} for i in [0, q),
//                g_i = ProjectedGradient(L+_i, L-_i, batch, eps) evaluated in
//                exactly zo_math.h's operation order (double sum of
//                double(L+_ie) - double(L-_ie) in e order, divided by
//                double(batch) * (2.0 * double(eps)), rounded to float once);
//   *mean_loss = (sum_{i,e} 0.5 * (double(L+_ie) + double(L-_ie))) /
//                double(q · batch), the sum in (direction, example) order
//                (i outer) in double: the CPU backend's step loss (for q = 1
//                the batch's mean).
// The losses are gathered on the fly: no scratch memory.
//   losses        device, the step's loss buffer (floats, loss units).
//   plus_index    device, q · batch int32 indices into `losses`, at i·batch + e.
//   minus_index   device, q · batch int32 indices into `losses`, at i·batch + e.
//   batch         examples (>= 1).
//   directions    q (>= 1), the perturbation directions of the step.
//   eps           ε > 0 of the step's perturbation.
//   seed          the step seed (zo_math.h StepSeed); direction i drew its z
//                 with DirectionSeed(seed, i) (direction 0: seed itself).
//   learning_rate η of the step (0: the update is a no-op), in every entry.
//   state         device, q entries written.
//   mean_loss     device, written.
// Only enqueues. Returns cudaErrorInvalidValue (nothing launched) for
// batch < 1, directions < 1 or q · batch above 2^31 - 1, otherwise
// cudaGetLastError() after the launch.
cudaError_t LaunchProjectedGradient(const float* losses, const int32_t* plus_index,
                                    const int32_t* minus_index, int batch, int directions,
                                    float eps, uint64_t seed, float learning_rate, ZoState* state,
                                    double* mean_loss, cudaStream_t stream);

}  // namespace zosched
