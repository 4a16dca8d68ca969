#include "base/flag_checks.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(CheckFlagRange, AcceptsTheBoundsAndRejectsOutside) {
  EXPECT_TRUE(CheckFlagRange("batch", 1, 1, 8, "examples").ok());
  EXPECT_TRUE(CheckFlagRange("batch", 8, 1, 8, "examples").ok());
  const absl::Status status = CheckFlagRange("batch", -3, 1, 8, "examples per step");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "--batch=-3: expected 1 to 8 (examples per step)");
  EXPECT_FALSE(CheckFlagRange("ranks", 9, 0, 8, "ranks").ok());
}

TEST(CheckFlagFinite, RejectsNegativeZeroAndNonFinite) {
  EXPECT_TRUE(CheckFlagFinite("lr", 0, /*positive=*/false, "learning rate").ok());
  EXPECT_FALSE(CheckFlagFinite("eps", 0, /*positive=*/true, "ε").ok());
  EXPECT_FALSE(CheckFlagFinite("lr", -1e-3, false, "learning rate").ok());
  EXPECT_FALSE(CheckFlagFinite("lr", std::nan(""), false, "learning rate").ok());
  EXPECT_FALSE(
      CheckFlagFinite("h2d_gbps", std::numeric_limits<double>::infinity(), false, "GB/s").ok());
  EXPECT_EQ(CheckFlagFinite("h2d_gbps", -2, false, "GB/s, 0 keeps the cluster's").message(),
            "--h2d_gbps=-2: expected a finite value >= 0 (GB/s, 0 keeps the cluster's)");
}

}  // namespace
}  // namespace zosched
