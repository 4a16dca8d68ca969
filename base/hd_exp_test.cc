// hd::ExpF against double-precision exp: within 2 ulp wherever e^x is a
// normal float, over a dense grid of floats (every 61st float of the range:
// about 35 million arguments), and the edges (overflow, underflow, NaN,
// infinities, zero). The measured worst case is recorded as a property.
#include "base/hd_exp.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "gtest/gtest.h"

namespace zosched {
namespace {

// Distance in representable floats between two positive finite floats.
int64_t Ulps(float a, float b) {
  return std::llabs(static_cast<int64_t>(hd::FloatToBits(a)) -
                    static_cast<int64_t>(hd::FloatToBits(b)));
}

TEST(HdExp, WithinTwoUlpsOverTheNormalRange) {
  // e^x is normal for x in [ln 2^-126, ln FLT_MAX] = [-87.34, 88.72].
  const float lo = -87.3f, hi = 88.72f;
  int64_t worst = 0, checked = 0;
  float worst_x = 0.0f;
  auto check = [&](float x) {
    const float want = static_cast<float>(std::exp(static_cast<double>(x)));
    const int64_t ulps = Ulps(hd::ExpF(x), want);
    if (ulps > worst) {
      worst = ulps;
      worst_x = x;
    }
    ++checked;
  };
  // Negative arguments by their bits, from -0 down to lo; then positive.
  for (uint32_t b = 0x80000000u; hd::BitsToFloat(b) >= lo; b += 61) check(hd::BitsToFloat(b));
  for (uint32_t b = 0; hd::BitsToFloat(b) <= hi; b += 61) check(hd::BitsToFloat(b));
  EXPECT_LE(worst, 2) << "at x = " << worst_x;
  EXPECT_GT(checked, 30000000);
  RecordProperty("worst_ulps", static_cast<int>(worst));
}

TEST(HdExp, EdgesOfTheRange) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(hd::ExpF(0.0f), 1.0f);
  EXPECT_EQ(hd::ExpF(-0.0f), 1.0f);
  EXPECT_EQ(hd::ExpF(inf), inf);
  EXPECT_EQ(hd::ExpF(-inf), 0.0f);
  EXPECT_TRUE(std::isnan(hd::ExpF(std::nanf(""))));
  // The largest float whose e^x is finite, and the next one.
  const float last = 88.7228317f;
  EXPECT_TRUE(std::isfinite(hd::ExpF(last)));
  EXPECT_EQ(hd::ExpF(std::nextafter(last, inf)), inf);
  EXPECT_EQ(hd::ExpF(100.0f), inf);
  // Subnormal results: the right order of magnitude, then zero.
  const float tiny = hd::ExpF(-100.0f);
  EXPECT_GT(tiny, 0.0f);
  EXPECT_LT(std::fabs(tiny / static_cast<float>(std::exp(-100.0)) - 1.0f), 1e-3f);
  EXPECT_EQ(hd::ExpF(-110.0f), 0.0f);
}

}  // namespace
}  // namespace zosched
