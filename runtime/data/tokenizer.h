// What the runtime asks of a model family's tokenizer, whatever its files:
// GPT-2's vocab.json + merges.txt (OPT, GPT-2: bpe_tokenizer.h), Hugging
// Face's tokenizer.json (Llama-3, Qwen2.5, Qwen3: tokenizer_json.h), or a
// SentencePiece tokenizer.model (LLaMA-2: sentencepiece_tokenizer.h).
// LoadTokenizer (load_tokenizer.h) picks the one a directory holds.
//
// Encoding never adds the BOS token: prompts.h puts bos_token() first.
//
// Thread-safety: const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace zosched {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // The token ids of `text` as the family's reference tokenizer encodes a
  // whole text on its own (Hugging Face's with add_special_tokens=False;
  // SentencePiece's own), without BOS. Never fails: any bytes are accepted.
  // Byte-level BPE encodes ill-formed UTF-8 byte by byte and Decode gives it
  // back; SentencePiece reads each ill-formed byte as U+FFFD.
  virtual std::vector<int32_t> Encode(absl::string_view text) const = 0;

  // The token ids of `text` where it continues other text (a prompt's
  // suffix, a label word " great"): Encode(a + b) == Encode(a) +
  // EncodeContinuation(b) when `b` starts with a space and `a` ends in
  // neither a space nor a special token. Equal to Encode for byte-level
  // BPE; SentencePiece leaves out the space it puts before a whole text
  // (its "dummy prefix").
  virtual std::vector<int32_t> EncodeContinuation(absl::string_view text) const = 0;

  // The text of `ids`. Errors: InvalidArgument for an id that no token has.
  virtual absl::StatusOr<std::string> Decode(absl::Span<const int32_t> ids) const = 0;

  // The id of `token` spelt as the tokenizer's files spell it ("Ġgreat",
  // "</s>", "<|begin_of_text|>", "▁great"), or -1.
  virtual int32_t TokenId(absl::string_view token) const = 0;

  // One more than the largest id.
  virtual int64_t vocab_size() const = 0;

  // The token the family's tokenizer puts before every text (spelt as
  // TokenId takes it), or "" for none: OPT "</s>", LLaMA-2 "<s>", Llama-3
  // "<|begin_of_text|>"; GPT-2 and Qwen none.
  virtual const std::string& bos_token() const = 0;

  // The files the tokenizer was read from, for messages: "DIR/vocab.json and
  // DIR/merges.txt", "DIR/tokenizer.json", "DIR/tokenizer.model".
  virtual const std::string& files() const = 0;
};

}  // namespace zosched
