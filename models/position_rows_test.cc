#include "models/position_rows.h"

#include "gtest/gtest.h"
#include "models/opt_for_test.h"

namespace zosched {
namespace {

TEST(FirstPositionRowTest, OptSkipsTwoRows) { EXPECT_EQ(FirstPositionRow(OptForTest("opt", OptTestSizes{})), 2); }

TEST(FirstPositionRowTest, PlainLearnedPositionsStartAtRowZero) {
  ModelSpec spec = OptForTest("gpt-like", OptTestSizes{});
  spec.set_positional(LEARNED);
  EXPECT_EQ(FirstPositionRow(spec), 0);
}

}  // namespace
}  // namespace zosched
