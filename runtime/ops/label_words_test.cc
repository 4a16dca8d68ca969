#include "runtime/ops/label_words.h"

#include "gtest/gtest.h"
#include "runtime/ops/test_models.h"

namespace zosched {
namespace {

Schedule TwoLabelWords() {
  Schedule schedule;
  *schedule.mutable_model() = TestOpt();
  schedule.mutable_training()->set_num_label_words(2);
  return schedule;
}

TEST(CheckLabelWordsTest, AcceptsWordsOfTheVocabulary) {
  EXPECT_TRUE(CheckLabelWords(TwoLabelWords(), {0, 31}).ok());
}

TEST(CheckLabelWordsTest, RefusesAnotherCount) {
  EXPECT_EQ(CheckLabelWords(TwoLabelWords(), {1, 2, 3}).message(),
            "the task has 3 label words but the schedule was lowered for 2");
}

TEST(CheckLabelWordsTest, RefusesAWordOutsideTheVocabulary) {
  EXPECT_EQ(CheckLabelWords(TwoLabelWords(), {1, 32}).message(),
            "label word token 32 is outside model 'ops-test-opt''s vocabulary of 32");
}

}  // namespace
}  // namespace zosched
