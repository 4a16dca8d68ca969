// Differential test of the LLaMA-2, Llama-3.x and Qwen tokenizers against
// their families' reference tokenizers, on the real tokenizer files: every
// line of a corpus of about 160,000 characters (tokenizer_corpus.jsonl) must
// encode to the reference's ids and decode back. The data, and which
// reference wrote which ids, are in runtime/data/testdata/{llama2,llama3,qwen}/
// (README.md there; written by tools/tokenizer_reference/). Also: each
// family's BOS and label words, prompts, and special tokens in text.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
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
#include "runtime/data/load_tokenizer.h"
#include "runtime/data/nfc.h"
#include "runtime/data/prompts.h"
#include "runtime/data/sentencepiece_tokenizer.h"
#include "runtime/data/tokenizer.h"
#include "runtime/data/tokenizer_json.h"

namespace zosched {
namespace {

// The path of `relative` under runtime/data/testdata/ in the runfiles.
std::string TestData(absl::string_view relative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  EXPECT_TRUE(srcdir != nullptr && workspace != nullptr) << "run me with bazel test";
  return absl::StrCat(srcdir == nullptr ? "" : srcdir, "/", workspace == nullptr ? "" : workspace,
                      "/runtime/data/testdata/", relative);
}

std::string ReadTestData(absl::string_view relative) {
  std::string text;
  const absl::Status read = ReadFileToString(TestData(relative), &text);
  EXPECT_TRUE(read.ok()) << read;
  return text;
}

// The lines of a file that ends in '\n', without the empty piece after it.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// A family's tokenizer directory and what its reference gave.
struct Family {
  const char* name;  // the folder under testdata/
  const char* bos_token;
  int32_t bos_id;  // -1 for none
  std::vector<int32_t> label_ids;  // " terrible", " great", " No", " Yes"
};

// The ids are those the references gave (tools/tokenizer_reference prints
// them): transformers' for Llama-3.1 and Qwen2.5/Qwen3, llama-tokenizer-js's
// (after other text) for LLaMA-2.
const Family kFamilies[] = {
    {"llama2", "<s>", 1, {16403, 2107, 1939, 3869}},
    {"llama3", "<|begin_of_text|>", 128000, {17936, 2294, 2360, 7566}},
    {"qwen", "", -1, {17478, 2244, 2308, 7414}},
};

// Skips the test when this build cannot read LLaMA-2's SentencePiece model
// (AddressSanitizer, ThreadSanitizer).
#define SKIP_IF_NO_SENTENCEPIECE(name)                                         \
  if (std::string(name) == "llama2" && !SentencePieceTokenizer::Available()) \
  GTEST_SKIP() << "no SentencePiece in this build"

// The tokenizer of a family's folder, loaded as a task directory is; null
// (with a test failure) if it does not load. Loaded once per folder.
const Tokenizer* Load(const std::string& name) {
  static auto* const loaded = new std::map<std::string, std::unique_ptr<Tokenizer>>();
  auto it = loaded->find(name);
  if (it == loaded->end()) {
    absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadTokenizer(TestData(name), "");
    EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
    it = loaded->emplace(name, tokenizer.ok() ? *std::move(tokenizer) : nullptr).first;
  }
  return it->second.get();
}

class TokenizerReferenceTest : public ::testing::TestWithParam<Family> {};

TEST_P(TokenizerReferenceTest, EncodesTheCorpusAsTheReferenceDoes) {
  const Family& family = GetParam();
  SKIP_IF_NO_SENTENCEPIECE(family.name);
  const Tokenizer* tokenizer = Load(family.name);
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<std::string> corpus = Lines(ReadTestData("tokenizer_corpus.jsonl"));
  const std::vector<std::string> expected_lines =
      Lines(ReadTestData(absl::StrCat(family.name, "/expected_ids.txt")));
  ASSERT_EQ(corpus.size(), expected_lines.size()) << "tokenizer_corpus.jsonl and expected_ids.txt";
  ASSERT_GT(corpus.size(), 1000u);
  const bool qwen = std::string(family.name) == "qwen";

  int64_t lines = 0, characters = 0, tokens = 0, mismatches = 0;
  for (size_t line = 0; line < corpus.size(); ++line) {
    ++lines;
    const std::string where = absl::StrCat(family.name, ": tokenizer_corpus.jsonl:", line + 1);
    const std::string text = nlohmann::json::parse(corpus[line]).get<std::string>();
    std::vector<int32_t> expected;
    for (absl::string_view id : absl::StrSplit(expected_lines[line], ' ', absl::SkipEmpty())) {
      int32_t value;
      ASSERT_TRUE(absl::SimpleAtoi(id, &value)) << "expected_ids.txt:" << line + 1 << ": " << id;
      expected.push_back(value);
    }
    for (unsigned char c : text) characters += (c & 0xC0) != 0x80;  // UTF-8 lead bytes
    tokens += static_cast<int64_t>(expected.size());

    const std::vector<int32_t> actual = tokenizer->Encode(text);
    if (actual != expected) {
      size_t first = 0;
      while (first < actual.size() && first < expected.size() && actual[first] == expected[first]) {
        ++first;
      }
      ADD_FAILURE() << where << ": " << nlohmann::json(text).dump(-1, ' ', true) << "\n  reference ["
                    << absl::StrJoin(expected, " ") << "]\n  ours      ["
                    << absl::StrJoin(actual, " ") << "]\n  first difference at token " << first;
      if (++mismatches >= 20) break;
      continue;
    }
    // Qwen's normalizer composes characters (NFC), so its ids decode to the
    // text in NFC.
    absl::StatusOr<std::string> decoded = tokenizer->Decode(actual);
    ASSERT_TRUE(decoded.ok()) << where << ": " << decoded.status();
    EXPECT_EQ(*decoded, qwen ? NormalizeNfc(text) : text) << where << ": decode(encode(x)) != x";
  }
  std::cout << family.name << ": compared " << lines << " lines, " << characters
            << " characters, " << tokens << " tokens with the reference ids"
            << (mismatches >= 20 ? " (stopped at the 20th mismatch)" : "") << "\n";
}

TEST_P(TokenizerReferenceTest, BosAndLabelWordsAreTheFamilys) {
  const Family& family = GetParam();
  SKIP_IF_NO_SENTENCEPIECE(family.name);
  const Tokenizer* tokenizer = Load(family.name);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->bos_token(), family.bos_token);
  if (family.bos_id >= 0) {
    EXPECT_EQ(tokenizer->TokenId(tokenizer->bos_token()), family.bos_id);
  }
  absl::StatusOr<std::vector<int32_t>> sst2 = LabelWordIds(*tokenizer, Sst2Template(*tokenizer));
  absl::StatusOr<std::vector<int32_t>> boolq = LabelWordIds(*tokenizer, BoolqTemplate(*tokenizer));
  ASSERT_TRUE(sst2.ok()) << sst2.status();
  ASSERT_TRUE(boolq.ok()) << boolq.status();
  EXPECT_EQ(*sst2, (std::vector<int32_t>{family.label_ids[0], family.label_ids[1]}));
  EXPECT_EQ(*boolq, (std::vector<int32_t>{family.label_ids[2], family.label_ids[3]}));
}

// A prompt encoded as body + suffix (the body cut from the left when too
// long) equals the whole prompt's text encoded at once, with the family's
// BOS first.
TEST_P(TokenizerReferenceTest, PromptsEncodeAsTheirWholeText) {
  const Family& family = GetParam();
  SKIP_IF_NO_SENTENCEPIECE(family.name);
  const Tokenizer* tokenizer = Load(family.name);
  ASSERT_NE(tokenizer, nullptr);
  for (const Sst2Example& example :
       {Sst2Example{"a gorgeous, witty, seductive movie.", 1},
        Sst2Example{"it's a charming and often affecting journey.", 1},
        Sst2Example{"unflinchingly bleak and desperate", 0},
        Sst2Example{"\u4e00\u90e8\u597d\u7535\u5f71\uff01 caf\u00e9 2024", 1}}) {
    absl::StatusOr<EncodedExample> encoded =
        EncodeExample(*tokenizer, Sst2Template(*tokenizer), example, 256);
    ASSERT_TRUE(encoded.ok()) << encoded.status();
    std::vector<int32_t> whole;
    if (family.bos_id >= 0) whole.push_back(family.bos_id);
    for (int32_t id : tokenizer->Encode(example.sentence + " It was")) whole.push_back(id);
    EXPECT_EQ(encoded->ids, whole) << family.name << ": " << example.sentence;
  }
  const BoolqExample boolq{"is the sky blue", "The sky is blue on a clear day.", true};
  absl::StatusOr<EncodedExample> encoded =
      EncodeExample(*tokenizer, BoolqTemplate(*tokenizer), boolq, 256);
  ASSERT_TRUE(encoded.ok()) << encoded.status();
  std::vector<int32_t> whole;
  if (family.bos_id >= 0) whole.push_back(family.bos_id);
  for (int32_t id : tokenizer->Encode(boolq.passage + " " + boolq.question + "?")) {
    whole.push_back(id);
  }
  EXPECT_EQ(encoded->ids, whole);
}

INSTANTIATE_TEST_SUITE_P(Families, TokenizerReferenceTest, ::testing::ValuesIn(kFamilies),
                         [](const ::testing::TestParamInfo<Family>& info) {
                           return std::string(info.param.name);
                         });

// GPT-2's files with GPT-2's BOS (none): the label words are one token each.
TEST(TokenizerReferenceGpt2Test, LabelWordsAndNoBos) {
  absl::StatusOr<std::unique_ptr<Tokenizer>> gpt2 = LoadTokenizer(TestData("gpt2"), "");
  ASSERT_TRUE(gpt2.ok()) << gpt2.status();
  const Tokenizer& tokenizer = **gpt2;
  EXPECT_EQ(tokenizer.bos_token(), "");
  absl::StatusOr<std::vector<int32_t>> sst2 = LabelWordIds(tokenizer, Sst2Template(tokenizer));
  absl::StatusOr<std::vector<int32_t>> boolq = LabelWordIds(tokenizer, BoolqTemplate(tokenizer));
  ASSERT_TRUE(sst2.ok()) << sst2.status();
  ASSERT_TRUE(boolq.ok()) << boolq.status();
  EXPECT_EQ(*sst2, (std::vector<int32_t>{tokenizer.TokenId("\u0120terrible"),
                                         tokenizer.TokenId("\u0120great")}));
  EXPECT_EQ(*boolq, (std::vector<int32_t>{tokenizer.TokenId("\u0120No"),
                                          tokenizer.TokenId("\u0120Yes")}));
}

// Llama-3 groups digits in threes, Qwen splits them one by one.
TEST(TokenizerReferenceDigitsTest, LongNumbers) {
  const Tokenizer* llama3 = Load("llama3");
  const Tokenizer* qwen = Load("qwen");
  ASSERT_NE(llama3, nullptr);
  ASSERT_NE(qwen, nullptr);
  EXPECT_EQ(llama3->Encode("1234567"), (std::vector<int32_t>{4513, 10961, 22}));
  EXPECT_EQ(qwen->Encode("1234567").size(), 7u);
}

// Special tokens written in the text are their ids in Llama-3 and Qwen;
// SentencePiece (LLaMA-2) reads "<s>" as text.
TEST(TokenizerReferenceSpecialTokensTest, InText) {
  const Tokenizer* llama3 = Load("llama3");
  const Tokenizer* qwen = Load("qwen");
  ASSERT_NE(llama3, nullptr);
  ASSERT_NE(qwen, nullptr);

  std::vector<int32_t> expected = {128000};
  for (int32_t id : llama3->Encode("Hi")) expected.push_back(id);
  expected.push_back(128001);
  EXPECT_EQ(llama3->Encode("<|begin_of_text|>Hi<|end_of_text|>"), expected);
  // Not a whole special token: text.
  const std::vector<int32_t> broken = llama3->Encode("<|begin_of_text");
  EXPECT_GT(broken.size(), 1u);
  EXPECT_EQ(std::count(broken.begin(), broken.end(), 128000), 0);

  expected = {151644};
  for (int32_t id : qwen->Encode("user\nHi")) expected.push_back(id);
  expected.push_back(151645);
  EXPECT_EQ(qwen->Encode("<|im_start|>user\nHi<|im_end|>"), expected);
  EXPECT_EQ(qwen->Encode("<think>"), (std::vector<int32_t>{151667}));
  EXPECT_EQ(qwen->Encode("</think>"), (std::vector<int32_t>{151668}));

  SKIP_IF_NO_SENTENCEPIECE("llama2");
  const Tokenizer* llama2 = Load("llama2");
  ASSERT_NE(llama2, nullptr);
  EXPECT_EQ(llama2->TokenId("<s>"), 1);
  EXPECT_EQ(llama2->TokenId("</s>"), 2);
  EXPECT_NE(llama2->Encode("<s>"), (std::vector<int32_t>{1}));
  EXPECT_GT(llama2->Encode("<s>").size(), 1u);
}

// One tokenizer.json serves Qwen2.5 and Qwen3: they share the vocabulary and
// merges (the generator checks), and Qwen2.5's added tokens have the same
// ids in Qwen3's file, which adds four of its own.
TEST(TokenizerReferenceQwenTest, SpecialTokensOfQwen25AndQwen3) {
  absl::StatusOr<TokenizerJson> qwen3 = TokenizerJson::FromFile(TestData("qwen/tokenizer.json"));
  ASSERT_TRUE(qwen3.ok()) << qwen3.status();
  const nlohmann::json qwen25 = nlohmann::json::parse(ReadTestData("qwen/qwen2_5_added_tokens.json"));
  ASSERT_EQ(qwen25.size(), 22u);
  for (auto it = qwen25.begin(); it != qwen25.end(); ++it) {
    const int32_t id = it->get<int32_t>();
    EXPECT_EQ(qwen3->TokenId(it.key()), id) << it.key();
    EXPECT_EQ(qwen3->Encode(it.key()), (std::vector<int32_t>{id})) << it.key();
  }
  EXPECT_EQ(qwen3->TokenId("<|endoftext|>"), 151643);
  EXPECT_EQ(qwen3->TokenId("<|im_start|>"), 151644);
  EXPECT_EQ(qwen3->TokenId("<|im_end|>"), 151645);
  EXPECT_TRUE(qwen3->IsSpecialAddedToken("<|im_end|>"));
  EXPECT_FALSE(qwen3->IsSpecialAddedToken("<tool_call>"));  // Qwen marks it not special
  for (const char* qwen3_only : {"<tool_response>", "</tool_response>", "<think>", "</think>"}) {
    EXPECT_FALSE(qwen25.contains(qwen3_only)) << qwen3_only;
    EXPECT_GE(qwen3->TokenId(qwen3_only), 151665) << qwen3_only;
  }
  EXPECT_EQ(qwen3->vocab_size(), 151669);
}

// SentencePiece's dummy prefix is the space before a whole text: a line
// after a space, continuing other text, encodes as the line on its own
// (the empty text gets no dummy prefix).
TEST(TokenizerReferenceLlama2Test, ContinuationIsTheDummyPrefix) {
  SKIP_IF_NO_SENTENCEPIECE("llama2");
  const Tokenizer* llama2 = Load("llama2");
  ASSERT_NE(llama2, nullptr);
  const std::vector<std::string> corpus = Lines(ReadTestData("tokenizer_corpus.jsonl"));
  for (size_t line = 0; line < corpus.size(); ++line) {
    const std::string text = nlohmann::json::parse(corpus[line]).get<std::string>();
    if (text.empty()) continue;
    ASSERT_EQ(llama2->EncodeContinuation(" " + text), llama2->Encode(text))
        << "tokenizer_corpus.jsonl:" << line + 1;
  }
  EXPECT_EQ(llama2->Encode(" great"), (std::vector<int32_t>{29871, 2107}));  // "▁", "▁great"
  EXPECT_EQ(llama2->EncodeContinuation(" great"), (std::vector<int32_t>{2107}));
}

}  // namespace
}  // namespace zosched
