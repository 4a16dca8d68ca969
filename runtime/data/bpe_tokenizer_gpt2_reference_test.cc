// Differential test of BpeTokenizer against reference GPT-2 encoders: with
// OpenAI's real GPT-2 vocab.json and merges.txt, every line of a corpus of
// about 180,000 characters must encode to the ids that gpt-3-encoder and
// js-tiktoken both gave (runtime/data/testdata/gpt2/, written by
// tools/gpt2_reference/), and decode back to itself.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/files.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/data/bpe_tokenizer.h"

namespace zosched {
namespace {

// The path of a file of runtime/data/testdata/gpt2/ in the test's runfiles.
std::string TestFile(absl::string_view name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  EXPECT_TRUE(srcdir != nullptr && workspace != nullptr) << "run me with bazel test";
  return absl::StrCat(srcdir == nullptr ? "" : srcdir, "/", workspace == nullptr ? "" : workspace,
                      "/runtime/data/testdata/gpt2/", name);
}

std::string ReadTestFile(absl::string_view name) {
  std::string text;
  const absl::Status read = ReadFileToString(TestFile(name), &text);
  EXPECT_TRUE(read.ok()) << read;
  return text;
}

// The tokenizer of the real GPT-2 files, or null (with a test failure).
const BpeTokenizer* Gpt2() {
  static const BpeTokenizer* tokenizer = [] {
    absl::StatusOr<BpeTokenizer> t =
        BpeTokenizer::FromFiles(TestFile("vocab.json"), TestFile("merges.txt"));
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? new BpeTokenizer(*std::move(t)) : nullptr;
  }();
  return tokenizer;
}

// The lines of a file that ends in '\n', without the empty piece after it.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

TEST(BpeTokenizerGpt2ReferenceTest, LoadsTheRealFiles) {
  const BpeTokenizer* gpt2 = Gpt2();
  ASSERT_NE(gpt2, nullptr);
  EXPECT_EQ(gpt2->vocab_size(), 50257);
  EXPECT_EQ(gpt2->TokenId("<|endoftext|>"), 50256);
  EXPECT_EQ(gpt2->TokenId("\u0120the"), 262);
}

// A minus sign is a symbol, so " (\u2212" is one pre-token and one token.
TEST(BpeTokenizerGpt2ReferenceTest, MinusSignAfterParenthesisIsOneToken) {
  const BpeTokenizer* gpt2 = Gpt2();
  ASSERT_NE(gpt2, nullptr);
  EXPECT_EQ(gpt2->Encode(" (\u2212"), (std::vector<int32_t>{35508}));
  EXPECT_EQ(gpt2->Encode("a (\u22121)"), (std::vector<int32_t>{64, 35508, 16, 8}));
}

// The two characters the corpus leaves out, as OpenAI's encoder.py encodes
// them (ids from its algorithm run with Python's `regex` module): U+0085 is
// White_Space, U+FEFF is not. The JavaScript references, whose \s is the
// other way round, give 1587 227 64 and 87 220 171 119 123 64.
TEST(BpeTokenizerGpt2ReferenceTest, FollowsEncoderPyForU0085AndUfeff) {
  const BpeTokenizer* gpt2 = Gpt2();
  ASSERT_NE(gpt2, nullptr);
  // " ", "\u0085", "a": the space is a whitespace run of its own.
  EXPECT_EQ(gpt2->Encode(" \u0085a"), (std::vector<int32_t>{220, 126, 227, 64}));
  // "x", " \ufeff", "a": U+FEFF is "other", so the space stays with it.
  EXPECT_EQ(gpt2->Encode("x \ufeffa"), (std::vector<int32_t>{87, 27332, 119, 123, 64}));
}

TEST(BpeTokenizerGpt2ReferenceTest, EncodesTheCorpusAsTheReferencesDo) {
  const BpeTokenizer* gpt2 = Gpt2();
  ASSERT_NE(gpt2, nullptr);
  const std::vector<std::string> corpus = Lines(ReadTestFile("corpus.jsonl"));
  const std::vector<std::string> expected_lines = Lines(ReadTestFile("expected_ids.txt"));
  ASSERT_EQ(corpus.size(), expected_lines.size()) << "corpus.jsonl and expected_ids.txt";
  ASSERT_GT(corpus.size(), 1000u);

  int64_t lines = 0, characters = 0, tokens = 0, mismatches = 0;
  for (size_t line = 0; line < corpus.size(); ++line) {
    ++lines;
    const std::string where = absl::StrCat("corpus.jsonl:", line + 1);
    const std::string text = nlohmann::json::parse(corpus[line]).get<std::string>();
    std::vector<int32_t> expected;
    for (absl::string_view id : absl::StrSplit(expected_lines[line], ' ', absl::SkipEmpty())) {
      int32_t value;
      ASSERT_TRUE(absl::SimpleAtoi(id, &value)) << "expected_ids.txt:" << line + 1 << ": " << id;
      expected.push_back(value);
    }
    for (unsigned char c : text) characters += (c & 0xC0) != 0x80;  // UTF-8 lead bytes
    tokens += static_cast<int64_t>(expected.size());

    const std::vector<int32_t> actual = gpt2->Encode(text);
    if (actual != expected) {
      size_t first = 0;
      while (first < actual.size() && first < expected.size() && actual[first] == expected[first]) {
        ++first;
      }
      // Escaped as JSON (ASCII only), so every byte of the line shows.
      ADD_FAILURE() << where << ": " << nlohmann::json(text).dump(-1, ' ', true) << "\n  reference ["
                    << absl::StrJoin(expected, " ") << "]\n  ours      ["
                    << absl::StrJoin(actual, " ") << "]\n  first difference at token " << first;
      if (++mismatches >= 20) break;
      continue;
    }
    absl::StatusOr<std::string> decoded = gpt2->Decode(actual);
    ASSERT_TRUE(decoded.ok()) << where << ": " << decoded.status();
    EXPECT_EQ(*decoded, text) << where << ": decode(encode(x)) != x";
  }
  std::cout << "compared " << lines << " lines, " << characters << " characters, "
            << tokens << " tokens with the reference ids"
            << (mismatches >= 20 ? " (stopped at the 20th mismatch)" : "") << "\n";
}

}  // namespace
}  // namespace zosched
