#include "runtime/zo/normal.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/dtype/float_bits.h"
#include "runtime/zo/philox.h"

namespace zosched {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// LogF over every Box-Muller argument k * 2^-24, k = 1 .. 2^24 (exhaustive on
// the domain normal.h uses), and a geometric grid over [1e-37, 1e38].
// Tolerance: |LogF(x) - log(x)| <= 2e-6 * max(1, |log(x)|).
TEST(LogF, MatchesStdLogOnDenseGrids) {
  double worst = 0.0;
  float worst_x = 0.0f;
  auto check = [&](float x) {
    const double exact = std::log(static_cast<double>(x));
    const double err =
        std::fabs(static_cast<double>(LogF(x)) - exact) / std::max(1.0, std::fabs(exact));
    if (err > worst) {
      worst = err;
      worst_x = x;
    }
  };
  for (uint32_t k = 1; k <= (1u << 24); ++k) check(static_cast<float>(k) * 0x1p-24f);
  for (double x = 1e-37; x < 1e38; x *= 1.0000123) check(static_cast<float>(x));
  std::cout << "LogF: worst error " << worst << " (relative to max(1, |log x|)) at x = " << worst_x
            << "\n";
  EXPECT_LE(worst, 2e-6);
}

TEST(LogF, ExactPoints) {
  EXPECT_EQ(LogF(1.0f), 0.0f);
  EXPECT_NEAR(LogF(2.0f), 0.69314718f, 1e-7);
  EXPECT_NEAR(LogF(0x1p-24f), -16.635532f, 2e-6);
}

// SinCos2Pi over every angle argument k * 2^-24, k = 0 .. 2^24 - 1
// (exhaustive on the domain normal.h uses). Tolerance: 2e-6 absolute.
TEST(SinCos2Pi, MatchesStdSinCosOnDenseGrid) {
  double worst_sin = 0.0, worst_cos = 0.0;
  float worst_sin_u = 0.0f, worst_cos_u = 0.0f;
  for (uint32_t k = 0; k < (1u << 24); ++k) {
    const float u = static_cast<float>(k) * 0x1p-24f;
    float s, c;
    SinCos2Pi(u, &s, &c);
    const double angle = kTwoPi * static_cast<double>(u);
    const double es = std::fabs(s - std::sin(angle));
    const double ec = std::fabs(c - std::cos(angle));
    if (es > worst_sin) {
      worst_sin = es;
      worst_sin_u = u;
    }
    if (ec > worst_cos) {
      worst_cos = ec;
      worst_cos_u = u;
    }
  }
  std::cout << "SinCos2Pi: worst |sin error| " << worst_sin << " at u = " << worst_sin_u
            << ", worst |cos error| " << worst_cos << " at u = " << worst_cos_u << "\n";
  EXPECT_LE(worst_sin, 2e-6);
  EXPECT_LE(worst_cos, 2e-6);
}

TEST(SinCos2Pi, QuadrantPointsAreExact) {
  const float us[] = {0.0f, 0.25f, 0.5f, 0.75f};
  const float want_s[] = {0.0f, 1.0f, 0.0f, -1.0f};
  const float want_c[] = {1.0f, 0.0f, -1.0f, 0.0f};
  for (int i = 0; i < 4; ++i) {
    float s, c;
    SinCos2Pi(us[i], &s, &c);
    EXPECT_EQ(s, want_s[i]) << "u = " << us[i];
    EXPECT_EQ(c, want_c[i]) << "u = " << us[i];
  }
}

// The whole pipeline against a double-precision Box-Muller with libm, from
// the same Philox words: |z - z_ref| <= 2e-6 * max(1, |z_ref|).
TEST(StandardNormal, MatchesDoublePrecisionBoxMuller) {
  const uint64_t seed = 0x0123456789abcdefull;
  const uint32_t stream = 7;
  double worst = 0.0;
  for (uint64_t group = 0; group < (1u << 16); ++group) {
    const Uint4 w = Philox4x32_10(NormalCounter(stream, group), NormalKey(seed));
    for (int pair = 0; pair < 2; ++pair) {
      const double u1 = ((w.v[2 * pair] >> 8) + 1.0) * 0x1p-24;
      const double u2 = (w.v[2 * pair + 1] >> 8) * 0x1p-24;
      const double r = std::sqrt(-2.0 * std::log(u1));
      const double ref[2] = {r * std::cos(kTwoPi * u2), r * std::sin(kTwoPi * u2)};
      for (int j = 0; j < 2; ++j) {
        const double z = StandardNormal(seed, stream, group * 4 + 2 * pair + j);
        worst = std::max(worst, std::fabs(z - ref[j]) / std::max(1.0, std::fabs(ref[j])));
      }
    }
  }
  std::cout << "StandardNormal vs double Box-Muller: worst error " << worst << "\n";
  EXPECT_LE(worst, 2e-6);
}

// Pinned values: the trajectory log replays old runs, so z must never change.
// These are the bits this implementation produced when the log format was
// fixed (seed 42, stream 3, elements 0..7): -2.38777852, 0.849060714,
// -0.657004595, -0.465770483, 0.852786362, 0.756648362, 0.00745328143,
// 0.906822681.
TEST(StandardNormal, PinnedValues) {
  const uint32_t want[8] = {0xc018d15du, 0x3f595c0bu, 0xbf283174u, 0xbeee7978u,
                            0x3f5a5035u, 0x3f41b3b5u, 0x3bf43aa8u, 0x3f682588u};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(Bits(StandardNormal(42, 3, i)), want[i]) << "element " << i;
  }
}

// FNV-1a over the bits of a sequence of floats.
class BitsHash {
 public:
  void Add(float f) {
    const uint32_t u = Bits(f);
    for (int byte = 0; byte < 4; ++byte) {
      hash_ ^= (u >> (8 * byte)) & 0xffu;
      hash_ *= 0x100000001b3ull;
    }
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

// Pinned checksums of many values: LogF and SinCos2Pi over their whole
// Box-Muller domain and 2^16 normals. They change if any value changes by
// one bit, e.g. when a build starts fusing multiply-adds (hd.h).
TEST(StandardNormal, PinnedChecksums) {
  BitsHash log_hash, sincos_hash, z_hash;
  for (uint32_t k = 0; k < (1u << 24); ++k) {
    log_hash.Add(LogF(static_cast<float>(k + 1) * 0x1p-24f));
    float s, c;
    SinCos2Pi(static_cast<float>(k) * 0x1p-24f, &s, &c);
    sincos_hash.Add(s);
    sincos_hash.Add(c);
  }
  std::vector<float> z(1 << 16);
  FillNormals(42, 3, 0, z.size(), z.data());
  for (float v : z) z_hash.Add(v);
  EXPECT_EQ(log_hash.value(), 0x219950a4522c42deull) << std::hex << log_hash.value();
  EXPECT_EQ(sincos_hash.value(), 0xd94414a5ef8a3e75ull) << std::hex << sincos_hash.value();
  EXPECT_EQ(z_hash.value(), 0x1388aa73e3164231ull) << std::hex << z_hash.value();
}

TEST(FillNormals, EqualsPerElementBitwise) {
  const uint64_t seed = 99;
  const uint32_t stream = 2;
  const uint64_t firsts[] = {0, 1, 2, 3, 4, 5, 1000003, (1ull << 34) - 3, ~0ull - 40};
  const int64_t counts[] = {0, 1, 2, 3, 4, 5, 7, 9, 33};
  for (uint64_t first : firsts) {
    for (int64_t count : counts) {
      std::vector<float> out(count + 1, -12345.0f);
      FillNormals(seed, stream, first, count, out.data());
      for (int64_t i = 0; i < count; ++i) {
        ASSERT_EQ(Bits(out[i]), Bits(StandardNormal(seed, stream, first + i)))
            << "first " << first << " count " << count << " i " << i;
      }
      EXPECT_EQ(out[count], -12345.0f) << "wrote past count";
    }
  }
}

TEST(FillNormals, EqualsStandardNormal4) {
  float quad[4];
  StandardNormal4(5, 6, 7, quad);
  float bulk[4];
  FillNormals(5, 6, 28, 4, bulk);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(Bits(quad[i]), Bits(bulk[i]));
}

// Any slicing [first, first + count) of a stream gives each element the same
// z (docs/ARCHITECTURE.md, 'Determinism contract': "the same on any device
// and under any slicing").
TEST(FillNormals, SameZForAnySlicing) {
  const uint64_t seed = 0xfeedface;
  const uint32_t stream = 11;
  const int64_t n = 10007;
  std::vector<float> whole(n);
  FillNormals(seed, stream, 0, n, whole.data());
  for (int64_t slices : {2, 3, 7, 8, 64, 1000}) {
    std::vector<float> sliced(n);
    for (int64_t s = 0; s < slices; ++s) {
      const int64_t begin = n * s / slices, end = n * (s + 1) / slices;
      FillNormals(seed, stream, begin, end - begin, sliced.data() + begin);
    }
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(Bits(sliced[i]), Bits(whole[i])) << slices << " slices, element " << i;
    }
  }
}

TEST(StandardNormal, StreamsSeedsAndIndicesGiveDifferentValues) {
  const float a = StandardNormal(1, 0, 0);
  EXPECT_NE(a, StandardNormal(2, 0, 0));
  EXPECT_NE(a, StandardNormal(1, 1, 0));
  EXPECT_NE(a, StandardNormal(1, 0, 1));
  EXPECT_NE(a, StandardNormal(1, 0, 4));
  EXPECT_NE(a, StandardNormal(1, 0, 1ull << 34));  // high counter word
  EXPECT_NE(a, StandardNormal(1ull << 32, 0, 0));  // high key word
}

double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

struct Moments {
  double mean, variance, skewness, excess_kurtosis;
};

Moments ComputeMoments(const std::vector<float>& z) {
  const double n = static_cast<double>(z.size());
  double mean = 0.0;
  for (float v : z) mean += v;
  mean /= n;
  double m2 = 0.0, m3 = 0.0, m4 = 0.0;
  for (float v : z) {
    const double d = v - mean;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  m2 /= n;
  m3 /= n;
  m4 /= n;
  return {mean, m2, m3 / std::pow(m2, 1.5), m4 / (m2 * m2) - 3.0};
}

// 2^20 samples of one stream. Standard errors: mean 1/1024 ~= 0.001,
// variance sqrt(2/n) ~= 0.0014, skewness sqrt(6/n) ~= 0.0024, excess kurtosis
// sqrt(24/n) ~= 0.0048, KS ~0.87/sqrt(n) ~= 0.00085 (typical). Tolerances:
// mean 0.005, variance 0.01, skewness 0.015, excess kurtosis 0.03, KS 0.002.
TEST(StandardNormal, StatisticsOf2To20Samples) {
  const int64_t n = int64_t{1} << 20;
  std::vector<float> z(n);
  FillNormals(20240601, 0, 0, n, z.data());
  const Moments m = ComputeMoments(z);
  std::sort(z.begin(), z.end());
  double ks = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double cdf = NormalCdf(z[i]);
    ks = std::max(ks,
                  std::max(static_cast<double>(i + 1) / n - cdf, cdf - static_cast<double>(i) / n));
  }
  std::cout << "2^20 normals: mean " << m.mean << ", variance " << m.variance << ", skewness "
            << m.skewness << ", excess kurtosis " << m.excess_kurtosis << ", KS " << ks << ", min "
            << z.front() << ", max " << z.back() << "\n";
  EXPECT_NEAR(m.mean, 0.0, 0.005);
  EXPECT_NEAR(m.variance, 1.0, 0.01);
  EXPECT_NEAR(m.skewness, 0.0, 0.015);
  EXPECT_NEAR(m.excess_kurtosis, 0.0, 0.03);
  EXPECT_LT(ks, 0.002);
  EXPECT_LE(z.back(), 5.8f);  // |z| <= sqrt(48 ln 2) by construction
  EXPECT_GE(z.front(), -5.8f);
}

// Neighbouring elements (the two halves of a Box-Muller pair, the two pairs
// of one Philox call, the next call) and the same element in neighbouring
// streams and seeds are uncorrelated: |corr| < 0.01 (standard error 0.001).
TEST(StandardNormal, NeighboursAreUncorrelated) {
  const int64_t n = int64_t{1} << 18;
  std::vector<float> a(n), other_stream(n), other_seed(n);
  FillNormals(7, 0, 0, n, a.data());
  FillNormals(7, 1, 0, n, other_stream.data());
  FillNormals(8, 0, 0, n, other_seed.data());
  auto corr = [](const float* x, const float* y, int64_t count) {
    double sxy = 0, sxx = 0, syy = 0;
    for (int64_t i = 0; i < count; ++i) {
      sxy += double{x[i]} * y[i];
      sxx += double{x[i]} * x[i];
      syy += double{y[i]} * y[i];
    }
    return sxy / std::sqrt(sxx * syy);
  };
  for (int lag : {1, 2, 3, 4}) {
    EXPECT_LT(std::fabs(corr(a.data(), a.data() + lag, n - lag)), 0.01) << "lag " << lag;
  }
  EXPECT_LT(std::fabs(corr(a.data(), other_stream.data(), n)), 0.01);
  EXPECT_LT(std::fabs(corr(a.data(), other_seed.data(), n)), 0.01);
  // The radius is shared within a pair: z_even^2 and z_odd^2 are dependent
  // (but uncorrelated in sign); check the lanes each have unit variance.
  for (int lane = 0; lane < 4; ++lane) {
    double s = 0;
    for (int64_t i = lane; i < n; i += 4) s += double{a[i]} * a[i];
    EXPECT_NEAR(s / (n / 4), 1.0, 0.02) << "lane " << lane;
  }
}

}  // namespace
}  // namespace zosched
