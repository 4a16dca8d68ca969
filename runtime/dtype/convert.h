// Bulk conversion of buffers between fp32 and the 16-bit float formats fp16
// and bf16, by DType; one element at a time, with the exact semantics of
// half_convert.h (whose per-element functions this header re-exports).
#pragma once

#include <cstdint>

#include "models/model.pb.h"
#include "runtime/dtype/half_convert.h"

namespace zosched {

// Converts `n` elements at `src`, of type `from`, into `n` elements of type
// `to` at `dst` (FP32, FP16 or BF16 each; 16-bit types as bit patterns).
// Each element goes through fp32: exact widening, round-to-nearest-even
// narrowing (see above). from == to copies the bytes. Neither pointer needs
// any alignment. `src` and `dst` must not overlap unless they are equal and
// from == to. CHECK-fails on DTYPE_UNSPECIFIED or an unknown enum value (a
// bug: outside input is validated before it gets here).
void ConvertBuffer(DType from, const void* src, DType to, void* dst, int64_t n);

}  // namespace zosched
