#include "runtime/data/tokenizer_json.h"

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/data/byte_level_bpe.h"

namespace zosched {
namespace {

using Json = nlohmann::json;

::testing::AssertionResult Contains(absl::string_view text, absl::string_view part) {
  if (text.find(part) != absl::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

// A small tokenizer.json in Llama-3's shape: the 256 byte symbols (ids
// 0..255), "ab" 256, "Ġab" 257, "abc" 258 (no merge builds it); a Split
// pattern then ByteLevel; added tokens "<|x|>" 300 (special, the BOS) and
// "<|x|>y" 301.
Json Small() {
  Json vocab = Json::object();
  for (int b = 0; b < 256; ++b) vocab[ByteToUnicode(static_cast<uint8_t>(b))] = b;
  vocab["ab"] = 256;
  vocab["\u0120ab"] = 257;
  vocab["abc"] = 258;
  Json json = Json::parse(R"({
    "version": "1.0", "truncation": null, "padding": null,
    "added_tokens": [
      {"id": 300, "content": "<|x|>", "single_word": false, "lstrip": false, "rstrip": false,
       "normalized": false, "special": true},
      {"id": 301, "content": "<|x|>y", "single_word": false, "lstrip": false, "rstrip": false,
       "normalized": false, "special": false}],
    "normalizer": null,
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": " ?\\p{L}+|\\p{N}{1,3}|\\s+|[^\\s\\p{L}\\p{N}]+"},
       "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]},
    "post_processor": {"type": "Sequence", "processors": [
      {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
      {"type": "TemplateProcessing",
       "single": [{"SpecialToken": {"id": "<|x|>", "type_id": 0}},
                  {"Sequence": {"id": "A", "type_id": 0}}],
       "pair": [], "special_tokens": {}}]},
    "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true,
                "use_regex": true},
    "model": {"type": "BPE", "dropout": null, "unk_token": null,
              "continuing_subword_prefix": null, "end_of_word_suffix": null,
              "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
              "merges": ["a b", "\u0120 ab"]}
  })");
  json["model"]["vocab"] = vocab;
  return json;
}

absl::StatusOr<TokenizerJson> Read(const Json& json) {
  return TokenizerJson::FromString(json.dump(), "T");
}

TEST(TokenizerJsonTest, Encodes) {
  absl::StatusOr<TokenizerJson> tok = Read(Small());
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->Encode("ab ab"), (std::vector<int32_t>{256, 257}));
  EXPECT_EQ(tok->Encode("abc"), (std::vector<int32_t>{256, 'c'}));
  EXPECT_EQ(tok->Encode(""), (std::vector<int32_t>{}));
  EXPECT_EQ(tok->EncodeContinuation(" ab"), tok->Encode(" ab"));
  EXPECT_EQ(tok->bos_token(), "<|x|>");
  EXPECT_EQ(tok->TokenId("<|x|>"), 300);
  EXPECT_EQ(tok->TokenId("\u0120ab"), 257);
  EXPECT_EQ(tok->TokenId("nope"), -1);
  EXPECT_EQ(tok->vocab_size(), 302);
  EXPECT_EQ(tok->files(), "T");
  EXPECT_TRUE(tok->IsSpecialAddedToken("<|x|>"));
  EXPECT_FALSE(tok->IsSpecialAddedToken("<|x|>y"));
  EXPECT_FALSE(tok->IsSpecialAddedToken("ab"));
}

// Added tokens: whole strings, leftmost first, then the longest.
TEST(TokenizerJsonTest, AddedTokensLeftmostLongest) {
  absl::StatusOr<TokenizerJson> tok = Read(Small());
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->Encode("a<|x|>b"), (std::vector<int32_t>{'a', 300, 'b'}));
  EXPECT_EQ(tok->Encode("a<|x|>yb"), (std::vector<int32_t>{'a', 301, 'b'}));
  EXPECT_EQ(tok->Encode("<|x|><|x|>"), (std::vector<int32_t>{300, 300}));
  EXPECT_EQ(tok->Encode("<|x|").size(), 4u);  // "<|", "x", "|": no added token
  absl::StatusOr<std::string> text = tok->Decode({'a', 301, 257, 300});
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "a<|x|>y ab<|x|>");
  EXPECT_TRUE(Contains(tok->Decode({299}).status().message(), "token id 299 is not in T"));
}

TEST(TokenizerJsonTest, MergesAsPairs) {
  Json json = Small();
  json["model"]["merges"] = Json::parse(R"([["a", "b"], ["\u0120", "ab"]])");
  absl::StatusOr<TokenizerJson> tok = Read(json);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->Encode("ab ab"), (std::vector<int32_t>{256, 257}));
}

// ignore_merges (Llama-3's): a pre-token in the vocabulary is its id, even
// when the merges would not build it.
TEST(TokenizerJsonTest, IgnoreMerges) {
  Json json = Small();
  json["model"]["ignore_merges"] = true;
  absl::StatusOr<TokenizerJson> tok = Read(json);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->Encode("abc abd"), (std::vector<int32_t>{258, 257, 'd'}));
}

TEST(TokenizerJsonTest, NfcNormalizer) {
  Json json = Small();
  json["normalizer"] = {{"type", "NFC"}};
  absl::StatusOr<TokenizerJson> tok = Read(json);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->Encode("e\u0301"), tok->Encode("\u00e9"));
  EXPECT_EQ(tok->Encode("e\u0301").size(), 2u);  // the two bytes of U+00E9
}

// GPT-2's tokenizer.json: one ByteLevel pre-tokenizer with use_regex, no BOS.
TEST(TokenizerJsonTest, Gpt2Shape) {
  Json json = Small();
  json["pre_tokenizer"] = Json::parse(
      R"({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true})");
  json["post_processor"] = Json::parse(
      R"({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true})");
  absl::StatusOr<TokenizerJson> tok = Read(json);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->Encode("ab ab's"), (std::vector<int32_t>{256, 257, '\'', 's'}));
  EXPECT_EQ(tok->bos_token(), "");
}

// Each error names the file, the place in it and what is wrong.
TEST(TokenizerJsonTest, Errors) {
  EXPECT_TRUE(Contains(TokenizerJson::FromString("{", "T").status().message(), "T: not valid JSON"));
  EXPECT_TRUE(Contains(TokenizerJson::FromString("[]", "T").status().message(),
                       "T: the file: not a JSON object but array"));
  EXPECT_EQ(TokenizerJson::FromFile("/nonexistent/tokenizer.json").status().code(),
            absl::StatusCode::kNotFound);
  const std::vector<std::pair<std::function<void(Json*)>, std::string>> cases = {
      {[](Json* j) { j->erase("model"); }, "T: model: missing, or not an object"},
      {[](Json* j) { (*j)["model"]["type"] = "Unigram"; },
       "T: model.type: \"Unigram\" is not supported (supported: BPE)"},
      {[](Json* j) { (*j)["model"]["byte_fallback"] = true; },
       "T: model.byte_fallback: true: byte fallback is not supported"},
      {[](Json* j) { (*j)["model"]["continuing_subword_prefix"] = "##"; },
       "T: model.continuing_subword_prefix: \"##\": a subword prefix is not supported"},
      {[](Json* j) { (*j)["model"]["vocab"]["dup"] = 256; },
       "T: model.vocab: tokens 'ab' and 'dup' share id 256"},
      {[](Json* j) { (*j)["model"]["merges"][1] = "a b c"; },
       "T: model.merges[1]: expected \"LEFT RIGHT\" or [\"LEFT\", \"RIGHT\"], got \"a b c\""},
      {[](Json* j) { (*j)["model"]["merges"][1] = "ab ab"; },
       "T: model.merges[1]: 'abab' is not in T: model.vocab"},
      {[](Json* j) { (*j)["normalizer"] = {{"type", "Sequence"}}; },
       "T: normalizer.type: \"Sequence\" is not supported (supported: null or NFC; for LLaMA-2 "
       "put its tokenizer.model beside it)"},
      {[](Json* j) { (*j)["pre_tokenizer"] = {{"type", "Metaspace"}}; },
       "T: pre_tokenizer.type: \"Metaspace\" is not supported (supported: ByteLevel, or a "
       "Sequence of Split steps and a last ByteLevel)"},
      {[](Json* j) { (*j)["pre_tokenizer"] = nullptr; }, "T: pre_tokenizer: missing"},
      {[](Json* j) { (*j)["pre_tokenizer"]["pretokenizers"].erase(1); },
       "T: pre_tokenizer: no ByteLevel step: only byte-level BPE is supported"},
      {[](Json* j) { (*j)["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Removed"; },
       "T: pre_tokenizer.pretokenizers[0].behavior: \"Removed\" is not supported (supported: "
       "\"Isolated\")"},
      {[](Json* j) { (*j)["pre_tokenizer"]["pretokenizers"][0]["invert"] = true; },
       "T: pre_tokenizer.pretokenizers[0].invert: true is not supported"},
      {[](Json* j) { (*j)["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(a"; },
       "T: pre_tokenizer.pretokenizers[0].pattern: regular expression '(a': missing closing "
       "parenthesis"},
      {[](Json* j) { (*j)["pre_tokenizer"]["pretokenizers"][1]["add_prefix_space"] = true; },
       "T: pre_tokenizer.pretokenizers[1].add_prefix_space: true (or missing) is not supported"},
      {[](Json* j) { (*j)["added_tokens"][0]["lstrip"] = true; },
       "T: added_tokens[0].lstrip: true is not supported"},
      {[](Json* j) { (*j)["added_tokens"][0]["id"] = 256; },
       "T: added_tokens[0]: '<|x|>' with id 256: model.vocab gives this id to another token"},
      {[](Json* j) { (*j)["added_tokens"][1]["id"] = 300; },
       "T: added_tokens[1]: '<|x|>y' with id 300: an earlier added token has this content or id"},
      {[](Json* j) { (*j)["added_tokens"][0]["id"] = "300"; },
       "T: added_tokens[0].id: \"300\" is not an integer in [0, 16777216)"},
      {[](Json* j) {
         (*j)["post_processor"]["processors"][1]["single"][0]["SpecialToken"]["id"] = "<|no|>";
       },
       "T: post_processor: the BOS token '<|no|>' is neither an added token nor in model.vocab"},
      {[](Json* j) {
         (*j)["post_processor"]["processors"][1]["single"].push_back(
             {{"SpecialToken", {{"id", "<|x|>"}, {"type_id", 0}}}});
       },
       "T: post_processor.processors[1].single: only special tokens before the sequence are "
       "supported (a BOS)"},
      {[](Json* j) { (*j)["post_processor"] = {{"type", "RobertaProcessing"}}; },
       "T: post_processor.type: \"RobertaProcessing\" is not supported"},
      {[](Json* j) { (*j)["decoder"] = {{"type", "WordPiece"}}; },
       "T: decoder.type: \"WordPiece\" is not supported (supported: null or ByteLevel)"},
  };
  for (const auto& [mutate, message] : cases) {
    Json json = Small();
    mutate(&json);
    const absl::Status status = Read(json).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_TRUE(Contains(status.message(), message));
  }
}

}  // namespace
}  // namespace zosched
