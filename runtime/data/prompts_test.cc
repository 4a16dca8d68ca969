#include "runtime/data/prompts.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/data/bpe_tokenizer.h"

namespace zosched {
namespace {

::testing::AssertionResult Contains(absl::string_view text, absl::string_view part) {
  if (text.find(part) != absl::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

// Byte symbols 0..255, "</s>" 256, then whole-word tokens built by merges
// that extend "Ġ..." one character at a time; BOS `bos` ("</s>", as OPT's),
// in the vocabulary only `with_bos`.
BpeTokenizer MakeTokenizer(const std::vector<std::string>& words, bool with_bos = true,
                           const std::string& bos = "</s>") {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[ByteToUnicode(static_cast<uint8_t>(b))] = b;
  int id = 256;
  if (with_bos) vocab["</s>"] = id++;
  std::string merges = "#version: 0.2\n";
  for (const std::string& word : words) {
    std::string prefix = "\u0120";
    for (char c : word) {
      const std::string next = prefix + c;
      if (!vocab.contains(next)) {
        merges += prefix + " " + c + "\n";
        vocab[next] = id++;
      }
      prefix = next;
    }
  }
  absl::StatusOr<BpeTokenizer> tok =
      BpeTokenizer::FromStrings(vocab.dump(), "vocab.json", merges, "merges.txt", bos);
  EXPECT_TRUE(tok.ok()) << tok.status();
  return *std::move(tok);
}

TEST(PromptsTest, Sst2TemplateText) {
  const PromptText p = Sst2Prompt({" a gorgeous film \n", 1});
  EXPECT_EQ(p.body + p.suffix, "a gorgeous film It was");
  EXPECT_EQ(p.label, 1);
  const PromptTemplate t = Sst2Template(MakeTokenizer({}));
  EXPECT_EQ(t.bos_token, "</s>");
  EXPECT_EQ(t.label_words, (std::vector<std::string>{" terrible", " great"}));
}

TEST(PromptsTest, BoolqTemplateText) {
  const PromptText p = BoolqPrompt({"is the sky blue", "The sky is blue.", true});
  EXPECT_EQ(p.body + p.suffix, "The sky is blue. is the sky blue?");
  EXPECT_EQ(p.label, 1);
  EXPECT_EQ(BoolqPrompt({"q", "p", false}).label, 0);
  EXPECT_EQ(BoolqTemplate(MakeTokenizer({})).label_words, (std::vector<std::string>{" No", " Yes"}));
}

TEST(PromptsTest, EncodesWithBosAndMatchesWholeTextTokenization) {
  const BpeTokenizer tok = MakeTokenizer({"It", "was", "great", "terrible", "film"});
  const Sst2Example example{"a film.  ", 0};
  absl::StatusOr<EncodedExample> e = EncodeExample(tok, Sst2Template(tok), example, 64);
  ASSERT_TRUE(e.ok()) << e.status();
  std::vector<int32_t> expected = {tok.TokenId("</s>")};
  for (int32_t id : tok.Encode("a film. It was")) expected.push_back(id);
  EXPECT_EQ(e->ids, expected);
  EXPECT_EQ(e->length, static_cast<int64_t>(expected.size()));
  EXPECT_EQ(e->label, 0);
  // The suffix is two whole-word tokens.
  EXPECT_EQ(e->ids[e->length - 1], tok.TokenId("\u0120was"));
  EXPECT_EQ(e->ids[e->length - 2], tok.TokenId("\u0120It"));
}

// The BOS is the tokenizer's: none for GPT-2's.
TEST(PromptsTest, TheTemplatesTakeTheTokenizersBos) {
  const BpeTokenizer gpt2 = MakeTokenizer({"It", "was"}, /*with_bos=*/false, /*bos=*/"");
  EXPECT_EQ(Sst2Template(gpt2).bos_token, "");
  EXPECT_EQ(BoolqTemplate(gpt2).bos_token, "");
  absl::StatusOr<EncodedExample> e = EncodeExample(gpt2, Sst2Template(gpt2), {"ab", 1}, 64);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->ids, (std::vector<int32_t>{'a', 'b', gpt2.TokenId("\u0120It"),
                                          gpt2.TokenId("\u0120was")}));
}

TEST(PromptsTest, TruncatesTheBodyFromTheLeft) {
  const BpeTokenizer tok = MakeTokenizer({"It", "was", "one", "two", "three"});
  const Sst2Example example{"one two three", 1};
  // Full: </s> o n e Ġtwo Ġthree ĠIt Ġwas = 8 tokens.
  absl::StatusOr<EncodedExample> full = EncodeExample(tok, Sst2Template(tok), example, 8);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->length, 8);
  absl::StatusOr<EncodedExample> cut = EncodeExample(tok, Sst2Template(tok), example, 5);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->ids, (std::vector<int32_t>{tok.TokenId("</s>"), tok.TokenId("\u0120two"),
                                            tok.TokenId("\u0120three"), tok.TokenId("\u0120It"),
                                            tok.TokenId("\u0120was")}));
  absl::StatusOr<EncodedExample> bare = EncodeExample(tok, Sst2Template(tok), example, 3);
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->length, 3);
  const absl::Status too_short = EncodeExample(tok, Sst2Template(tok), example, 2).status();
  EXPECT_EQ(too_short.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(too_short.message(), "prompt suffix ' It was' needs 3 tokens with BOS, more than max_len 2"));
}

TEST(PromptsTest, BoolqKeepsTheQuestion) {
  const BpeTokenizer tok = MakeTokenizer({"is", "it", "No", "Yes"});
  absl::StatusOr<EncodedExample> e =
      EncodeExample(tok, BoolqTemplate(tok), BoolqExample{"is it", "abc", true}, 6);
  ASSERT_TRUE(e.ok()) << e.status();
  // </s> [a b c] Ġis Ġit ? -> 7 tokens; truncation drops "a".
  EXPECT_EQ(e->ids, (std::vector<int32_t>{tok.TokenId("</s>"), 'b', 'c', tok.TokenId("\u0120is"),
                                          tok.TokenId("\u0120it"), '?'}));
  EXPECT_EQ(e->label, 1);
}

TEST(PromptsTest, LabelWordIds) {
  const BpeTokenizer tok = MakeTokenizer({"great", "terrible", "No", "Yes"});
  absl::StatusOr<std::vector<int32_t>> ids = LabelWordIds(tok, Sst2Template(tok));
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<int32_t>{tok.TokenId("\u0120terrible"), tok.TokenId("\u0120great")}));
  ids = LabelWordIds(tok, BoolqTemplate(tok));
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, (std::vector<int32_t>{tok.TokenId("\u0120No"), tok.TokenId("\u0120Yes")}));
}

TEST(PromptsTest, Errors) {
  const BpeTokenizer tok = MakeTokenizer({"great"});
  const absl::Status words = LabelWordIds(tok, Sst2Template(tok)).status();
  EXPECT_EQ(words.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(words.message(), "label word ' terrible' of the SST-2 template is 9 tokens [32, 116,"));
  EXPECT_TRUE(Contains(words.message(),
                       "] with the tokenizer of vocab.json and merges.txt; each label word must be "
                       "one token of the vocabulary: use the model's own tokenizer files (the "
                       "tokenizer.json, tokenizer.model, or vocab.json and merges.txt that came "
                       "with its weights)"));
  const BpeTokenizer no_bos = MakeTokenizer({"great"}, /*with_bos=*/false);
  EXPECT_TRUE(Contains(EncodeExample(no_bos, Sst2Template(no_bos), Sst2Example{"x", 0}, 8).status().message(),
                       "BOS token '</s>' is not in the vocabulary"));
  EXPECT_TRUE(Contains(EncodePrompt(tok, Sst2Template(tok), {"x", " y", 2}, 8).status().message(),
                       "label 2 is not in [0, 2)"));
}

TEST(PromptsDeathTest, WrongTemplateIsABug) {
  const BpeTokenizer tok = MakeTokenizer({});
  EXPECT_DEATH(EncodeExample(tok, BoolqTemplate(tok), Sst2Example{"x", 0}, 8).status().IgnoreError(),
               "SST-2 template");
}

}  // namespace
}  // namespace zosched
