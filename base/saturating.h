// Saturating int64 arithmetic for sizes and costs derived from untrusted
// files: a product or sum that does not fit is INT64_MAX instead of
// undefined behaviour. Only meaningful for non-negative operands; a
// saturated figure only arises from a plan that validation refuses anyway.
#pragma once

#include <cstdint>
#include <limits>

namespace zosched {

inline int64_t SatMul(int64_t a, int64_t b) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product)) return std::numeric_limits<int64_t>::max();
  return product;
}

inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) return std::numeric_limits<int64_t>::max();
  return sum;
}

}  // namespace zosched
