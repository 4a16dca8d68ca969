// Rows of one example with a prefix's rows in front, on the GPU: how the
// causal attention (attention.h) lays out an example's queries, keys and
// values over a prefix (prefix tuning, runtime/nn/block_prefix.h) so that
// the prefix is the first keys and values its products read.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/dtype/element.h"

namespace zosched {

// One array JoinPrefixRows writes. Elements of the call's type, device.
struct PrefixJoin {
  const void* prefix = nullptr;  // [prefix_rows, width], dense; nullptr: zero rows
  const void* rows = nullptr;    // [seq rows, ld elements apart], their first `width`
  int64_t ld = 0;                // elements between rows of `rows`: >= width
  int64_t width = 0;             // elements of a row: >= 1
  void* out = nullptr;           // [prefix_rows + seq, width], dense, written
};

// An attention's queries, keys and values: the most arrays one call joins.
constexpr int kMaxPrefixJoins = 3;

// For each join j < count, row r < prefix_rows + seq and column c < width:
//   out[r · width + c] = prefix[r · width + c]            for r < prefix_rows
//                        (0 when prefix is nullptr)
//                        rows[(r - prefix_rows) · ld + c] for r >= prefix_rows
// copied as they are (no rounding). `out` must overlap no input. Enqueued
// on `stream` (one launch for all joins). Returns cudaErrorInvalidValue for
// count outside [1, kMaxPrefixJoins], prefix_rows < 0, seq < 1, a join
// without rows or out, with width < 1 or ld < width, or an unknown type;
// else the launch's error.
cudaError_t JoinPrefixRows(ElementType type, const PrefixJoin* joins, int count,
                           int64_t prefix_rows, int64_t seq, cudaStream_t stream);

}  // namespace zosched
