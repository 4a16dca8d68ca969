// LaunchPerturb, LaunchPerturbRows and LaunchGatherRows (perturb.h).
//
// z comes in Philox groups of four consecutive element indices (normal.h:
// one Philox call and two Box-Muller pairs yield z of elements 4g .. 4g+3),
// so each thread takes one whole group and uses it for the elements of the
// group that lie in its range: a quarter of the Philox calls and half the
// Box-Muller work of one StandardNormal per element, same bits.
#include "runtime/cuda/zo/perturb.h"

#include "runtime/cuda/zo/launch_grid.h"
#include "runtime/dtype/element.h"
#include "runtime/zo/normal.h"
#include "runtime/zo/zo_math.h"

namespace zosched {
namespace {

using zo_grid::Blocks;
using zo_grid::kMaxBlocks;
using zo_grid::kThreads;

// The number of Philox groups that elements [first, first + count) touch
// (count >= 1).
int64_t Groups(int64_t first, int64_t count) {
  return ((first + count - 1) >> 2) - (first >> 2) + 1;
}

}  // namespace

// out[i] = θ[i] ± εz(first + i) for i in [0, count); thread k of the
// grid-stride loop handles Philox group first/4 + k.
template <class T>
static __global__ void PerturbKernel(uint64_t seed, uint32_t z_stream, int64_t first, int64_t count,
                                     int64_t groups, const T* theta, float eps, int sign, T* out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < groups;
       k += stride) {
    const int64_t group = (first >> 2) + k;
    float z[4];
    StandardNormal4(seed, z_stream, static_cast<uint64_t>(group), z);
    for (int lane = 0; lane < 4; ++lane) {
      const int64_t i = 4 * group + lane - first;  // position in theta/out
      if (i < 0 || i >= count) continue;
      out[i] = FromFloat<T>(Perturbed(ToFloat(theta[i]), z[lane], eps, sign));
    }
  }
}

// Gathered rows: grid y strides over output rows r, grid x over the Philox
// groups that table row rows[r] touches (at most `row_groups`).
template <class T>
static __global__ void PerturbRowsKernel(uint64_t seed, uint32_t z_stream, int64_t table_first,
                                         const T* table, int64_t row_width, const int32_t* rows,
                                         int64_t n_rows, int64_t row_groups, float eps, int sign,
                                         T* out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = blockIdx.y; r < n_rows; r += gridDim.y) {
    const int64_t row_at = static_cast<int64_t>(rows[r]) * row_width;  // in `table`
    const int64_t first = table_first + row_at;  // z index of the row's first element
    const T* theta = table + row_at;
    T* row_out = out + r * row_width;
    for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < row_groups;
         k += stride) {
      const int64_t group = (first >> 2) + k;
      if (4 * group >= first + row_width) break;  // this row touches fewer groups
      float z[4];
      StandardNormal4(seed, z_stream, static_cast<uint64_t>(group), z);
      for (int lane = 0; lane < 4; ++lane) {
        const int64_t j = 4 * group + lane - first;  // column in the row
        if (j < 0 || j >= row_width) continue;
        row_out[j] = FromFloat<T>(Perturbed(ToFloat(theta[j]), z[lane], eps, sign));
      }
    }
  }
}

// Gathered rows copied: grid y strides over output rows r, grid x over
// the row's columns.
template <class T>
static __global__ void GatherRowsKernel(const T* table, int64_t row_width, const int32_t* rows,
                                        int64_t n_rows, T* out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = blockIdx.y; r < n_rows; r += gridDim.y) {
    const T* row = table + static_cast<int64_t>(rows[r]) * row_width;
    T* row_out = out + r * row_width;
    for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < row_width;
         j += stride) {
      row_out[j] = row[j];
    }
  }
}

template <class T>
static cudaError_t PerturbAs(uint64_t seed, uint32_t z_stream, int64_t first, int64_t count,
                             const void* theta, float eps, int sign, void* out,
                             cudaStream_t stream) {
  const int64_t groups = Groups(first, count);
  PerturbKernel<T><<<Blocks(groups), kThreads, 0, stream>>>(seed, z_stream, first, count, groups,
                                                            static_cast<const T*>(theta), eps, sign,
                                                            static_cast<T*>(out));
  return cudaGetLastError();
}

template <class T>
static cudaError_t PerturbRowsAs(uint64_t seed, uint32_t z_stream, int64_t table_first,
                                 const void* table, int64_t row_width, const int32_t* rows,
                                 int64_t n_rows, float eps, int sign, void* out,
                                 cudaStream_t stream) {
  // A row of row_width elements touches at most ceil((row_width + 3) / 4)
  // groups (when it starts on the last lane of one).
  const int64_t row_groups = (row_width + 6) / 4;
  const dim3 grid(Blocks(row_groups),
                  static_cast<unsigned>(n_rows < kMaxBlocks ? n_rows : kMaxBlocks));
  PerturbRowsKernel<T><<<grid, kThreads, 0, stream>>>(
      seed, z_stream, table_first, static_cast<const T*>(table), row_width, rows, n_rows,
      row_groups, eps, sign, static_cast<T*>(out));
  return cudaGetLastError();
}

template <class T>
static cudaError_t GatherRowsAs(const void* table, int64_t row_width, const int32_t* rows,
                                int64_t n_rows, void* out, cudaStream_t stream) {
  const dim3 grid(Blocks(row_width),
                  static_cast<unsigned>(n_rows < kMaxBlocks ? n_rows : kMaxBlocks));
  GatherRowsKernel<T><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(table), row_width,
                                                     rows, n_rows, static_cast<T*>(out));
  return cudaGetLastError();
}

cudaError_t LaunchPerturb(ElementType type, uint64_t seed, uint32_t z_stream, int64_t first,
                          int64_t count, const void* theta, float eps, int sign, void* out,
                          cudaStream_t stream) {
  if (first < 0 || count < 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  switch (type) {
    case ElementType::kF32:
      return PerturbAs<float>(seed, z_stream, first, count, theta, eps, sign, out, stream);
    case ElementType::kF16:
      return PerturbAs<Half>(seed, z_stream, first, count, theta, eps, sign, out, stream);
    case ElementType::kBF16:
      return PerturbAs<BFloat16>(seed, z_stream, first, count, theta, eps, sign, out, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchPerturbRows(ElementType type, uint64_t seed, uint32_t z_stream,
                              int64_t table_first, const void* table, int64_t row_width,
                              const int32_t* rows, int64_t n_rows, float eps, int sign, void* out,
                              cudaStream_t stream) {
  if (table_first < 0 || row_width < 0 || n_rows < 0) return cudaErrorInvalidValue;
  if (row_width == 0 || n_rows == 0) return cudaSuccess;
  switch (type) {
    case ElementType::kF32:
      return PerturbRowsAs<float>(seed, z_stream, table_first, table, row_width, rows, n_rows, eps,
                                  sign, out, stream);
    case ElementType::kF16:
      return PerturbRowsAs<Half>(seed, z_stream, table_first, table, row_width, rows, n_rows, eps,
                                 sign, out, stream);
    case ElementType::kBF16:
      return PerturbRowsAs<BFloat16>(seed, z_stream, table_first, table, row_width, rows, n_rows,
                                     eps, sign, out, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchGatherRows(ElementType type, const void* table, int64_t row_width,
                             const int32_t* rows, int64_t n_rows, void* out, cudaStream_t stream) {
  if (row_width < 0 || n_rows < 0) return cudaErrorInvalidValue;
  if (row_width == 0 || n_rows == 0) return cudaSuccess;
  switch (type) {
    case ElementType::kF32:
      return GatherRowsAs<float>(table, row_width, rows, n_rows, out, stream);
    case ElementType::kF16:
      return GatherRowsAs<Half>(table, row_width, rows, n_rows, out, stream);
    case ElementType::kBF16:
      return GatherRowsAs<BFloat16>(table, row_width, rows, n_rows, out, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace zosched
