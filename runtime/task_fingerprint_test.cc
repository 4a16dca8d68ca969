#include "runtime/task_fingerprint.h"

#include "gtest/gtest.h"

namespace zosched {
namespace {

TrainingTask Task() {
  TrainingTask t;
  t.train.seq_len = t.dev.seq_len = 3;
  t.train.tokens = {5, 6, 0, 7, 8, 9};
  t.train.lengths = {2, 3};
  t.train.labels = {0, 1};
  t.dev.tokens = {4, 0, 0};
  t.dev.lengths = {1};
  t.dev.labels = {1};
  t.label_words = {11, 12};
  return t;
}

TEST(TaskFingerprint, IsStableAndHex) {
  const std::string f = TaskFingerprint(Task());
  EXPECT_EQ(f.size(), 32u);
  EXPECT_EQ(f.find_first_not_of("0123456789abcdef"), std::string::npos) << f;
  EXPECT_EQ(TaskFingerprint(Task()), f);
}

TEST(TaskFingerprint, ChangesWithWhatTheModelSees) {
  const std::string base = TaskFingerprint(Task());
  TrainingTask reordered = Task();  // the two training examples swapped
  reordered.train.tokens = {7, 8, 9, 5, 6, 0};
  reordered.train.lengths = {3, 2};
  reordered.train.labels = {1, 0};
  EXPECT_NE(TaskFingerprint(reordered), base);
  TrainingTask label = Task();
  label.train.labels[1] = 0;
  EXPECT_NE(TaskFingerprint(label), base);
  TrainingTask dev = Task();
  dev.dev.tokens[0] = 3;
  EXPECT_NE(TaskFingerprint(dev), base);
  TrainingTask words = Task();
  words.label_words = {12, 11};
  EXPECT_NE(TaskFingerprint(words), base);
  // A token moved from the end of the train set to the start of dev is
  // another task, not the same bytes concatenated.
  TrainingTask moved = Task();
  moved.train.tokens.pop_back();
  moved.dev.tokens.insert(moved.dev.tokens.begin(), 9);
  EXPECT_NE(TaskFingerprint(moved), base);
}

}  // namespace
}  // namespace zosched
