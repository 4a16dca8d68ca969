// Deterministic standard normal variates z ~ N(0, 1) from Philox-4x32-10,
// bitwise identical on CPU and GPU, for any slicing of a parameter stream.
//
// Mapping (docs/ARCHITECTURE.md, 'Determinism contract'). Element `index` of
// parameter stream `stream` under step seed `seed`:
//   counter = (uint32(index / 4), uint32((index / 4) >> 32), stream, 0)
//   key     = (uint32(seed), uint32(seed >> 32))
//   (w0, w1, w2, w3) = Philox4x32_10(counter, key)
//   (z0, z1) = BoxMuller(w0, w1),  (z2, z3) = BoxMuller(w2, w3)
//   z = z[index % 4]
// BoxMuller(a, b):
//   u1 = ((a >> 8) + 1) * 2^-24   in (0, 1], exact (24-bit integer, then
//                                 a power-of-two scale); never 0, so log is finite
//   u2 = (b >> 8) * 2^-24         in [0, 1), exact
//   r  = sqrt(-2 * LogF(u1))      r <= sqrt(48 ln 2) ~= 5.77: |z| <= 5.77
//   (z_even, z_odd) = (r * cos(2 pi u2), r * sin(2 pi u2))
//
// No libm transcendental is called (logf/sinf/cosf differ between glibc and
// CUDA's libdevice): LogF and SinCos2Pi below are built from +, -, *, / and
// sqrt only, each correctly rounded, in a fixed order (see hd.h for the FMA
// contract). Accuracy, checked by normal_test.cc on dense grids against
// std::log / std::sin / std::cos in double: LogF within 2e-6 * max(1, |log x|)
// (measured 1.03e-7 over all 2^24 Box-Muller arguments and a geometric grid
// over [1e-37, 1e38]), SinCos2Pi within 2e-6 absolute (measured 8.9e-8 over
// all 2^24 angle arguments); z within 2.2e-7 * max(1, |z|) of a double-
// precision libm Box-Muller of the same Philox words.
#pragma once

#include <cstdint>

#include "base/hd.h"
#include "runtime/zo/philox.h"

namespace zosched {

namespace normal_internal {

// ln(2) split so that e * kLn2Hi is exact for |e| < 2^9: kLn2Hi has 15
// significant bits (0x3f317200); kLn2Hi + kLn2Lo = ln 2 to ~5e-14.
constexpr float kLn2Hi = 0.693145751953125f;
constexpr float kLn2Lo = 1.42860682e-06f;
constexpr float kSqrt2 = 1.41421354f;

// 2 atanh(s) = 2 s (1 + s^2/3 + s^4/5 + ... + s^10/11): the coefficients 1/k.
constexpr float kAtanh3 = 0.333333343f;
constexpr float kAtanh5 = 0.200000003f;
constexpr float kAtanh7 = 0.142857149f;
constexpr float kAtanh9 = 0.111111112f;
constexpr float kAtanh11 = 0.0909090936f;

// sin(f pi/2) and cos(f pi/2): Taylor coefficients (pi/2)^k / k! with signs.
constexpr float kSin1 = 1.57079633e+00f;    //  pi/2
constexpr float kSin3 = -6.45964098e-01f;   // -(pi/2)^3 / 3!
constexpr float kSin5 = 7.96926262e-02f;    //  (pi/2)^5 / 5!
constexpr float kSin7 = -4.68175414e-03f;   // -(pi/2)^7 / 7!
constexpr float kSin9 = 1.60441185e-04f;    //  (pi/2)^9 / 9!
constexpr float kSin11 = -3.59884324e-06f;  // -(pi/2)^11 / 11!
constexpr float kCos2 = -1.23370055e+00f;   // -(pi/2)^2 / 2!
constexpr float kCos4 = 2.53669508e-01f;    //  (pi/2)^4 / 4!
constexpr float kCos6 = -2.08634808e-02f;   // -(pi/2)^6 / 6!
constexpr float kCos8 = 9.19260275e-04f;    //  (pi/2)^8 / 8!
constexpr float kCos10 = -2.52020424e-05f;  // -(pi/2)^10 / 10!
constexpr float kCos12 = 4.71087478e-07f;   //  (pi/2)^12 / 12!

// 2^-24: scales a 24-bit integer into [0, 1], exactly.
constexpr float kTwoM24 = 5.9604644775390625e-08f;

}  // namespace normal_internal

// Natural logarithm of a positive, normal, finite float x (0, subnormals,
// infinities and NaN are outside the contract; the Box-Muller argument is in
// [2^-24, 1]). Method: x = m * 2^e with m in [sqrt(2)/2, sqrt(2)) (exponent and
// mantissa from the bits, exact); s = (m - 1) / (m + 1), |s| <= 0.1716;
// ln m = 2 atanh(s) = 2 (s + s^3/3 + ... + s^11/11) (truncation < 2e-11);
// ln x = e * ln2_hi + (ln m + e * ln2_lo).
ZS_HD inline float LogF(float x) {
  using namespace hd;
  const uint32_t bits = FloatToBits(x);
  int32_t e = static_cast<int32_t>(bits >> 23) - 127;
  float m = BitsToFloat((bits & 0x007fffffu) | 0x3f800000u);  // [1, 2)
  if (m > normal_internal::kSqrt2) {
    m = MulRn(m, 0.5f);  // exact
    e += 1;
  }
  const float num = SubRn(m, 1.0f);  // exact (Sterbenz)
  const float den = AddRn(m, 1.0f);
  const float s = DivRn(num, den);
  const float s2 = MulRn(s, s);
  // q = s2/3 + s2^2/5 + ... + s2^5/11, by Horner from the highest power.
  float p = normal_internal::kAtanh11;
  p = AddRn(MulRn(p, s2), normal_internal::kAtanh9);
  p = AddRn(MulRn(p, s2), normal_internal::kAtanh7);
  p = AddRn(MulRn(p, s2), normal_internal::kAtanh5);
  p = AddRn(MulRn(p, s2), normal_internal::kAtanh3);
  const float q = MulRn(p, s2);
  const float atanh_s = AddRn(s, MulRn(s, q));
  const float log_m = MulRn(2.0f, atanh_s);             // exact
  const float fe = static_cast<float>(e);               // exact
  const float hi = MulRn(fe, normal_internal::kLn2Hi);  // exact
  const float lo = MulRn(fe, normal_internal::kLn2Lo);
  return AddRn(hi, AddRn(log_m, lo));
}

// Sets *s = sin(2 pi u) and *c = cos(2 pi u) for u in [0, 1) (any finite
// u >= 0 below 2^21 works; the contract is [0, 1)). Method: t = 4u (exact);
// t = n + f with integer n and f in (-1/2, 1/2] (both exact, Sterbenz); so
// 2 pi u = n pi/2 + f pi/2 with |f pi/2| <= pi/4. sin and cos of f pi/2 are
// odd/even Taylor polynomials in f with coefficients (pi/2)^k / k!
// (truncation < 2e-9), then rotated by the quadrant n mod 4.
ZS_HD inline void SinCos2Pi(float u, float* s, float* c) {
  using namespace hd;
  const float t = MulRn(u, 4.0f);             // exact
  int n = static_cast<int>(t);                // floor, t >= 0
  float f = SubRn(t, static_cast<float>(n));  // [0, 1), exact
  if (f > 0.5f) {
    f = SubRn(f, 1.0f);  // (-1/2, 0), exact (Sterbenz)
    n += 1;
  }
  const float f2 = MulRn(f, f);
  // sin(f pi/2) = f (S1 + S3 f^2 + ... + S11 f^10).
  float ps = normal_internal::kSin11;
  ps = AddRn(MulRn(ps, f2), normal_internal::kSin9);
  ps = AddRn(MulRn(ps, f2), normal_internal::kSin7);
  ps = AddRn(MulRn(ps, f2), normal_internal::kSin5);
  ps = AddRn(MulRn(ps, f2), normal_internal::kSin3);
  ps = AddRn(MulRn(ps, f2), normal_internal::kSin1);
  const float sin_f = MulRn(ps, f);
  // cos(f pi/2) = 1 + f^2 (C2 + C4 f^2 + ... + C12 f^10).
  float pc = normal_internal::kCos12;
  pc = AddRn(MulRn(pc, f2), normal_internal::kCos10);
  pc = AddRn(MulRn(pc, f2), normal_internal::kCos8);
  pc = AddRn(MulRn(pc, f2), normal_internal::kCos6);
  pc = AddRn(MulRn(pc, f2), normal_internal::kCos4);
  pc = AddRn(MulRn(pc, f2), normal_internal::kCos2);
  const float cos_f = AddRn(1.0f, MulRn(pc, f2));
  switch (n & 3) {
    case 0:
      *s = sin_f;
      *c = cos_f;
      break;
    case 1:
      *s = cos_f;
      *c = -sin_f;
      break;
    case 2:
      *s = -sin_f;
      *c = -cos_f;
      break;
    default:
      *s = -cos_f;
      *c = sin_f;
      break;
  }
}

// The Box-Muller pair of two Philox words `a` (radius) and `b` (angle), as
// specified at the top of this file: *z_even = r cos, *z_odd = r sin.
ZS_HD inline void BoxMuller(uint32_t a, uint32_t b, float* z_even, float* z_odd) {
  using namespace hd;
  using normal_internal::kTwoM24;
  const float u1 = MulRn(static_cast<float>((a >> 8) + 1u), kTwoM24);  // (0, 1]
  const float u2 = MulRn(static_cast<float>(b >> 8), kTwoM24);         // [0, 1)
  const float r = SqrtRn(MulRn(-2.0f, LogF(u1)));                      // -2 ln u1 >= 0; scale exact
  float sin_v, cos_v;
  SinCos2Pi(u2, &sin_v, &cos_v);
  *z_even = MulRn(r, cos_v);
  *z_odd = MulRn(r, sin_v);
}

// The Philox counter and key of element group `group` (= index / 4).
ZS_HD inline Uint4 NormalCounter(uint32_t stream, uint64_t group) {
  return Uint4{{static_cast<uint32_t>(group), static_cast<uint32_t>(group >> 32), stream, 0u}};
}
ZS_HD inline Uint2 NormalKey(uint64_t seed) {
  return Uint2{{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
}

// Writes z of elements 4*group .. 4*group+3 of `stream` under `seed` to
// out[0..3]: one Philox call, two Box-Muller pairs. For kernels that give a
// thread four consecutive elements.
ZS_HD inline void StandardNormal4(uint64_t seed, uint32_t stream, uint64_t group, float out[4]) {
  const Uint4 w = Philox4x32_10(NormalCounter(stream, group), NormalKey(seed));
  BoxMuller(w.v[0], w.v[1], &out[0], &out[1]);
  BoxMuller(w.v[2], w.v[3], &out[2], &out[3]);
}

// Returns z of element `index` of parameter stream `stream` (zo_math.h:
// BlockStream / EmbeddingStream / HeadStream) under step seed `seed`
// (zo_math.h: StepSeed). Unitless, N(0, 1). Computes only the Box-Muller pair
// that holds `index`; bitwise equal to StandardNormal4 and FillNormals.
ZS_HD inline float StandardNormal(uint64_t seed, uint32_t stream, uint64_t index) {
  const Uint4 w = Philox4x32_10(NormalCounter(stream, index >> 2), NormalKey(seed));
  const int lane = static_cast<int>(index & 3u);
  const int pair = lane >> 1;
  float z_even, z_odd;
  BoxMuller(w.v[2 * pair], w.v[2 * pair + 1], &z_even, &z_odd);
  return (lane & 1) ? z_odd : z_even;
}

// CPU bulk form: out[i] = StandardNormal(seed, stream, first + i) for i in
// [0, count), bitwise, with one Philox call per group of four elements, on
// SIMD lanes where the CPU has them (normal_simd.h: FastestNormalIsa).
// `out` holds `count` floats; count <= 0 writes nothing. first + count must
// not overflow uint64.
void FillNormals(uint64_t seed, uint32_t stream, uint64_t first, int64_t count, float* out);

}  // namespace zosched
