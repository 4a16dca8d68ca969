// The SSE2 kernel of normal_lanes.h: four groups of four normals per step.
// Built with the baseline x86-64 flags (SSE2 is part of x86-64).
#include <cstdint>

#include "runtime/zo/normal_lanes.h"

#if defined(__x86_64__)
#include <emmintrin.h>

namespace zosched {
namespace normal_lanes_internal {
namespace {

// The lane operations of normal_lanes.h on 4 lanes: each float operation is
// one correctly rounded SSE instruction (addps, subps, mulps, divps, sqrtps).
struct Sse2Lanes {
  using F = __m128;
  using I = __m128i;
  static constexpr int kLanes = 4;

  static I Broadcast(uint32_t x) { return _mm_set1_epi32(static_cast<int32_t>(x)); }
  static I Load(const uint32_t* words) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(words));
  }
  static I Add(I a, I b) { return _mm_add_epi32(a, b); }
  static I Sub(I a, I b) { return _mm_sub_epi32(a, b); }
  static I And(I a, I b) { return _mm_and_si128(a, b); }
  static I Or(I a, I b) { return _mm_or_si128(a, b); }
  static I Xor(I a, I b) { return _mm_xor_si128(a, b); }
  static I ShiftRight(I a, int bits) { return _mm_srli_epi32(a, bits); }
  static I ShiftLeft(I a, int bits) { return _mm_slli_epi32(a, bits); }
  static I Equal(I a, I b) { return _mm_cmpeq_epi32(a, b); }
  // (*hi, *lo) = the high and low words of the 64-bit products a * m.
  static void MulWide(I a, uint32_t m, I* hi, I* lo) {
    const I factor = Broadcast(m);
    const I even = _mm_mul_epu32(a, factor);                      // lanes 0, 2 as 64 bits
    const I odd = _mm_mul_epu32(_mm_srli_epi64(a, 32), factor);  // lanes 1, 3 as 64 bits
    const I even_lanes = _mm_set_epi32(0, -1, 0, -1);
    *hi = _mm_or_si128(_mm_srli_epi64(even, 32), _mm_andnot_si128(even_lanes, odd));
    *lo = _mm_or_si128(_mm_and_si128(even_lanes, even), _mm_slli_epi64(odd, 32));
  }

  static F Set(float x) { return _mm_set1_ps(x); }
  static F Add(F a, F b) { return _mm_add_ps(a, b); }
  static F Sub(F a, F b) { return _mm_sub_ps(a, b); }
  static F Mul(F a, F b) { return _mm_mul_ps(a, b); }
  static F Div(F a, F b) { return _mm_div_ps(a, b); }
  static F Sqrt(F a) { return _mm_sqrt_ps(a); }
  static F Greater(F a, F b) { return _mm_cmpgt_ps(a, b); }
  // mask ? a : b per lane, mask all ones or all zeros.
  static F Select(F mask, F a, F b) {
    return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b));
  }
  static I FloatBits(F a) { return _mm_castps_si128(a); }
  static F BitsFloat(I a) { return _mm_castsi128_ps(a); }
  static F ToFloat(I a) { return _mm_cvtepi32_ps(a); }
  static I TruncateToInt(F a) { return _mm_cvttps_epi32(a); }

  // out[4 k + j] = lane k of z[j]: a 4 x 4 transpose.
  static void StoreGroups(const F z[4], float* out) {
    const F z01_lo = _mm_unpacklo_ps(z[0], z[1]);  // z0k0 z1k0 z0k1 z1k1
    const F z23_lo = _mm_unpacklo_ps(z[2], z[3]);
    const F z01_hi = _mm_unpackhi_ps(z[0], z[1]);  // z0k2 z1k2 z0k3 z1k3
    const F z23_hi = _mm_unpackhi_ps(z[2], z[3]);
    _mm_storeu_ps(out, _mm_movelh_ps(z01_lo, z23_lo));
    _mm_storeu_ps(out + 4, _mm_movehl_ps(z23_lo, z01_lo));
    _mm_storeu_ps(out + 8, _mm_movelh_ps(z01_hi, z23_hi));
    _mm_storeu_ps(out + 12, _mm_movehl_ps(z23_hi, z01_hi));
  }
};

}  // namespace

void FillNormalGroupsSse2(Uint2 key, uint32_t stream, uint64_t first_group, int64_t groups,
                          float* out) {
  FillNormalGroups<Sse2Lanes>(key, stream, first_group, groups, out);
}

}  // namespace normal_lanes_internal
}  // namespace zosched

#endif  // __x86_64__
