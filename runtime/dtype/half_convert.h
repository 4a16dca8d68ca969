// Conversions between fp32 and the 16-bit float formats fp16 (IEEE binary16)
// and bf16 (bfloat16), one element at a time (bulk conversion of buffers:
// convert.h).
//
// The functions are header-only and `__host__ __device__` under
// nvcc, so CPU tests cover exactly the math CUDA kernels run. They use only
// integer bit manipulation (no libm, no hardware conversion instructions), so
// results are bitwise identical on every host and device.
//
// 16-bit values travel as their bit patterns in a uint16_t.
//
// Semantics:
// - fp16/bf16 -> fp32 is exact for every input: subnormals become normal
//   fp32 values, ±inf stays ±inf, NaN stays NaN with its sign and payload
//   (shifted into the top of the fp32 mantissa).
// - fp32 -> fp16/bf16 rounds to nearest, ties to even. Values beyond the
//   largest finite value (after rounding) become ±inf; tiny values become
//   subnormals or ±0. NaN stays NaN: the sign and the top mantissa bits are
//   kept; if those bits are all zero the quiet bit is set, so a NaN never
//   turns into inf. Hence every fp16 and bf16 bit pattern, NaNs included,
//   round-trips through fp32 bitwise.
#pragma once

#include <cstdint>
#include <cstring>

#include "base/hd.h"

namespace zosched {

// fp16 bits -> fp32, exact.
ZS_HD inline float Fp16ToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {  // inf (mantissa 0) or NaN (payload kept)
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent == 0) {
    // ±0 or a subnormal, mantissa * 2^-24: exact in fp32 arithmetic (an
    // integer below 2^10 times a power of two, the product normal), and
    // without a per-bit loop, which on a GPU holds back every lane of a
    // warp that meets one.
    bits = sign | hd::FloatToBits(static_cast<float>(mantissa) * 5.9604644775390625e-8f);
  } else {
    bits = sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13);
  }
  return hd::BitsToFloat(bits);
}

// fp32 -> fp16 bits, round to nearest even.
ZS_HD inline uint16_t FloatToFp16(float x) {
  const uint32_t bits = hd::FloatToBits(x);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    if (abs == 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u);
    uint32_t payload = (abs >> 13) & 0x3ffu;
    if (payload == 0) payload = 0x200u;  // keep it a NaN
    return static_cast<uint16_t>(sign | 0x7c00u | payload);
  }
  // 65520 = 0x477ff000 is halfway between the largest finite fp16 (65504,
  // odd mantissa) and 65536: ties go to the even neighbour, which is inf.
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (abs < 0x38800000u) {  // below 2^-14: fp16 subnormal or zero
    const uint32_t e = abs >> 23;
    // Below 2^-25 (half the smallest subnormal) everything rounds to zero;
    // exactly 2^-25 ties to even, also zero, and is handled below.
    if (e < 102) return static_cast<uint16_t>(sign);
    // Value = m24 * 2^(e-150); in units of 2^-24 that is m24 >> (126 - e).
    const uint32_t m24 = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t m = m24 >> shift;
    const uint32_t rest = m24 & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (m & 1u))) ++m;  // may carry to 0x400:
    return static_cast<uint16_t>(sign | m);              // the smallest normal
  }
  // Normal: rebias the exponent, then round away the low 13 mantissa bits.
  // A carry out of the mantissa correctly increments the exponent.
  const uint32_t rebiased = abs - ((127u - 15u) << 23);
  uint32_t m = rebiased >> 13;
  const uint32_t rest = rebiased & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (m & 1u))) ++m;
  return static_cast<uint16_t>(sign | m);
}

// bf16 bits -> fp32, exact.
ZS_HD inline float Bf16ToFloat(uint16_t b) {
  return hd::BitsToFloat(static_cast<uint32_t>(b) << 16);
}

// fp32 -> bf16 bits, round to nearest even (subnormals included: bf16 has
// fp32's exponent range, so rounding the low 16 bits is the whole story; a
// carry into the exponent field yields the next binade or inf).
ZS_HD inline uint16_t FloatToBf16(float x) {
  const uint32_t bits = hd::FloatToBits(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {  // NaN
    uint32_t b = bits >> 16;
    if ((b & 0x7fu) == 0) b |= 0x40u;  // keep it a NaN
    return static_cast<uint16_t>(b);
  }
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

}  // namespace zosched
