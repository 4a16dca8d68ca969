// LaunchUpdate (update.h).
//
// As in perturb.cu, each thread takes one Philox group of four consecutive
// element indices (one StandardNormal4 call per direction) and updates the
// elements of that group that lie in the range.
#include "runtime/cuda/zo/update.h"

#include "base/hd.h"
#include "runtime/cuda/zo/launch_grid.h"
#include "runtime/dtype/element.h"
#include "runtime/zo/normal.h"
#include "runtime/zo/zo_math.h"
#include "runtime/zo/zo_state.h"

namespace zosched {

using zo_grid::Blocks;
using zo_grid::kThreads;

// The span of `spans` holding element `index`, or -1 if none does: binary
// search for the last span with begin <= index (spans sorted and disjoint).
static __device__ int SpanOf(const DecaySpanTable& spans, int64_t index) {
  int lo = 0, hi = spans.count;  // finds the first span with begin > index
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (spans.begin[mid] <= index) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  const int s = lo - 1;
  return s >= 0 && index < spans.end[s] ? s : -1;
}

// theta[i] = UpdatedAlong(theta[i], gz(first + i), ...) for i in [0, count),
// gz the mean of g_d z_d over the q directions; thread k of the grid-stride
// loop handles Philox group first/4 + k: one StandardNormal4 per direction,
// accumulated into the group's four gz in direction order (DirectionsSum's
// operations, lane by lane), so registers stay four floats whatever q. The
// span table stays in the kernel's parameter space (__grid_constant__: no
// per-thread copy).
template <class T>
static __global__ void UpdateKernel(const ZoState* __restrict__ state, int directions,
                                    uint32_t z_stream,
                                    const __grid_constant__ DecaySpanTable spans,
                                    float weight_decay, int64_t first, int64_t count,
                                    int64_t groups, T* __restrict__ theta) {
  const float lr = state[0].learning_rate;  // every entry carries the step's η
  if (lr == 0) return;                      // nothing pending
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < groups;
       k += stride) {
    const int64_t group = (first >> 2) + k;
    float gz[4];  // DirectionsSum of the group's four elements
    {
      const ZoState s = state[0];
      float z[4];
      StandardNormal4(s.seed, z_stream, static_cast<uint64_t>(group), z);
#pragma unroll
      for (int lane = 0; lane < 4; ++lane) gz[lane] = hd::MulRn(s.g, z[lane]);
    }
    for (int d = 1; d < directions; ++d) {
      const ZoState s = state[d];
      float z[4];
      StandardNormal4(s.seed, z_stream, static_cast<uint64_t>(group), z);
#pragma unroll
      for (int lane = 0; lane < 4; ++lane) {
        gz[lane] = hd::AddRn(gz[lane], hd::MulRn(s.g, z[lane]));
      }
    }
#pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const int64_t index = 4 * group + lane;  // within the part
      const int64_t i = index - first;         // within theta
      if (i < 0 || i >= count) continue;
      const int span = SpanOf(spans, index);
      if (span < 0) continue;  // in no span: UpdateRange leaves it too
      theta[i] = FromFloat<T>(UpdatedAlong(ToFloat(theta[i]), DirectionsMean(gz[lane], directions),
                                           lr, weight_decay, spans.decays[span]));
    }
  }
}

template <class T>
static cudaError_t UpdateAs(const ZoState* state, int directions, uint32_t z_stream,
                            const DecaySpanTable& spans, float weight_decay, int64_t first,
                            int64_t count, void* theta, cudaStream_t stream) {
  const int64_t groups = ((first + count - 1) >> 2) - (first >> 2) + 1;
  UpdateKernel<T><<<Blocks(groups), kThreads, 0, stream>>>(state, directions, z_stream, spans,
                                                           weight_decay, first, count, groups,
                                                           static_cast<T*>(theta));
  return cudaGetLastError();
}

cudaError_t LaunchUpdate(ElementType type, const ZoState* state, int directions,
                         uint32_t z_stream, const DecaySpanTable& spans, float weight_decay,
                         int64_t first, int64_t count, void* theta, cudaStream_t stream) {
  if (directions < 1 || first < 0 || count < 0 || spans.count < 0 ||
      spans.count > kMaxDecaySpans) {
    return cudaErrorInvalidValue;
  }
  if (count == 0) return cudaSuccess;
  switch (type) {
    case ElementType::kF32:
      return UpdateAs<float>(state, directions, z_stream, spans, weight_decay, first, count, theta,
                             stream);
    case ElementType::kF16:
      return UpdateAs<Half>(state, directions, z_stream, spans, weight_decay, first, count, theta,
                            stream);
    case ElementType::kBF16:
      return UpdateAs<BFloat16>(state, directions, z_stream, spans, weight_decay, first, count,
                                theta, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace zosched
