#include "runtime/ops/position_rows.h"

#include "gtest/gtest.h"
#include "runtime/ops/test_models.h"

namespace zosched {
namespace {

TEST(FirstPositionRowTest, OptSkipsTwoRows) { EXPECT_EQ(FirstPositionRow(TestOpt()), 2); }

TEST(FirstPositionRowTest, PlainLearnedPositionsStartAtRowZero) {
  ModelSpec spec = TestOpt();
  spec.set_positional(LEARNED);
  EXPECT_EQ(FirstPositionRow(spec), 0);
}

}  // namespace
}  // namespace zosched
