#include "runtime/checkpoint/non_finite.h"

#include <cstring>

#include "base/check.h"

namespace zosched {
namespace {

// `lane` (the low 8 * `bytes` bits) repeated across a 64-bit word.
uint64_t Replicate(uint64_t lane, int bytes) {
  uint64_t word = 0;
  for (int at = 0; at < 8; at += bytes) word |= lane << (8 * at);
  return word;
}

// The first of `n` elements of `bytes` bytes at `data` whose bits under
// `exponent` are all set (NaN or ±Inf), or -1.
//
// Eight bytes at a time, every lane at once: (x & exponent) + its lowest
// bit carries into the lane's sign bit exactly when the exponent is all
// ones, and never beyond the lane. Blocks of words are OR-ed without a
// branch; the exact index is looked for from the first block that holds
// one (or the tail that is not a whole block).
int64_t FirstWithFullExponent(const unsigned char* data, int64_t n, int bytes,
                              uint32_t exponent) {
  const uint64_t full = Replicate(exponent, bytes);
  const uint64_t lowest = Replicate(exponent & (~exponent + 1), bytes);
  const uint64_t sign = Replicate(uint64_t{1} << (8 * bytes - 1), bytes);
  constexpr int64_t kWords = 256;
  const int64_t words = n * bytes / 8;
  int64_t word = 0;
  for (; word + kWords <= words; word += kWords) {
    uint64_t carries = 0;
    for (int64_t i = word; i < word + kWords; ++i) {
      uint64_t x;
      std::memcpy(&x, data + 8 * i, 8);
      carries |= (x & full) + lowest;
    }
    if (carries & sign) break;
  }
  for (int64_t i = word * 8 / bytes; i < n; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, data + i * bytes, bytes);  // little-endian, as stored
    if ((bits & exponent) == exponent) return i;
  }
  return -1;
}

}  // namespace

int64_t FirstNonFinite(DType dtype, const void* data, int64_t n) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  switch (dtype) {
    case FP32:
      return FirstWithFullExponent(bytes, n, 4, 0x7f800000u);
    case FP16:
      return FirstWithFullExponent(bytes, n, 2, 0x7c00u);
    case BF16:
      return FirstWithFullExponent(bytes, n, 2, 0x7f80u);
    default:
      CHECK(false) << "FirstNonFinite: dtype " << DType_Name(dtype) << " is not FP32/FP16/BF16";
      return -1;
  }
}

}  // namespace zosched
