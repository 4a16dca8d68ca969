// The out-of-place MeZO perturbation θ± = θ ± εz on the GPU
// (docs/ARCHITECTURE.md, 'The algorithms' and 'Determinism contract'):
// zo_math.h's Perturbed over ranges of a part's elements, z regenerated on
// the device from (step seed, stream, element index) by normal.h, so the
// result is bitwise what the CPU backend computes (runtime/zo_ranges.h
// PerturbRange) for any slicing of the part.
//
// Launchers only enqueue work on `stream`; they never synchronize. Each
// returns cudaErrorInvalidValue for an argument outside its contract
// (nothing launched), otherwise cudaGetLastError() after the launch (so an
// earlier sticky error on the device is reported too). A launch with no
// elements enqueues nothing and returns cudaSuccess.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/dtype/element.h"

namespace zosched {

// For i in [0, count):
//   out[i] = FromFloat<T>(Perturbed(ToFloat(theta[i]),
//                                   StandardNormal(seed, z_stream, first + i), eps, sign))
// with T the storage type of `type` (fp32, fp16 or bf16; the arithmetic is in
// fp32, 16-bit results rounded to nearest even).
//   seed      the step seed (zo_math.h StepSeed).
//   z_stream  the part's Philox stream (BlockStream / EmbeddingStream / HeadStream).
//   first     the element index of theta[0] within its part (>= 0; any
//             alignment; first + count must stay below 2^63).
//   count     elements (>= 0).
//   theta     device, `count` elements of `type`, the unperturbed parameters.
//   eps       ε > 0, in parameter units per unit z.
//   sign      +1 or -1 (any value < 0 counts as -1).
//   out       device, `count` elements of `type`; must not overlap theta
//             unless out == theta (in place is allowed: each element is read
//             once, by the thread that writes it).
// Errors: cudaErrorInvalidValue for first < 0, count < 0 or an unknown type.
cudaError_t LaunchPerturb(ElementType type, uint64_t seed, uint32_t z_stream, int64_t first,
                          int64_t count, const void* theta, float eps, int sign, void* out,
                          cudaStream_t stream);

// The perturbed copies of gathered rows of a table (the token embedding
// rows of a batch, the tied LM head's label-word rows): for r in
// [0, n_rows) and j in [0, row_width), with t = rows[r],
//   out[r * row_width + j] = FromFloat<T>(Perturbed(ToFloat(table[t * row_width + j]),
//                            StandardNormal(seed, z_stream, table_first + t * row_width + j),
//                            eps, sign))
// i.e. each output row is PerturbRange of table row t, whatever r it lands in
// (a row listed twice is perturbed twice, identically).
//   table_first  the element index of table[0] within its part's z stream (>= 0).
//   table        device, the whole table of `type` elements, row-major, rows
//                of `row_width` elements.
//   row_width    elements per row (>= 0).
//   rows         device, `n_rows` int32 row indices, each a valid row of the
//                table (not checked: the kernel cannot know the table's size).
//   n_rows       rows to gather (>= 0).
//   out          device, n_rows * row_width elements of `type`, not
//                overlapping `table`.
// seed, z_stream, eps, sign as for LaunchPerturb.
// Errors: cudaErrorInvalidValue for table_first < 0, row_width < 0,
// n_rows < 0 or an unknown type.
cudaError_t LaunchPerturbRows(ElementType type, uint64_t seed, uint32_t z_stream,
                              int64_t table_first, const void* table, int64_t row_width,
                              const int32_t* rows, int64_t n_rows, float eps, int sign, void* out,
                              cudaStream_t stream);

// The rows LaunchPerturbRows would perturb, copied as they are (LoRA's
// frozen token embedding and LM head rows, perturbation.h frozen_params):
// for r in [0, n_rows) and j in [0, row_width),
//   out[r * row_width + j] = table[rows[r] * row_width + j]
// bitwise, no z drawn. table, row_width, rows, n_rows and out as for
// LaunchPerturbRows.
// Errors: cudaErrorInvalidValue for row_width < 0, n_rows < 0 or an
// unknown type.
cudaError_t LaunchGatherRows(ElementType type, const void* table, int64_t row_width,
                             const int32_t* rows, int64_t n_rows, void* out, cudaStream_t stream);

}  // namespace zosched
