// LLaMA-2's tokenizer: a SentencePiece model (`tokenizer.model`), run by
// libsentencepiece itself (sentencepiece_model.h), as Meta's reference code
// and Hugging Face's LlamaTokenizer run it.
//
// Encode is SentencePiece's EncodeAsIds: the text gets a "▁" before it (the
// model's add_dummy_prefix), spaces become "▁", pieces come from the model's
// BPE, and a character without a piece becomes its UTF-8 bytes' pieces
// ("<0xF0>", ...: byte fallback). Special pieces written in the text
// ("<s>", "</s>") are text, as SentencePiece reads them (Hugging Face's slow
// LlamaTokenizer maps them to their ids instead). EncodeContinuation runs
// the same model with add_dummy_prefix cleared, so " great" after other
// text is "▁great", the one piece it is inside a sentence. bos_token() is
// the model's BOS piece ("<s>"), which LLaMA-2's tokenizers put first.
//
// Thread-safety: const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/data/sentencepiece_model.h"
#include "runtime/data/tokenizer.h"

namespace zosched {

class SentencePieceTokenizer : public Tokenizer {
 public:
  // Reads the SentencePiece model at `path`.
  // Errors: NotFound if it cannot be read; InvalidArgument naming `path`:
  // not a SentencePiece model (with SentencePiece's message), or a model
  // whose normalizer removes extra whitespace (remove_extra_whitespaces, not
  // LLaMA-2's: it would drop the space before a label word).
  static absl::StatusOr<SentencePieceTokenizer> FromFile(const std::string& path);

  // Whether this build can read SentencePiece models: not with
  // AddressSanitizer or ThreadSanitizer (sentencepiece_model.h).
  static bool Available() { return SentencePieceModel::Available(); }

  // As FromFile, from the file's bytes; `name` names it in errors.
  static absl::StatusOr<SentencePieceTokenizer> FromString(const std::string& model,
                                                           const std::string& name);

  // Ill-formed UTF-8 is encoded as U+FFFD, as SentencePiece does, so it
  // decodes as U+FFFD.
  std::vector<int32_t> Encode(absl::string_view text) const override;
  std::vector<int32_t> EncodeContinuation(absl::string_view text) const override;
  // Control pieces ("<s>", "</s>") decode to nothing, as in SentencePiece.
  absl::StatusOr<std::string> Decode(absl::Span<const int32_t> ids) const override;
  // A piece as the model spells it ("▁great", "<s>", "<0x0A>"), or -1.
  int32_t TokenId(absl::string_view token) const override;
  int64_t vocab_size() const override { return whole_->size(); }
  const std::string& bos_token() const override { return bos_token_; }
  const std::string& files() const override { return name_; }

 private:
  SentencePieceTokenizer(std::string name, std::unique_ptr<SentencePieceModel> whole,
                         std::unique_ptr<SentencePieceModel> continuation);

  std::string name_, bos_token_;
  std::unique_ptr<SentencePieceModel> whole_;         // as the model says
  std::unique_ptr<SentencePieceModel> continuation_;  // without the dummy prefix
};

}  // namespace zosched
