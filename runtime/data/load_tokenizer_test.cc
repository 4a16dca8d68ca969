#include "runtime/data/load_tokenizer.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "gtest/gtest.h"
#include "runtime/data/sentencepiece_tokenizer.h"

namespace zosched {
namespace {

namespace fs = std::filesystem;

::testing::AssertionResult Contains(absl::string_view text, absl::string_view part) {
  if (text.find(part) != absl::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

std::string TestData(absl::string_view relative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  EXPECT_TRUE(srcdir != nullptr && workspace != nullptr) << "run me with bazel test";
  return absl::StrCat(srcdir == nullptr ? "" : srcdir, "/", workspace == nullptr ? "" : workspace,
                      "/runtime/data/testdata/", relative);
}

// A fresh directory `name` holding copies of testdata files (`files`:
// paths under runtime/data/testdata/).
std::string Directory(const std::string& name, const std::vector<std::string>& files) {
  const std::string dir = ::testing::TempDir() + "/load_tokenizer_test_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const std::string& file : files) {
    fs::copy_file(TestData(file), dir + "/" + fs::path(file).filename().string());
  }
  return dir;
}

TEST(LoadTokenizerTest, Gpt2Files) {
  const std::string dir = Directory("gpt2", {"gpt2/vocab.json", "gpt2/merges.txt"});
  absl::StatusOr<std::unique_ptr<Tokenizer>> tok = LoadTokenizer(dir, "");
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->files(), dir + "/vocab.json and " + dir + "/merges.txt");
  EXPECT_EQ((*tok)->bos_token(), "");
  EXPECT_EQ((*tok)->vocab_size(), 50257);
  // The BOS of GPT-2's files is the caller's (OPT's "</s>").
  tok = LoadTokenizer(dir, "</s>");
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->bos_token(), "</s>");
}

TEST(LoadTokenizerTest, TokenizerJsonWinsOverGpt2Files) {
  const std::string dir = Directory(
      "json", {"llama3/tokenizer.json", "gpt2/vocab.json", "gpt2/merges.txt"});
  absl::StatusOr<std::unique_ptr<Tokenizer>> tok = LoadTokenizer(dir, "</s>");
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->files(), dir + "/tokenizer.json");
  EXPECT_EQ((*tok)->bos_token(), "<|begin_of_text|>");
}

// LLaMA-2's repositories ship both: the SentencePiece model is read.
TEST(LoadTokenizerTest, TokenizerModelWinsOverTokenizerJson) {
  if (!SentencePieceTokenizer::Available()) GTEST_SKIP() << "no SentencePiece in this build";
  const std::string dir = Directory("model", {"llama2/tokenizer.model", "llama3/tokenizer.json"});
  absl::StatusOr<std::unique_ptr<Tokenizer>> tok = LoadTokenizer(dir, "");
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->files(), dir + "/tokenizer.model");
  EXPECT_EQ((*tok)->bos_token(), "<s>");
  EXPECT_EQ((*tok)->vocab_size(), 32000);
}

TEST(LoadTokenizerTest, Errors) {
  const std::string empty = Directory("empty", {});
  const absl::Status none = LoadTokenizer(empty, "").status();
  EXPECT_EQ(none.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(none.message(), "no tokenizer in " + empty + ": expected tokenizer.model "
                                       "(SentencePiece: LLaMA-2), tokenizer.json (Hugging Face's "
                                       "tokenizers: Llama-3.x, Qwen2.5, Qwen3, GPT-2) or "
                                       "vocab.json and merges.txt (GPT-2's files: OPT, GPT-2)"));
  EXPECT_EQ(LoadTokenizer("/nonexistent/dir", "").status().code(), absl::StatusCode::kNotFound);
  const std::string half = Directory("half", {"gpt2/vocab.json"});
  EXPECT_TRUE(Contains(LoadTokenizer(half, "").status().message(),
                       "no tokenizer in " + half + " (it has vocab.json but no merges.txt)"));
  // A malformed file: the reader's error, naming it.
  const std::string bad = Directory("bad", {});
  ASSERT_TRUE(WriteFile(bad + "/tokenizer.json", "{\"model\": 3}").ok());
  const absl::Status malformed = LoadTokenizer(bad, "").status();
  EXPECT_EQ(malformed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(malformed.message(), bad + "/tokenizer.json: model: missing, or not an object"));
}

}  // namespace
}  // namespace zosched
