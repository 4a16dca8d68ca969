#include "runtime/zo_ranges.h"

#include <algorithm>

#include "runtime/zo/normal.h"
#include "runtime/zo/zo_math.h"

namespace zosched {
namespace {

constexpr int64_t kZChunk = 4096;  // normals generated at a time

// fn(offset, z, n) for consecutive chunks of [first, first + count) of
// `stream`, in order: z[i] is the normal of element first + offset + i,
// generated into a per-thread buffer.
template <typename Fn>
void ForEachNormalChunk(uint64_t seed, uint32_t stream, int64_t first, int64_t count, Fn fn) {
  thread_local std::vector<float> z(kZChunk);
  for (int64_t done = 0; done < count; done += kZChunk) {
    const int64_t n = std::min(kZChunk, count - done);
    FillNormals(seed, stream, first + done, n, z.data());
    fn(done, z.data(), n);
  }
}

// The per-element loops, over arrays that do not overlap, so that the
// compiler vectorises them (this file is built with the full vectoriser
// cost model): lane-wise the same correctly rounded operations, so the same
// bits as one element at a time.
void PerturbChunk(const float* __restrict theta, const float* __restrict z, int64_t n, float eps,
                  int sign, float* __restrict out) {
  for (int64_t i = 0; i < n; ++i) out[i] = Perturbed(theta[i], z[i], eps, sign);
}

void UpdateChunk(const float* __restrict z, int64_t n, const ZoState& pending, float weight_decay,
                 bool decays, float* __restrict theta) {
  const float lr = pending.learning_rate, g = pending.g;
  // One loop per value of `decays`, so that neither has a branch.
  if (decays) {
    for (int64_t i = 0; i < n; ++i) theta[i] = Updated(theta[i], z[i], lr, g, weight_decay, true);
  } else {
    for (int64_t i = 0; i < n; ++i) theta[i] = Updated(theta[i], z[i], lr, g, weight_decay, false);
  }
}

// Several directions: gz accumulates g_i z_i direction by direction
// (DirectionsSum's order), then the mean and the update.
void AccumulateChunk(const float* __restrict z, int64_t n, float g, bool first,
                     float* __restrict gz) {
  if (first) {
    for (int64_t i = 0; i < n; ++i) gz[i] = hd::MulRn(g, z[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) gz[i] = hd::AddRn(gz[i], hd::MulRn(g, z[i]));
  }
}

void UpdateAlongChunk(const float* __restrict gz, int64_t n, int q, float lr, float weight_decay,
                      bool decays, float* __restrict theta) {
  if (decays) {
    for (int64_t i = 0; i < n; ++i) {
      theta[i] = UpdatedAlong(theta[i], DirectionsMean(gz[i], q), lr, weight_decay, true);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      theta[i] = UpdatedAlong(theta[i], DirectionsMean(gz[i], q), lr, weight_decay, false);
    }
  }
}

}  // namespace

void PerturbRange(uint64_t seed, uint32_t stream, int64_t first, int64_t count,
                  const float* theta, float eps, int sign, float* out, ThreadTeam* team) {
  ParallelFor(team, count, kZChunk, [&](int64_t begin, int64_t end, int) {
    ForEachNormalChunk(seed, stream, first + begin, end - begin,
                       [&](int64_t offset, const float* z, int64_t n) {
                         const int64_t at = begin + offset;
                         PerturbChunk(theta + at, z, n, eps, sign, out + at);
                       });
  });
}

void UpdateRange(const ZoState* pending, int directions, uint32_t stream,
                 const std::vector<DecaySpan>& spans, float weight_decay, int64_t first,
                 int64_t count, float* theta, ThreadTeam* team) {
  if (pending[0].learning_rate == 0) return;
  ParallelFor(team, count, kZChunk, [&](int64_t begin, int64_t end, int) {
    thread_local std::vector<float> gz(kZChunk);
    for (const DecaySpan& span : spans) {
      const int64_t lo = std::max(first + begin, span.begin);
      const int64_t hi = std::min(first + end, span.end);
      if (lo >= hi) continue;
      float* out = theta + (lo - first);
      if (directions == 1) {
        ForEachNormalChunk(pending[0].seed, stream, lo, hi - lo,
                           [&](int64_t offset, const float* z, int64_t n) {
                             UpdateChunk(z, n, pending[0], weight_decay, span.decays,
                                         out + offset);
                           });
        continue;
      }
      for (int64_t at = lo; at < hi; at += kZChunk) {  // one gz chunk at a time
        const int64_t n = std::min(kZChunk, hi - at);
        for (int d = 0; d < directions; ++d) {
          ForEachNormalChunk(pending[d].seed, stream, at, n,
                             [&](int64_t offset, const float* z, int64_t m) {
                               AccumulateChunk(z, m, pending[d].g, d == 0, gz.data() + offset);
                             });
        }
        UpdateAlongChunk(gz.data(), n, directions, pending[0].learning_rate, weight_decay,
                         span.decays, out + (at - lo));
      }
    }
  });
}

}  // namespace zosched
