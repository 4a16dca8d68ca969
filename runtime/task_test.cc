#include "runtime/task.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "models/model.pb.h"

namespace zosched {
namespace {

::testing::AssertionResult Contains(absl::string_view text, absl::string_view part) {
  if (text.find(part) != absl::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

// The synthetic task's files in a fresh directory named `name`.
std::string SyntheticDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  EXPECT_TRUE(WriteSyntheticTask(dir).ok());
  return dir;
}

ModelSpec Model() {
  ModelSpec model;
  model.set_name("test-model");
  model.set_vocab_size(1 << 16);
  return model;
}

TEST(LoadTaskTest, LoadsTheSyntheticTask) {
  const std::string dir = SyntheticDir("synthetic");
  absl::StatusOr<TrainingTask> task = LoadTask(dir, "sst2", Model(), 64);
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ(task->train.size(), 4096);
  EXPECT_EQ(task->dev.size(), 512);
  EXPECT_EQ(task->label_words.size(), 2u);
}

// A dev set of only its header used to train and report "dev accuracy
// 0.0000 (0 examples)".
TEST(LoadTaskTest, RefusesADevSetWithoutExamples) {
  const std::string dir = SyntheticDir("header_only_dev");
  std::ofstream(dir + "/dev.tsv") << "sentence\tlabel\n";
  const absl::Status status = LoadTask(dir, "sst2", Model(), 64).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(status.message(), dir + "/dev.tsv: no examples after the header"));
}

// The synthetic vocabulary has no " No"/" Yes" tokens: the BoolQ template
// does not fit it, and the message says which files and what would.
TEST(LoadTaskTest, LabelWordErrorNamesTheTokenizerFiles) {
  const std::string dir = SyntheticDir("boolq_labels");
  const absl::Status status = LoadTask(dir, "boolq", Model(), 64).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(status.message(), "label word ' No' of the BoolQ template is 3 tokens"));
  EXPECT_TRUE(Contains(status.message(), "with the tokenizer of " + dir + "/vocab.json and " + dir +
                                             "/merges.txt; each label word must be one token"));
}

TEST(LoadTaskTest, ReadsDataWithAByteOrderMarkAndWindowsLineEndings) {
  const std::string dir = SyntheticDir("windows");
  std::ofstream(dir + "/dev.tsv") << "\xEF\xBB\xBFsentence\tlabel\r\nthe film was great\t1\r\n";
  absl::StatusOr<TrainingTask> task = LoadTask(dir, "sst2", Model(), 64);
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ(task->dev.size(), 1);
  EXPECT_EQ(task->dev.labels[0], 1);
}

}  // namespace
}  // namespace zosched
