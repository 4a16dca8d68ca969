// e^x for per-element math that must give the same bits on the host and the
// device (hd.h's contract): built from correctly rounded +, -, * and floor
// only, in a fixed order, where the libraries' expf differ in the last bits
// (glibc's and CUDA's libdevice round differently).
//
// Method: n = the nearest integer to x · log2(e); r = x - n · ln2 (Cody and
// Waite's split of ln2, so that n · kLn2Hi is exact), |r| <= 0.35 about;
// e^r by its Taylor series to r^7 (remainder below 6e-9 relatively), by
// Horner; then scaled by 2^n as two exact powers of two, so that only the
// last product rounds (to a subnormal, or to infinity past FLT_MAX).
// Accuracy: within 2 ulp of e^x wherever e^x is a normal float (hd_exp_test
// checks a dense grid against double-precision exp and gives the measured
// worst case). NaN stays NaN; e^+inf = +inf, e^-inf = 0.
#pragma once

#include <math.h>

#include <cstdint>

#include "base/hd.h"

namespace zosched {
namespace hd {

namespace exp_internal {
constexpr float kLog2E = 1.44269502f;
// ln 2 split so that n · kLn2Hi is exact for |n| < 2^9: kLn2Hi has 15
// significant bits (0x3f317200); kLn2Hi + kLn2Lo = ln 2 to about 5e-14.
constexpr float kLn2Hi = 0.693145751953125f;
constexpr float kLn2Lo = 1.42860682e-06f;
// Past these, e^x is +inf, or 0 (below half the least subnormal, 2^-150).
constexpr float kOverflow = 89.0f;
constexpr float kUnderflow = -104.0f;

// 2^k for k in [-126, 127], exactly.
ZS_HD inline float PowerOfTwo(int32_t k) { return BitsToFloat(static_cast<uint32_t>(k + 127) << 23); }
}  // namespace exp_internal

ZS_HD inline float ExpF(float x) {
  using namespace exp_internal;
  if (!(x == x)) return x;
  if (x > kOverflow) return BitsToFloat(0x7f800000u);
  if (x < kUnderflow) return 0.0f;
  const float n = floorf(AddRn(MulRn(x, kLog2E), 0.5f));  // exact integer in [-150, 129]
  const float r = SubRn(SubRn(x, MulRn(n, kLn2Hi)), MulRn(n, kLn2Lo));
  float p = 1.0f / 5040.0f;
  p = AddRn(MulRn(p, r), 1.0f / 720.0f);
  p = AddRn(MulRn(p, r), 1.0f / 120.0f);
  p = AddRn(MulRn(p, r), 1.0f / 24.0f);
  p = AddRn(MulRn(p, r), 1.0f / 6.0f);
  p = AddRn(MulRn(p, r), 0.5f);
  p = AddRn(MulRn(p, r), 1.0f);
  p = AddRn(MulRn(p, r), 1.0f);  // e^r in [0.70, 1.42]
  const int32_t k = static_cast<int32_t>(n);
  const int32_t k1 = k / 2;  // both halves in [-75, 65]: normal powers of two
  return MulRn(MulRn(p, PowerOfTwo(k1)), PowerOfTwo(k - k1));
}

}  // namespace hd
}  // namespace zosched
