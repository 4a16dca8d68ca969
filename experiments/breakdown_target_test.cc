#include "experiments/breakdown_target.h"

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(CheckBreakdown, OverlapWithinFivePoints) {
  EXPECT_TRUE(CheckBreakdown(0.59, 0.54, 0, 0).overlap_ok);
  EXPECT_TRUE(CheckBreakdown(0.49, 0.54, 0, 0).overlap_ok);
  EXPECT_FALSE(CheckBreakdown(0.60, 0.54, 0, 0).overlap_ok);
  EXPECT_FALSE(CheckBreakdown(0.94, 0.43, 0, 0).overlap_ok);
}

TEST(CheckBreakdown, ExposedWithinTenPercentOrATenthOfAMillisecond) {
  // Small: 0.1 ms either way.
  EXPECT_TRUE(CheckBreakdown(0, 0, 300000, 230000).exposed_ok);
  EXPECT_TRUE(CheckBreakdown(0, 0, 130000, 230000).exposed_ok);
  EXPECT_FALSE(CheckBreakdown(0, 0, 110000, 230000).exposed_ok);
  // Large: 10 % of the measured.
  EXPECT_TRUE(CheckBreakdown(0, 0, 33520000, 32640000).exposed_ok);
  EXPECT_FALSE(CheckBreakdown(0, 0, 3570000, 3230000).exposed_ok);
}

}  // namespace
}  // namespace zosched
