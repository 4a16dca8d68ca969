#include "runtime/task.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/model.pb.h"
#include "runtime/data/sentencepiece_tokenizer.h"

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
  model.set_family(OPT);
  model.set_vocab_size(1 << 16);
  return model;
}

// The path of a file of runtime/data/testdata/ in the test's runfiles.
std::string TestData(const std::string& relative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  EXPECT_TRUE(srcdir != nullptr && workspace != nullptr) << "run me with bazel test";
  return absl::StrCat(srcdir == nullptr ? "" : srcdir, "/", workspace == nullptr ? "" : workspace,
                      "/runtime/data/testdata/", relative);
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

// The synthetic task's files are OPT's: its prompts start with OPT's BOS
// "</s>" (id 2), GPT-2's with none.
TEST(LoadTaskTest, TheSyntheticTaskGetsTheFamilysBos) {
  const std::string dir = SyntheticDir("bos");
  absl::StatusOr<TrainingTask> opt = LoadTask(dir, "sst2", Model(), 64);
  ASSERT_TRUE(opt.ok()) << opt.status();
  ModelSpec gpt2_model = Model();
  gpt2_model.set_family(GPT2);
  absl::StatusOr<TrainingTask> gpt2 = LoadTask(dir, "sst2", gpt2_model, 64);
  ASSERT_TRUE(gpt2.ok()) << gpt2.status();
  for (int e = 0; e < 8; ++e) {
    EXPECT_EQ(opt->train.tokens[e * 64], 2);
    EXPECT_EQ(gpt2->train.lengths[e] + 1, opt->train.lengths[e]);
    EXPECT_EQ(gpt2->train.tokens[e * 64], opt->train.tokens[e * 64 + 1]);
  }
  EXPECT_EQ(gpt2->label_words, opt->label_words);
}

// A task directory may hold a tokenizer.json or a tokenizer.model instead
// of vocab.json + merges.txt: the family's BOS and label words follow.
TEST(LoadTaskTest, ReadsEachTokenizerLayout) {
  struct Layout {
    const char* file;
    int32_t bos;
    std::vector<int32_t> label_words;  // " terrible", " great"
  };
  for (const Layout& layout : {Layout{"llama3/tokenizer.json", 128000, {17936, 2294}},
                               Layout{"llama2/tokenizer.model", 1, {16403, 2107}}}) {
    // Sanitizer builds cannot read SentencePiece models.
    if (absl::string_view(layout.file).find(".model") != absl::string_view::npos &&
        !SentencePieceTokenizer::Available()) {
      continue;
    }
    const std::string dir = SyntheticDir("layout");
    std::filesystem::remove(dir + "/vocab.json");
    std::filesystem::remove(dir + "/merges.txt");
    const std::filesystem::path file = TestData(layout.file);
    std::filesystem::copy_file(file, dir + "/" + file.filename().string(),
                               std::filesystem::copy_options::overwrite_existing);
    ModelSpec model = Model();
    model.set_family(LLAMA);
    model.set_vocab_size(1 << 18);
    absl::StatusOr<TrainingTask> task = LoadTask(dir, "sst2", model, 64);
    ASSERT_TRUE(task.ok()) << layout.file << ": " << task.status();
    EXPECT_EQ(task->label_words, layout.label_words) << layout.file;
    EXPECT_EQ(task->train.tokens[0], layout.bos) << layout.file;
    EXPECT_EQ(task->dev.size(), 512);
    std::filesystem::remove_all(dir);
  }
}

TEST(LoadTaskTest, NamesTheTokenizerLayoutsWhenThereIsNone) {
  const std::string dir = SyntheticDir("no_tokenizer");
  std::filesystem::remove(dir + "/vocab.json");
  std::filesystem::remove(dir + "/merges.txt");
  const absl::Status status = LoadTask(dir, "sst2", Model(), 64).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(status.message(), "no tokenizer in " + dir + ": expected tokenizer.model"));
  EXPECT_TRUE(Contains(status.message(), "tokenizer.json"));
  EXPECT_TRUE(Contains(status.message(), "vocab.json and merges.txt"));
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
