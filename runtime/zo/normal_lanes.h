// Philox-4x32-10 and Box-Muller on SIMD lanes: the per-element math of
// normal.h written once, generic over the instruction set, for the vector
// kernels of normal_simd.cc (SSE2, normal_sse2.cc; AVX2, normal_avx2.cc).
//
// Contract: FillNormalGroups<V> writes exactly the floats that
// StandardNormal4 writes, bit for bit. Lane j of every vector carries group
// first_group + g + j; each float goes through the same correctly rounded
// +, -, *, /, sqrt as normal.h, in the same order, on the same operands (only
// the order of commutative operands may differ, which IEEE-754 makes exact).
// Branches become masks: LogF's `m > sqrt 2` and SinCos2Pi's `f > 1/2` select
// per lane, and the quadrant switch becomes a swap and two sign flips (a sign
// flip is what unary minus does to a float, also for zeros). Integer to float
// conversions are of values below 2^24, so exact either way.
//
// V ("lanes"): a struct of static functions over V::F (kLanes floats) and V::I
// (kLanes uint32 words) with the operations named below. Each kernel .cc
// defines its V in an unnamed namespace, so that every instantiation here is
// private to that .cc and compiled with that .cc's instruction set only.
// This header calls nothing but V's functions (the caller passes the Philox
// key in): no inline function with external linkage is emitted by a kernel
// .cc, so none compiled for AVX2 can stand in for the baseline one at link
// time.
#pragma once

#include <cstdint>

#include "runtime/zo/normal.h"
#include "runtime/zo/philox.h"

namespace zosched {
namespace normal_lanes_internal {

// Philox4x32_10 of counters (c[0], c[1], c[2], c[3]) under `key`, per lane,
// in place: Round and the key schedule of philox.h.
template <class V>
inline void PhiloxLanes(typename V::I c[4], Uint2 key) {
  using I = typename V::I;
  uint32_t k0 = key.v[0], k1 = key.v[1];
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += philox_internal::kW0;
      k1 += philox_internal::kW1;
    }
    I hi0, lo0, hi1, lo1;
    V::MulWide(c[0], philox_internal::kM0, &hi0, &lo0);
    V::MulWide(c[2], philox_internal::kM1, &hi1, &lo1);
    const I out0 = V::Xor(V::Xor(hi1, c[1]), V::Broadcast(k0));
    const I out2 = V::Xor(V::Xor(hi0, c[3]), V::Broadcast(k1));
    c[0] = out0;
    c[1] = lo1;
    c[2] = out2;
    c[3] = lo0;
  }
}

// normal.h's LogF, per lane.
template <class V>
inline typename V::F LogFLanes(typename V::F x) {
  using F = typename V::F;
  using I = typename V::I;
  using namespace normal_internal;
  const I bits = V::FloatBits(x);
  I e = V::Sub(V::ShiftRight(bits, 23), V::Broadcast(127));
  F m = V::BitsFloat(V::Or(V::And(bits, V::Broadcast(0x007fffffu)), V::Broadcast(0x3f800000u)));
  const F above_sqrt2 = V::Greater(m, V::Set(kSqrt2));  // all ones where true
  m = V::Select(above_sqrt2, V::Mul(m, V::Set(0.5f)), m);
  e = V::Sub(e, V::FloatBits(above_sqrt2));  // - (-1) = + 1 where true
  const F num = V::Sub(m, V::Set(1.0f));
  const F den = V::Add(m, V::Set(1.0f));
  const F s = V::Div(num, den);
  const F s2 = V::Mul(s, s);
  F p = V::Set(kAtanh11);
  p = V::Add(V::Mul(p, s2), V::Set(kAtanh9));
  p = V::Add(V::Mul(p, s2), V::Set(kAtanh7));
  p = V::Add(V::Mul(p, s2), V::Set(kAtanh5));
  p = V::Add(V::Mul(p, s2), V::Set(kAtanh3));
  const F q = V::Mul(p, s2);
  const F atanh_s = V::Add(s, V::Mul(s, q));
  const F log_m = V::Mul(V::Set(2.0f), atanh_s);
  const F fe = V::ToFloat(e);
  const F hi = V::Mul(fe, V::Set(kLn2Hi));
  const F lo = V::Mul(fe, V::Set(kLn2Lo));
  return V::Add(hi, V::Add(log_m, lo));
}

// normal.h's SinCos2Pi, per lane.
template <class V>
inline void SinCos2PiLanes(typename V::F u, typename V::F* sin_out, typename V::F* cos_out) {
  using F = typename V::F;
  using I = typename V::I;
  using namespace normal_internal;
  const F t = V::Mul(u, V::Set(4.0f));
  I n = V::TruncateToInt(t);
  F f = V::Sub(t, V::ToFloat(n));
  const F above_half = V::Greater(f, V::Set(0.5f));
  f = V::Select(above_half, V::Sub(f, V::Set(1.0f)), f);
  n = V::Sub(n, V::FloatBits(above_half));
  const F f2 = V::Mul(f, f);
  F ps = V::Set(kSin11);
  ps = V::Add(V::Mul(ps, f2), V::Set(kSin9));
  ps = V::Add(V::Mul(ps, f2), V::Set(kSin7));
  ps = V::Add(V::Mul(ps, f2), V::Set(kSin5));
  ps = V::Add(V::Mul(ps, f2), V::Set(kSin3));
  ps = V::Add(V::Mul(ps, f2), V::Set(kSin1));
  const F sin_f = V::Mul(ps, f);
  F pc = V::Set(kCos12);
  pc = V::Add(V::Mul(pc, f2), V::Set(kCos10));
  pc = V::Add(V::Mul(pc, f2), V::Set(kCos8));
  pc = V::Add(V::Mul(pc, f2), V::Set(kCos6));
  pc = V::Add(V::Mul(pc, f2), V::Set(kCos4));
  pc = V::Add(V::Mul(pc, f2), V::Set(kCos2));
  const F cos_f = V::Add(V::Set(1.0f), V::Mul(pc, f2));
  // Quadrant n & 3 -> (sin, cos): 0 (s, c), 1 (c, -s), 2 (-s, -c), 3 (-c, s).
  // Odd quadrants swap; sin is negated in quadrants 2, 3 (bit 1 of n), cos
  // in 1, 2 (bit 1 of n + 1).
  const F odd = V::BitsFloat(V::Equal(V::And(n, V::Broadcast(1)), V::Broadcast(1)));
  const I sin_sign = V::ShiftLeft(V::And(n, V::Broadcast(2)), 30);
  const I cos_sign = V::ShiftLeft(V::And(V::Add(n, V::Broadcast(1)), V::Broadcast(2)), 30);
  *sin_out = V::BitsFloat(V::Xor(V::FloatBits(V::Select(odd, cos_f, sin_f)), sin_sign));
  *cos_out = V::BitsFloat(V::Xor(V::FloatBits(V::Select(odd, sin_f, cos_f)), cos_sign));
}

// normal.h's BoxMuller, per lane.
template <class V>
inline void BoxMullerLanes(typename V::I a, typename V::I b, typename V::F* z_even,
                           typename V::F* z_odd) {
  using F = typename V::F;
  using namespace normal_internal;
  const F u1 = V::Mul(V::ToFloat(V::Add(V::ShiftRight(a, 8), V::Broadcast(1))), V::Set(kTwoM24));
  const F u2 = V::Mul(V::ToFloat(V::ShiftRight(b, 8)), V::Set(kTwoM24));
  const F r = V::Sqrt(V::Mul(V::Set(-2.0f), LogFLanes<V>(u1)));
  F sin_v, cos_v;
  SinCos2PiLanes<V>(u2, &sin_v, &cos_v);
  *z_even = V::Mul(r, cos_v);
  *z_odd = V::Mul(r, sin_v);
}

// out[4 k + j] = StandardNormal4(seed, stream, first_group + k)[j] for k in
// [0, groups), j in [0, 4), where key = NormalKey(seed): V::kLanes groups per
// step. `groups` is a multiple of V::kLanes; `out` holds 4 * groups floats,
// any alignment.
template <class V>
inline void FillNormalGroups(Uint2 key, uint32_t stream, uint64_t first_group, int64_t groups,
                             float* out) {
  using F = typename V::F;
  using I = typename V::I;
  for (int64_t g = 0; g < groups; g += V::kLanes) {
    uint32_t counter_lo[V::kLanes], counter_hi[V::kLanes];
    for (int j = 0; j < V::kLanes; ++j) {
      const uint64_t group = first_group + static_cast<uint64_t>(g + j);
      counter_lo[j] = static_cast<uint32_t>(group);
      counter_hi[j] = static_cast<uint32_t>(group >> 32);
    }
    I c[4] = {V::Load(counter_lo), V::Load(counter_hi), V::Broadcast(stream), V::Broadcast(0)};
    PhiloxLanes<V>(c, key);
    F z[4];
    BoxMullerLanes<V>(c[0], c[1], &z[0], &z[1]);
    BoxMullerLanes<V>(c[2], c[3], &z[2], &z[3]);
    V::StoreGroups(z, out + 4 * g);
  }
}

#if defined(__x86_64__)
// FillNormalGroups on 4 lanes of SSE2 (normal_sse2.cc): `groups` a multiple
// of 4. SSE2 is part of x86-64, so any x86-64 CPU runs it.
void FillNormalGroupsSse2(Uint2 key, uint32_t stream, uint64_t first_group, int64_t groups,
                          float* out);

// FillNormalGroups on 8 lanes of AVX2 (normal_avx2.cc, the only file built
// with -mavx2): `groups` a multiple of 8. Call it only where the CPU has AVX2
// (NormalIsaSupported(NormalIsa::kAvx2), normal_simd.h).
void FillNormalGroupsAvx2(Uint2 key, uint32_t stream, uint64_t first_group, int64_t groups,
                          float* out);
#endif  // __x86_64__

}  // namespace normal_lanes_internal
}  // namespace zosched
