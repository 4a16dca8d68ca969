// The fused ZO-SGD update θ ← θ - η ((1/q) Σ_i g_i z_i + λ θ) on the GPU
// (docs/ARCHITECTURE.md, 'The algorithms' and 'Runtime'; n-SPSA with q
// perturbation directions, MeZO's θ - η (g z + λ θ) for q = 1): zo_math.h's
// UpdatedAlong over a range of a part's elements, in place, every z_i
// regenerated on the device, bitwise what the CPU backend computes
// (runtime/zo_ranges.h UpdateRange). The pending update, q (seed_i, g_i, η)
// entries, is read from the ZO_STATE in device memory, so the host can
// enqueue the update before the projected gradient that feeds it has been
// computed.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/dtype/element.h"
#include "runtime/zo/zo_state.h"

namespace zosched {

// The most decay spans a part may have (one per tensor; an OPT decoder block
// has 16 tensors).
constexpr int kMaxDecaySpans = 32;

// Which elements of a part take weight decay (runtime/model_parts.h
// DecaySpans in fixed-size form, passed to the kernel by value): span s is
// the element indices [begin[s], end[s]) of the part, decaying iff
// decays[s]. The first `count` spans are used; they are sorted by begin and
// disjoint, and normally cover the part (an element in no span is left
// unchanged, as UpdateRange leaves it).
struct DecaySpanTable {
  int count = 0;
  int64_t begin[kMaxDecaySpans] = {};
  int64_t end[kMaxDecaySpans] = {};
  bool decays[kMaxDecaySpans] = {};
};

// For i in [0, count), in place, with the q = `directions` pending entries
// s_d = state[d] (zo_state.h; d in [0, q)):
//   z_d       = StandardNormal(s_d.seed, z_stream, first + i)
//   gz        = DirectionsMean(DirectionsSum(g, z, q), q)
//               (g_d = s_d.g; gz = g_0 z_0, then gz = gz + g_d z_d in
//               direction order, then / q when q > 1, zo_math.h)
//   theta[i]  = FromFloat<T>(UpdatedAlong(ToFloat(theta[i]), gz,
//                            s_0.learning_rate, weight_decay, decays(first + i)))
// where T is the storage type of `type` (fp16/bf16 are widened, updated in
// fp32 and rounded back to nearest even). For q = 1 that is Updated(θ, z_0,
// η, g_0, λ, decays): the same bits as MeZO's single-direction update.
// Nothing changes when s_0.learning_rate == 0 (no update pending), decided
// on the device. The sum is accumulated direction by direction, so a
// thread's registers do not grow with q (each direction costs one Philox
// call per four elements).
//   state         DEVICE pointer to the q pending entries (written by
//                 LaunchProjectedGradient); read by the kernel when it runs.
//                 All carry the same learning rate; s_0's is used.
//   directions    q >= 1, the entries at `state`.
//   z_stream      the part's Philox stream (zo_math.h BlockStream ...).
//   spans         the part's decay spans (0 <= spans.count <= kMaxDecaySpans).
//   weight_decay  λ (>= 0), applied to elements whose span decays.
//   first         the element index of theta[0] within the part (>= 0; any
//                 alignment; first + count must stay below 2^63).
//   count         elements (>= 0).
//   theta         device, `count` elements of `type`, updated in place.
// Only enqueues on `stream`. Returns cudaErrorInvalidValue (nothing launched)
// for directions < 1, first < 0, count < 0, spans.count outside [0,
// kMaxDecaySpans] or an unknown type; cudaSuccess for count == 0 (nothing
// enqueued); otherwise cudaGetLastError() after the launch.
cudaError_t LaunchUpdate(ElementType type, const ZoState* state, int directions,
                         uint32_t z_stream, const DecaySpanTable& spans, float weight_decay,
                         int64_t first, int64_t count, void* theta, cudaStream_t stream);

}  // namespace zosched
