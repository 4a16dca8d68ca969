#include "base/line_fit.h"

#include <cmath>

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(RobustLineFit, RecoversAnExactLine) {
  std::vector<std::pair<double, double>> points;
  for (double x : {4096.0, 16384.0, 65536.0, 262144.0, 1048576.0}) {
    points.push_back({x, 120e-6 + x / 4e9});
  }
  absl::StatusOr<Line> line = RobustLineFit(points);
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_NEAR(line->intercept, 120e-6, 1e-12);
  EXPECT_NEAR(line->slope, 1 / 4e9, 1e-20);
}

// The calibration that motivated it: six all-gather sizes, one timed during
// a busy spell at 4.6x its time. Least squares put the fixed cost at 233 us.
TEST(RobustLineFit, OneSlowPointDoesNotMoveTheLine) {
  const std::vector<std::pair<double, double>> points = {
      {2048, 121e-6},   {8192, 565e-6},    {32768, 126e-6},
      {131072, 149e-6}, {524288, 249e-6}, {2097152, 671e-6}};
  absl::StatusOr<Line> line = RobustLineFit(points);
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_NEAR(line->intercept, 120e-6, 10e-6);
  EXPECT_NEAR(1 / line->slope, 3.8e9, 0.3e9);
}

TEST(RobustLineFit, AHorizontalLineHasNoSlope) {
  absl::StatusOr<Line> line = RobustLineFit({{1, 5}, {2, 5}, {3, 5}});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->slope, 0);
  EXPECT_EQ(line->intercept, 5);
}

TEST(RobustLineFit, RefusesPointsWithoutTwoDifferentX) {
  for (const auto& points : std::vector<std::vector<std::pair<double, double>>>{
           {}, {{1, 2}}, {{3, 1}, {3, 2}, {3, 4}}}) {
    absl::StatusOr<Line> line = RobustLineFit(points);
    ASSERT_FALSE(line.ok());
    EXPECT_EQ(line.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(line.status().message().find("two different x"), std::string::npos)
        << line.status();
  }
}

TEST(RobustLineFit, RefusesANonFiniteCoordinate) {
  absl::StatusOr<Line> line = RobustLineFit({{1, 2}, {2, NAN}, {3, 4}});
  ASSERT_FALSE(line.ok());
  EXPECT_NE(line.status().message().find("point 1"), std::string::npos) << line.status();
}

}  // namespace
}  // namespace zosched
