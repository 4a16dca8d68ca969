// MeZO's per-element math (runtime/zo/zo_math.h) over ranges of a part's
// elements on the CPU: z regenerated in chunks from (seed, stream, element
// index), so a range gives the same bits however a part is sliced, and
// whatever the team of threads that shares it (null: the calling thread).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/model_parts.h"
#include "runtime/nn/thread_team.h"
#include "runtime/zo/zo_state.h"

namespace zosched {

// out[i] = θ[i] ± ε z(first + i) for i in [0, count): the perturbed copy of
// elements [first, first + count) of stream `stream` (θ at `theta`; `out`
// must not overlap it: perturbation is out of place).
void PerturbRange(uint64_t seed, uint32_t stream, int64_t first, int64_t count,
                  const float* theta, float eps, int sign, float* out,
                  ThreadTeam* team = nullptr);

// θ[i] ← UpdatedAlong(θ[i], DirectionsMean(DirectionsSum(g, z(first + i),
// q), q), η, λ, decays(first + i)) for i in [0, count), in place (with q = 1
// Updated(θ[i], z(first + i), η, g, λ, ...)): the pending update of
// `directions` = q directions, `pending[0 .. q)` each with its seed and g
// (zo_state.h), over elements [first, first + count) of a part whose decay
// spans are `spans` (DecaySpans of its tensors). Nothing when
// pending[0].learning_rate is 0.
void UpdateRange(const ZoState* pending, int directions, uint32_t stream,
                 const std::vector<DecaySpan>& spans, float weight_decay, int64_t first,
                 int64_t count, float* theta, ThreadTeam* team = nullptr);

}  // namespace zosched
