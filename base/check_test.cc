#include "base/check.h"

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(Check, PassingConditionDoesNothing) {
  int evaluated = 0;
  CHECK(++evaluated == 1) << "never printed";
  EXPECT_EQ(evaluated, 1);
}

TEST(CheckDeathTest, FailureNamesPlaceConditionAndContext) {
  int slots = 2;
  EXPECT_DEATH(CHECK(slots == 3) << "slots=" << slots,
               "base/check_test.cc:[0-9]+: CHECK failed: slots == 3 slots=2");
}

}  // namespace
}  // namespace zosched
