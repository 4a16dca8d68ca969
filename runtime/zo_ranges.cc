#include "runtime/zo_ranges.h"

#include <algorithm>

#include "runtime/zo/normal.h"
#include "runtime/zo/zo_math.h"

namespace zosched {
namespace {

constexpr int64_t kZChunk = 4096;  // normals generated at a time

// fn(index, z) for each element of [first, first + count) of `stream`, in
// order, z generated chunk by chunk into a per-thread buffer.
template <typename Fn>
void ForEachNormal(uint64_t seed, uint32_t stream, int64_t first, int64_t count, Fn fn) {
  thread_local std::vector<float> z(kZChunk);
  for (int64_t done = 0; done < count; done += kZChunk) {
    const int64_t n = std::min(kZChunk, count - done);
    FillNormals(seed, stream, first + done, n, z.data());
    for (int64_t i = 0; i < n; ++i) fn(first + done + i, z[i]);
  }
}

}  // namespace

void PerturbRange(uint64_t seed, uint32_t stream, int64_t first, int64_t count,
                  const float* theta, float eps, int sign, float* out, ThreadTeam* team) {
  ParallelFor(team, count, kZChunk, [&](int64_t begin, int64_t end, int) {
    ForEachNormal(seed, stream, first + begin, end - begin, [&](int64_t index, float z) {
      out[index - first] = Perturbed(theta[index - first], z, eps, sign);
    });
  });
}

void UpdateRange(const ZoState& pending, uint32_t stream, const std::vector<DecaySpan>& spans,
                 float weight_decay, int64_t first, int64_t count, float* theta,
                 ThreadTeam* team) {
  if (pending.learning_rate == 0) return;
  ParallelFor(team, count, kZChunk, [&](int64_t begin, int64_t end, int) {
    for (const DecaySpan& span : spans) {
      const int64_t lo = std::max(first + begin, span.begin);
      const int64_t hi = std::min(first + end, span.end);
      if (lo >= hi) continue;
      ForEachNormal(pending.seed, stream, lo, hi - lo, [&](int64_t index, float z) {
        float& t = theta[index - first];
        t = Updated(t, z, pending.learning_rate, pending.g, weight_decay, span.decays);
      });
    }
  });
}

}  // namespace zosched
