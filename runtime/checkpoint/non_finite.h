// Finding NaN and ±Inf among stored parameter values: a checkpoint that holds
// one cannot be trained from (every loss and update after it is NaN), so
// loaders refuse it, naming the element.
#pragma once

#include <cstdint>

#include "models/model.pb.h"

namespace zosched {

// The index of the first of the `n` elements at `data` that is NaN or ±Inf,
// or -1 when all are finite. `dtype` is FP32, FP16 or BF16, elements
// little-endian as stored (16-bit types as bit patterns); `data` needs no
// alignment. Reads each element once, eight bytes at a time, looking only
// at exponent bits: about 4 GB/s on one core, a fraction of what converting
// the same buffer costs. CHECK-fails on any other dtype (a bug: callers
// check the dtype first).
int64_t FirstNonFinite(DType dtype, const void* data, int64_t n);

}  // namespace zosched
