#include "runtime/zo/normal_simd.h"

#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "base/hd.h"
#include "runtime/zo/normal.h"

namespace zosched {
namespace {

using hd::FloatToBits;

constexpr float kUnwritten = -12345.0f;

// Seeds: the extremes of both key words and three random ones (fixed).
std::vector<uint64_t> TestSeeds() {
  std::vector<uint64_t> seeds = {0, 1, 42, 0xffffffffull, 1ull << 32, ~0ull};
  std::mt19937_64 random(20240615);
  for (int i = 0; i < 3; ++i) seeds.push_back(random());
  return seeds;
}

// Every path is checked on every machine where it runs; the others skip and
// say so in the test log.
class NormalIsaTest : public testing::TestWithParam<NormalIsa> {
 protected:
  void SetUp() override {
    if (!NormalIsaSupported(GetParam())) {
      GTEST_SKIP() << NormalIsaName(GetParam()) << " is not supported by this CPU or build";
    }
  }

  // FillNormalsWithIsa(first, count) against StandardNormal per element, into
  // a buffer offset by one float (so never 16- or 32-byte aligned), with a
  // guard element after it.
  void ExpectEqualsStandardNormal(uint64_t seed, uint32_t stream, uint64_t first,
                                  int64_t count) {
    std::vector<float> buffer(count + 2, kUnwritten);
    float* out = buffer.data() + 1;
    FillNormalsWithIsa(GetParam(), seed, stream, first, count, out);
    for (int64_t i = 0; i < count; ++i) {
      ASSERT_EQ(FloatToBits(out[i]), FloatToBits(StandardNormal(seed, stream, first + i)))
          << NormalIsaName(GetParam()) << ": seed " << seed << " stream " << stream << " first "
          << first << " count " << count << " element " << i;
    }
    ASSERT_EQ(buffer[0], kUnwritten) << "wrote before out";
    ASSERT_EQ(buffer[count + 1], kUnwritten) << "wrote past count";
  }
};

TEST_P(NormalIsaTest, CountsUpTo100AtAnyOffsetEqualStandardNormal) {
  const uint64_t firsts[] = {0, 1, 2, 3, 4, 5, 6, 7, 33, 1000003, (1ull << 34) - 5};
  for (uint64_t seed : TestSeeds()) {
    for (uint32_t stream : {0u, 7u, 0xffffffffu}) {
      for (uint64_t first : firsts) {
        for (int64_t count = 0; count <= 100; ++count) {
          ExpectEqualsStandardNormal(seed, stream, first, count);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// The group counter's low word wraps inside a vector: groups 2^32 - 13 ..
// 2^32 + 50 (elements around 2^34), and the last groups below 2^64.
TEST_P(NormalIsaTest, CounterCarriesAcrossTheLowWord) {
  for (uint64_t seed : TestSeeds()) {
    for (uint64_t first : {(1ull << 34) - 52, (1ull << 34) - 51, (1ull << 34) - 50}) {
      ExpectEqualsStandardNormal(seed, 3, first, 256);
      if (HasFatalFailure()) return;
    }
    ExpectEqualsStandardNormal(seed, 3, ~0ull - 300, 300);
    if (HasFatalFailure()) return;
  }
}

TEST_P(NormalIsaTest, MillionElementsEqualStandardNormal) {
  for (uint64_t seed : {uint64_t{0}, ~uint64_t{0}, uint64_t{0x9e3779b97f4a7c15}}) {
    ExpectEqualsStandardNormal(seed, 11, 3, 1000000);
    if (HasFatalFailure()) return;
  }
}

TEST_P(NormalIsaTest, EqualsFillNormals) {
  const int64_t n = 100003;
  std::vector<float> with_isa(n), default_isa(n);
  FillNormalsWithIsa(GetParam(), 5, 9, 2, n, with_isa.data());
  FillNormals(5, 9, 2, n, default_isa.data());
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(FloatToBits(with_isa[i]), FloatToBits(default_isa[i])) << i;
}

INSTANTIATE_TEST_SUITE_P(AllPaths, NormalIsaTest,
                         testing::Values(NormalIsa::kScalar, NormalIsa::kSse2, NormalIsa::kAvx2),
                         [](const testing::TestParamInfo<NormalIsa>& info) {
                           return std::string(NormalIsaName(info.param));
                         });

TEST(FastestNormalIsa, IsSupportedAndScalarAlwaysIs) {
  std::cout << "FillNormals runs on " << NormalIsaName(FastestNormalIsa()) << "\n";
  EXPECT_TRUE(NormalIsaSupported(FastestNormalIsa()));
  EXPECT_TRUE(NormalIsaSupported(NormalIsa::kScalar));
#if defined(__x86_64__)
  EXPECT_TRUE(NormalIsaSupported(NormalIsa::kSse2));
  EXPECT_NE(FastestNormalIsa(), NormalIsa::kScalar);
#endif
}

}  // namespace
}  // namespace zosched
