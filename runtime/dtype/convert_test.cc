#include "runtime/dtype/convert.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace zosched {
namespace {

// Value of fp16 bits computed independently with libm.
double Fp16Reference(uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

bool IsNan16(uint16_t h, int exponent_bits_mask, int mantissa_mask) {
  return (h & exponent_bits_mask) == exponent_bits_mask && (h & mantissa_mask);
}

TEST(ConvertTest, EveryFp16WidensExactlyAndRoundTripsBitwise) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const float x = Fp16ToFloat(h);
    if (IsNan16(h, 0x7c00, 0x3ff)) {
      EXPECT_TRUE(std::isnan(x)) << std::hex << i;
      EXPECT_EQ(std::signbit(x), (h & 0x8000) != 0) << std::hex << i;
    } else {
      EXPECT_EQ(static_cast<double>(x), Fp16Reference(h)) << std::hex << i;
      EXPECT_EQ(std::signbit(x), (h & 0x8000) != 0) << std::hex << i;
    }
    EXPECT_EQ(FloatToFp16(x), h) << std::hex << i;
  }
}

TEST(ConvertTest, EveryBf16WidensExactlyAndRoundTripsBitwise) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t b = static_cast<uint16_t>(i);
    const float x = Bf16ToFloat(b);
    const int exponent = (b >> 7) & 0xff;
    const int mantissa = b & 0x7f;
    const int sign = (b & 0x8000) ? -1 : 1;
    if (exponent == 0xff && mantissa != 0) {
      EXPECT_TRUE(std::isnan(x)) << std::hex << i;
    } else if (exponent == 0xff) {
      EXPECT_EQ(x, sign * INFINITY) << std::hex << i;
    } else {
      const double expected =
          exponent == 0 ? sign * std::ldexp(mantissa, -133)
                        : sign * std::ldexp(128 + mantissa, exponent - 134);
      EXPECT_EQ(static_cast<double>(x), expected) << std::hex << i;
    }
    EXPECT_EQ(std::signbit(x), (b & 0x8000) != 0) << std::hex << i;
    EXPECT_EQ(FloatToBf16(x), b) << std::hex << i;
  }
}

// Nearest-even rounding of a finite non-negative `value` to a 16-bit format,
// by comparing distances in double to the two neighbours `lo` (the largest
// finite bit pattern whose value is <= `value`) and `lo + 1`. Independent of
// the bit tricks under test. When `lo + 1` is inf's bit pattern, the upper
// neighbour is the value one ulp past the largest finite one, as if the
// exponent range were unbounded (IEEE overflow rounding); landing on it means
// inf.
uint16_t NearestEven(double value, uint16_t lo, double (*widen)(uint16_t),
                     uint16_t inf_bits) {
  const uint16_t hi = static_cast<uint16_t>(lo + 1);
  double hi_value;
  if (hi == inf_bits) {
    const double max = widen(static_cast<uint16_t>(inf_bits - 1));
    hi_value = max + (max - widen(static_cast<uint16_t>(inf_bits - 2)));
  } else {
    hi_value = widen(hi);
  }
  const double d_lo = value - widen(lo);
  const double d_hi = hi_value - value;
  if (d_lo < d_hi) return lo;
  if (d_hi < d_lo) return hi;
  return (lo & 1) ? hi : lo;
}

double WidenFp16(uint16_t h) { return Fp16ToFloat(h); }
double WidenBf16(uint16_t b) { return Bf16ToFloat(b); }

// Every 2^32 float would take too long (minutes); a prime stride still visits
// every exponent, both signs and many mantissa patterns (17M floats), and the
// boundary cases are covered by the tests below.
constexpr uint64_t kStride = 251;

TEST(ConvertTest, Fp32ToFp16MatchesNearestEvenReference) {
  for (uint64_t i = 0; i < (uint64_t{1} << 32); i += kStride) {
    const uint32_t bits = static_cast<uint32_t>(i);
    const float x = hd::BitsToFloat(bits);
    const uint16_t got = FloatToFp16(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(IsNan16(got, 0x7c00, 0x3ff)) << std::hex << bits;
      EXPECT_EQ(got & 0x8000, (bits >> 16) & 0x8000) << std::hex << bits;
      continue;
    }
    if (std::isinf(x)) {
      EXPECT_EQ(got, (bits >> 16 & 0x8000) | 0x7c00) << std::hex << bits;
      continue;
    }
    // Truncate toward zero: the largest-magnitude fp16 of x's sign not above
    // |x|, found by bisection over the ordered bit patterns 0..0x7bff.
    const double a = std::fabs(static_cast<double>(x));
    uint16_t lo = 0, hi = 0x7bff;
    if (a >= Fp16Reference(0x7bff)) {
      lo = 0x7bff;
    } else {
      while (lo < hi) {
        const uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
        if (Fp16Reference(mid) <= a) lo = mid; else hi = mid - 1;
      }
    }
    const uint16_t sign = (bits >> 16) & 0x8000;
    const uint16_t expected = static_cast<uint16_t>(
        sign | NearestEven(a, lo, WidenFp16, 0x7c00));
    ASSERT_EQ(got, expected) << std::hex << bits << " " << x;
  }
}

TEST(ConvertTest, Fp32ToBf16MatchesNearestEvenReference) {
  for (uint64_t i = 0; i < (uint64_t{1} << 32); i += kStride) {
    const uint32_t bits = static_cast<uint32_t>(i);
    const float x = hd::BitsToFloat(bits);
    const uint16_t got = FloatToBf16(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(IsNan16(got, 0x7f80, 0x7f)) << std::hex << bits;
      EXPECT_EQ(got & 0x8000, (bits >> 16) & 0x8000) << std::hex << bits;
      continue;
    }
    const uint16_t sign = (bits >> 16) & 0x8000;
    if (std::isinf(x)) {
      EXPECT_EQ(got, sign | 0x7f80) << std::hex << bits;
      continue;
    }
    // For bf16 the truncation toward zero is the top 16 bits.
    const uint16_t lo = static_cast<uint16_t>((bits & 0x7fffffffu) >> 16);
    const uint16_t expected = static_cast<uint16_t>(
        sign | NearestEven(std::fabs(static_cast<double>(x)), lo, WidenBf16,
                           0x7f80));
    ASSERT_EQ(got, expected) << std::hex << bits << " " << x;
  }
}

#if defined(__FLT16_MAX__)
// GCC's _Float16 conversion (libgcc's soft-float, round to nearest even) as
// a second, independent reference. Exhaustive takes minutes (libgcc's
// conversion is slow), so every 1021st float.
TEST(ConvertTest, Fp32ToFp16MatchesCompilerFloat16) {
  // A plain loop (a gtest assertion per element would dominate the time).
  int64_t mismatches = 0;
  uint32_t first_mismatch = 0;
  for (uint64_t i = 0; i < (uint64_t{1} << 32); i += 1021) {
    const float x = hd::BitsToFloat(static_cast<uint32_t>(i));
    if (std::isnan(x)) continue;
    const _Float16 ref = static_cast<_Float16>(x);
    uint16_t ref_bits;
    memcpy(&ref_bits, &ref, 2);
    if (FloatToFp16(x) != ref_bits) {
      if (mismatches++ == 0) first_mismatch = static_cast<uint32_t>(i);
    }
  }
  EXPECT_EQ(mismatches, 0) << "first at fp32 bits 0x" << std::hex
                           << first_mismatch;
}
#endif

TEST(ConvertTest, Fp16TiesToEven) {
  // Halfway between 1 (even) and 1 + 2^-10: down to 1.
  EXPECT_EQ(FloatToFp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // Halfway between 1 + 2^-10 (odd) and 1 + 2^-9: up.
  EXPECT_EQ(FloatToFp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above the halfway point: up.
  EXPECT_EQ(FloatToFp16(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)),
            0x3c01);
  // 65520 is halfway between 65504 (odd mantissa) and 65536: inf.
  EXPECT_EQ(FloatToFp16(65520.0f), 0x7c00);
  EXPECT_EQ(FloatToFp16(-65520.0f), 0xfc00);
  EXPECT_EQ(FloatToFp16(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(FloatToFp16(1e10f), 0x7c00);
  // Subnormals: 2^-25 is halfway between 0 and 2^-24: to 0 (even).
  EXPECT_EQ(FloatToFp16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(FloatToFp16(-std::ldexp(1.0f, -25)), 0x8000);
  EXPECT_EQ(FloatToFp16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  // 3 * 2^-25 is halfway between 2^-24 (odd) and 2^-23: up.
  EXPECT_EQ(FloatToFp16(3 * std::ldexp(1.0f, -25)), 0x0002);
  // 1023.5 * 2^-24, halfway between the largest subnormal (odd) and the
  // smallest normal: carries into the exponent.
  EXPECT_EQ(FloatToFp16(1023.5f * std::ldexp(1.0f, -24)), 0x0400);
  EXPECT_EQ(FloatToFp16(1e-30f), 0x0000);
  EXPECT_EQ(FloatToFp16(-0.0f), 0x8000);
}

TEST(ConvertTest, Bf16TiesToEven) {
  EXPECT_EQ(FloatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(FloatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(FloatToBf16(hd::BitsToFloat(0x3f808001u)), 0x3f81);
  // The largest float rounds past the largest bf16 (0x7f7f, odd) to inf.
  EXPECT_EQ(FloatToBf16(hd::BitsToFloat(0x7f7fffffu)), 0x7f80);
  EXPECT_EQ(FloatToBf16(hd::BitsToFloat(0x7f7f8000u)), 0x7f80);
  EXPECT_EQ(FloatToBf16(hd::BitsToFloat(0x7f7f7fffu)), 0x7f7f);
  // Subnormals: halfway cases in the low 16 bits.
  EXPECT_EQ(FloatToBf16(hd::BitsToFloat(0x00008000u)), 0x0000);
  EXPECT_EQ(FloatToBf16(hd::BitsToFloat(0x00018000u)), 0x0002);
  EXPECT_EQ(FloatToBf16(hd::BitsToFloat(0x807fffffu)), 0x8080);
}

TEST(ConvertTest, NansStayNansAndInfinitiesStayInfinite) {
  // A NaN whose payload lies only in the low bits must not become inf.
  const float low_payload_nan = hd::BitsToFloat(0x7f800001u);
  ASSERT_TRUE(std::isnan(low_payload_nan));
  EXPECT_EQ(FloatToFp16(low_payload_nan), 0x7e00);
  EXPECT_EQ(FloatToBf16(low_payload_nan), 0x7fc0);
  EXPECT_EQ(FloatToFp16(hd::BitsToFloat(0xffc00000u)), 0xfe00);
  EXPECT_EQ(FloatToBf16(hd::BitsToFloat(0xffc00000u)), 0xffc0);
  EXPECT_EQ(FloatToFp16(INFINITY), 0x7c00);
  EXPECT_EQ(FloatToFp16(-INFINITY), 0xfc00);
  EXPECT_EQ(FloatToBf16(INFINITY), 0x7f80);
  EXPECT_EQ(FloatToBf16(-INFINITY), 0xff80);
  EXPECT_TRUE(std::isinf(Fp16ToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(Fp16ToFloat(0x7c01)));
  EXPECT_TRUE(std::isnan(Bf16ToFloat(0xff81)));
}

// Bytes of `values` converted to `dtype` one element at a time.
std::vector<unsigned char> Encode(const std::vector<float>& values, DType dtype) {
  std::vector<unsigned char> bytes;
  for (float v : values) {
    unsigned char buf[4];
    int size = 4;
    if (dtype == FP32) {
      memcpy(buf, &v, 4);
    } else {
      const uint16_t h = dtype == FP16 ? FloatToFp16(v) : FloatToBf16(v);
      memcpy(buf, &h, 2);
      size = 2;
    }
    bytes.insert(bytes.end(), buf, buf + size);
  }
  return bytes;
}

TEST(ConvertTest, ConvertBufferMatchesPerElementOnUnalignedBuffers) {
  std::vector<float> values;
  for (int i = 0; i < 1000; ++i) {
    values.push_back(std::ldexp(static_cast<float>(i * 7919 % 2003) - 1001.3f,
                                (i % 60) - 40));
  }
  values.push_back(INFINITY);
  values.push_back(-0.0f);
  values.push_back(NAN);
  const int64_t n = values.size();
  for (DType from : {FP32, FP16, BF16}) {
    // The source as `from` holds values already rounded to `from`.
    const std::vector<unsigned char> src = Encode(values, from);
    std::vector<float> rounded(n);
    ConvertBuffer(from, src.data(), FP32, rounded.data(), n);
    for (DType to : {FP32, FP16, BF16}) {
      // Offset by one byte: neither side aligned.
      std::vector<unsigned char> src_unaligned(src.size() + 1);
      memcpy(src_unaligned.data() + 1, src.data(), src.size());
      const int64_t out_bytes = n * (to == FP32 ? 4 : 2);
      std::vector<unsigned char> dst(out_bytes + 1, 0xab);
      ConvertBuffer(from, src_unaligned.data() + 1, to, dst.data() + 1, n);
      const std::vector<unsigned char> expected = Encode(rounded, to);
      EXPECT_EQ(std::vector<unsigned char>(dst.begin() + 1, dst.end()), expected)
          << DType_Name(from) << " -> " << DType_Name(to);
      EXPECT_EQ(dst[0], 0xab);
    }
  }
}

TEST(ConvertTest, ConvertBufferInPlaceSameTypeAndEmpty) {
  std::vector<float> values = {1.0f, 2.0f};
  ConvertBuffer(FP32, values.data(), FP32, values.data(), 2);
  EXPECT_EQ(values, (std::vector<float>{1.0f, 2.0f}));
  ConvertBuffer(FP16, nullptr, BF16, nullptr, 0);
}

TEST(ConvertDeathTest, UnspecifiedDTypeIsABug) {
  float x = 0;
  EXPECT_DEATH(ConvertBuffer(DTYPE_UNSPECIFIED, &x, FP32, &x, 1),
               "unsupported source dtype");
}

}  // namespace
}  // namespace zosched
