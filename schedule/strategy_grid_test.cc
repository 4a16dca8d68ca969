#include "schedule/strategy_grid.h"

#include "gtest/gtest.h"
#include "schedule/training_settings.h"

namespace zosched {
namespace {

TEST(StrategyGridTest, Names) {
  EXPECT_EQ(GridName({ZO2}), "zo2");
  EXPECT_EQ(GridName({MEZO}), "mezo");
  EXPECT_EQ(GridName({DISTZO2, 2, 1}), "distzo2_P2xD1");
  EXPECT_EQ(GridName({DISTZO2, 1, 2, /*slicing=*/false}), "distzo2_P1xD2");
  EXPECT_EQ(GridSchemeName({ZO2}), "zo2");
  EXPECT_EQ(GridSchemeName({DISTZO2, 2, 2}), "distzo2_P2xD2_sliced");
  EXPECT_EQ(GridSchemeName({DISTZO2, 1, 2, /*slicing=*/false}), "distzo2_P1xD2_naive");
}

TEST(StrategyGridTest, LowerOptionsCarryTheGridAndDefaultTraining) {
  const LowerOptions o = GridLowerOptions({DISTZO2, 2, 4, /*slicing=*/false});
  EXPECT_EQ(o.strategy, DISTZO2);
  EXPECT_EQ(o.pertp, 2);
  EXPECT_EQ(o.dp, 4);
  EXPECT_FALSE(o.slicing);
  EXPECT_EQ(o.block_slots, LowerOptions().block_slots);
  EXPECT_EQ(o.training.SerializeAsString(), DefaultTrainingSettings().SerializeAsString());
}

}  // namespace
}  // namespace zosched
