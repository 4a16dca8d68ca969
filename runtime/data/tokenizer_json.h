// A byte-level BPE tokenizer read from Hugging Face's `tokenizer.json` (the
// `tokenizers` library's file): what Llama-3.x, Qwen2.5 and Qwen3 ship, and
// GPT-2 too.
//
// Encoding does what the `tokenizers` library does with such a file:
//  1. The added tokens (added_tokens: special ones such as
//     "<|begin_of_text|>", "<|im_end|>", and Qwen's non-special ones such as
//     "<think>") are found in the text as whole strings, leftmost first and,
//     of those starting at one place, the longest; each is its own id.
//  2. Each stretch of text between them is normalized (normalizer: none, or
//     NFC as in Qwen's: nfc.h),
//  3. split into pre-tokens by the pre_tokenizer's Split patterns, run as
//     written (regex_split.h), then by GPT-2's pattern where its ByteLevel
//     step says use_regex,
//  4. and each pre-token's bytes are mapped to the byte alphabet and merged
//     by rank (byte_level_bpe.h) — unless model.ignore_merges is set (as in
//     Llama-3's file) and the whole pre-token is in the vocabulary, which
//     then gives its id at once.
// bos_token() is the post_processor's: the special token before "$A" in a
// TemplateProcessing's single template ("<|begin_of_text|>" in Llama-3.x's
// file), or none (Qwen's ByteLevel post-processor adds nothing).
//
// What the reader accepts (anything else is an error that names it):
//   normalizer      null, or {"type": "NFC"}
//   pre_tokenizer   ByteLevel, or a Sequence of Split steps (a {"Regex"} or
//                   {"String"} pattern, behavior "Isolated", invert false)
//                   ending in one ByteLevel; ByteLevel without
//                   add_prefix_space
//   model           type BPE: vocab, merges ("LEFT RIGHT" strings or
//                   [LEFT, RIGHT] pairs), ignore_merges; no byte_fallback,
//                   dropout, continuing_subword_prefix or end_of_word_suffix
//   added_tokens    without lstrip, rstrip or single_word
//   post_processor  null, ByteLevel, TemplateProcessing with at most one
//                   special token, before $A; or a Sequence of those
//   decoder         null or ByteLevel
// (LLaMA-2's tokenizer.json, a SentencePiece conversion with byte_fallback,
// is not: its tokenizer.model is read instead, sentencepiece_tokenizer.h.)
// Truncation and padding settings are ignored, as transformers ignores them.
//
// Thread-safety: const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/data/byte_level_bpe.h"
#include "runtime/data/regex_split.h"
#include "runtime/data/tokenizer.h"

namespace zosched {

class TokenizerJson : public Tokenizer {
 public:
  // Reads the tokenizer.json at `path`.
  // Errors: NotFound if it cannot be read; InvalidArgument naming `path` and
  // the place in the file (e.g. "model.merges[12]", "pre_tokenizer.type"):
  // not valid JSON, a field missing or of the wrong type, something the
  // reader does not support (named, with what it does support), a pattern
  // PCRE2 refuses, the vocabulary's errors (ByteLevelBpe::FromVocabJson), a
  // merge whose parts or result are not tokens, an added token whose id or
  // content the vocabulary gives to another, a BOS that is not a token.
  static absl::StatusOr<TokenizerJson> FromFile(const std::string& path);

  // As FromFile, from the file's contents; `name` names it in errors.
  static absl::StatusOr<TokenizerJson> FromString(absl::string_view json, const std::string& name);

  std::vector<int32_t> Encode(absl::string_view text) const override;
  // Encode: byte-level pre-tokens need no marker for the start of a text.
  std::vector<int32_t> EncodeContinuation(absl::string_view text) const override {
    return Encode(text);
  }
  // Added tokens decode as their content, others through the byte alphabet.
  absl::StatusOr<std::string> Decode(absl::Span<const int32_t> ids) const override;
  // An added token's content, or a token of model.vocab.
  int32_t TokenId(absl::string_view token) const override;
  int64_t vocab_size() const override { return vocab_size_; }
  const std::string& bos_token() const override { return bos_token_; }
  const std::string& files() const override { return name_; }

  // Whether added token `token` is marked special (added_tokens' "special").
  // False for a token that is not an added token.
  bool IsSpecialAddedToken(absl::string_view token) const;

 private:
  struct AddedToken {
    std::string content;
    int32_t id;
    bool special;
  };
  class Parser;

  explicit TokenizerJson(ByteLevelBpe bpe) : bpe_(std::move(bpe)) {}

  // Appends the ids of `text`, which holds no added token, to `ids`.
  void EncodeOrdinary(absl::string_view text, std::vector<int32_t>* ids) const;

  std::string name_;
  ByteLevelBpe bpe_;
  bool nfc_ = false;
  bool ignore_merges_ = false;
  std::vector<RegexSplitter> splitters_;  // applied in order
  std::vector<AddedToken> added_;
  absl::flat_hash_map<std::string, int32_t> added_ids_;  // content -> index into added_
  // By first byte: indices into added_, longest content first.
  std::vector<std::vector<int32_t>> added_by_first_byte_ = std::vector<std::vector<int32_t>>(256);
  absl::flat_hash_map<int32_t, int32_t> added_by_id_;  // id -> index into added_
  std::string bos_token_;
  int64_t vocab_size_ = 0;
};

}  // namespace zosched
