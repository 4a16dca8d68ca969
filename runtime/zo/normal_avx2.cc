// The AVX2 kernel of normal_lanes.h: eight groups of four normals per step.
// The only file built with -mavx2 (no -mfma: nothing can be contracted, see
// base/hd.h). Everything it defines is either FillNormalGroupsAvx2, which
// normal_simd.cc calls only on CPUs with AVX2, or private to this file
// (normal_lanes.h emits no inline function with external linkage), so no
// AVX2 instruction reaches code that runs without that check.
#include <cstdint>

#include "runtime/zo/normal_lanes.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace zosched {
namespace normal_lanes_internal {
namespace {

// The lane operations of normal_lanes.h on 8 lanes: each float operation is
// one correctly rounded AVX instruction (vaddps, vsubps, vmulps, vdivps,
// vsqrtps).
struct Avx2Lanes {
  using F = __m256;
  using I = __m256i;
  static constexpr int kLanes = 8;

  static I Broadcast(uint32_t x) { return _mm256_set1_epi32(static_cast<int32_t>(x)); }
  static I Load(const uint32_t* words) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(words));
  }
  static I Add(I a, I b) { return _mm256_add_epi32(a, b); }
  static I Sub(I a, I b) { return _mm256_sub_epi32(a, b); }
  static I And(I a, I b) { return _mm256_and_si256(a, b); }
  static I Or(I a, I b) { return _mm256_or_si256(a, b); }
  static I Xor(I a, I b) { return _mm256_xor_si256(a, b); }
  static I ShiftRight(I a, int bits) { return _mm256_srli_epi32(a, bits); }
  static I ShiftLeft(I a, int bits) { return _mm256_slli_epi32(a, bits); }
  static I Equal(I a, I b) { return _mm256_cmpeq_epi32(a, b); }
  // (*hi, *lo) = the high and low words of the 64-bit products a * m.
  static void MulWide(I a, uint32_t m, I* hi, I* lo) {
    const I factor = Broadcast(m);
    const I even = _mm256_mul_epu32(a, factor);                         // even lanes, 64 bits
    const I odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), factor);  // odd lanes, 64 bits
    *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xaa);
    *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xaa);
  }

  static F Set(float x) { return _mm256_set1_ps(x); }
  static F Add(F a, F b) { return _mm256_add_ps(a, b); }
  static F Sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F Mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F Div(F a, F b) { return _mm256_div_ps(a, b); }
  static F Sqrt(F a) { return _mm256_sqrt_ps(a); }
  static F Greater(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  // mask ? a : b per lane, mask all ones or all zeros.
  static F Select(F mask, F a, F b) { return _mm256_blendv_ps(b, a, mask); }
  static I FloatBits(F a) { return _mm256_castps_si256(a); }
  static F BitsFloat(I a) { return _mm256_castsi256_ps(a); }
  static F ToFloat(I a) { return _mm256_cvtepi32_ps(a); }
  static I TruncateToInt(F a) { return _mm256_cvttps_epi32(a); }

  // out[4 k + j] = lane k of z[j]: a 4 x 4 transpose in each 128-bit half
  // (rows k and k + 4), then the halves put in group order.
  static void StoreGroups(const F z[4], float* out) {
    const F z01_lo = _mm256_unpacklo_ps(z[0], z[1]);
    const F z23_lo = _mm256_unpacklo_ps(z[2], z[3]);
    const F z01_hi = _mm256_unpackhi_ps(z[0], z[1]);
    const F z23_hi = _mm256_unpackhi_ps(z[2], z[3]);
    const F rows04 = _mm256_shuffle_ps(z01_lo, z23_lo, _MM_SHUFFLE(1, 0, 1, 0));
    const F rows15 = _mm256_shuffle_ps(z01_lo, z23_lo, _MM_SHUFFLE(3, 2, 3, 2));
    const F rows26 = _mm256_shuffle_ps(z01_hi, z23_hi, _MM_SHUFFLE(1, 0, 1, 0));
    const F rows37 = _mm256_shuffle_ps(z01_hi, z23_hi, _MM_SHUFFLE(3, 2, 3, 2));
    _mm256_storeu_ps(out, _mm256_permute2f128_ps(rows04, rows15, 0x20));
    _mm256_storeu_ps(out + 8, _mm256_permute2f128_ps(rows26, rows37, 0x20));
    _mm256_storeu_ps(out + 16, _mm256_permute2f128_ps(rows04, rows15, 0x31));
    _mm256_storeu_ps(out + 24, _mm256_permute2f128_ps(rows26, rows37, 0x31));
  }
};

}  // namespace

void FillNormalGroupsAvx2(Uint2 key, uint32_t stream, uint64_t first_group, int64_t groups,
                          float* out) {
  FillNormalGroups<Avx2Lanes>(key, stream, first_group, groups, out);
}

}  // namespace normal_lanes_internal
}  // namespace zosched

#endif  // __x86_64__
