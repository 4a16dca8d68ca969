// The fused ZO-SGD update θ ← θ - η (g z + λ θ) on the GPU
// (docs/ARCHITECTURE.md, 'The algorithms' and 'Runtime'): zo_math.h's
// Updated over a range of a part's elements, in place, z regenerated on the
// device, bitwise what the CPU backend computes (runtime/zo_ranges.h
// UpdateRange). The pending (seed, g, η) is
// read from a ZoState in device memory, so the host can enqueue the update
// before the projected gradient that feeds it has been computed.
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

// For i in [0, count), in place:
//   theta[i] = FromFloat<T>(Updated(ToFloat(theta[i]), StandardNormal(s.seed, z_stream, first + i),
//                                   s.learning_rate, s.g, weight_decay, decays(first + i)))
// where s = *state and T is the storage type of `type` (fp16/bf16 are
// widened, updated in fp32 and rounded back to nearest even). Nothing
// changes when s.learning_rate == 0 (no update pending), decided on the
// device.
//   state         DEVICE pointer to the pending update (written by
//                 LaunchProjectedGradient); read by the kernel when it runs.
//   z_stream      the part's Philox stream (zo_math.h BlockStream ...).
//   spans         the part's decay spans (0 <= spans.count <= kMaxDecaySpans).
//   weight_decay  λ (>= 0), applied to elements whose span decays.
//   first         the element index of theta[0] within the part (>= 0; any
//                 alignment; first + count must stay below 2^63).
//   count         elements (>= 0).
//   theta         device, `count` elements of `type`, updated in place.
// Only enqueues on `stream`. Returns cudaErrorInvalidValue (nothing launched)
// for first < 0, count < 0, spans.count outside [0, kMaxDecaySpans] or an
// unknown type; cudaSuccess for count == 0 (nothing enqueued); otherwise
// cudaGetLastError() after the launch.
cudaError_t LaunchUpdate(ElementType type, const ZoState* state, uint32_t z_stream,
                         const DecaySpanTable& spans, float weight_decay, int64_t first,
                         int64_t count, void* theta, cudaStream_t stream);

}  // namespace zosched
