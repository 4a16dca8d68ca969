// LaunchUpdate (update.h).
//
// As in perturb.cu, each thread takes one Philox group of four consecutive
// element indices (one StandardNormal4 call) and updates the elements of
// that group that lie in the range.
#include "runtime/cuda/zo/update.h"

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

// theta[i] = Updated(theta[i], z(first + i), ...) for i in [0, count); thread
// k of the grid-stride loop handles Philox group first/4 + k. The span table
// stays in the kernel's parameter space (__grid_constant__: no per-thread copy).
template <class T>
static __global__ void UpdateKernel(const ZoState* state, uint32_t z_stream,
                                    const __grid_constant__ DecaySpanTable spans,
                                    float weight_decay, int64_t first, int64_t count,
                                    int64_t groups, T* theta) {
  const ZoState s = *state;
  if (s.learning_rate == 0) return;  // nothing pending
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < groups;
       k += stride) {
    const int64_t group = (first >> 2) + k;
    float z[4];
    StandardNormal4(s.seed, z_stream, static_cast<uint64_t>(group), z);
    for (int lane = 0; lane < 4; ++lane) {
      const int64_t index = 4 * group + lane;  // within the part
      const int64_t i = index - first;         // within theta
      if (i < 0 || i >= count) continue;
      const int span = SpanOf(spans, index);
      if (span < 0) continue;  // in no span: UpdateRange leaves it too
      theta[i] = FromFloat<T>(Updated(ToFloat(theta[i]), z[lane], s.learning_rate, s.g,
                                      weight_decay, spans.decays[span]));
    }
  }
}

template <class T>
static cudaError_t UpdateAs(const ZoState* state, uint32_t z_stream, const DecaySpanTable& spans,
                            float weight_decay, int64_t first, int64_t count, void* theta,
                            cudaStream_t stream) {
  const int64_t groups = ((first + count - 1) >> 2) - (first >> 2) + 1;
  UpdateKernel<T><<<Blocks(groups), kThreads, 0, stream>>>(
      state, z_stream, spans, weight_decay, first, count, groups, static_cast<T*>(theta));
  return cudaGetLastError();
}

cudaError_t LaunchUpdate(ElementType type, const ZoState* state, uint32_t z_stream,
                         const DecaySpanTable& spans, float weight_decay, int64_t first,
                         int64_t count, void* theta, cudaStream_t stream) {
  if (first < 0 || count < 0 || spans.count < 0 || spans.count > kMaxDecaySpans) {
    return cudaErrorInvalidValue;
  }
  if (count == 0) return cudaSuccess;
  switch (type) {
    case ElementType::kF32:
      return UpdateAs<float>(state, z_stream, spans, weight_decay, first, count, theta, stream);
    case ElementType::kF16:
      return UpdateAs<Half>(state, z_stream, spans, weight_decay, first, count, theta, stream);
    case ElementType::kBF16:
      return UpdateAs<BFloat16>(state, z_stream, spans, weight_decay, first, count, theta, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace zosched
