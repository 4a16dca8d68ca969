#include "experiments/breakdown_target.h"

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(StepBreakdown, SumsOverlapAndCommunicationAndAveragesExposure) {
  StepMetrics step;
  step.devices.resize(2);
  step.devices[0].comm_ns = 1000;
  step.devices[0].overlap_ns = 900;
  step.devices[0].exposed_comm_ns = 100;
  step.devices[1].comm_ns = 3000;
  step.devices[1].overlap_ns = 1000;
  step.devices[1].exposed_comm_ns = 2000;
  const Breakdown b = StepBreakdown(step);
  EXPECT_DOUBLE_EQ(b.overlap, 1900.0 / 4000);
  EXPECT_EQ(b.exposed_ns, 1050);
  EXPECT_EQ(StepBreakdown(StepMetrics()).overlap, 0);  // no communication
}

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
