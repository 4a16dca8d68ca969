// The GPT-2 byte-level BPE tokenizer (what OPT, RoBERTa and GPT-2 use), read
// from Hugging Face's `vocab.json` and `merges.txt`.
//
// Encoding follows OpenAI's GPT-2 encoder (encoder.py), the ground truth
// where implementations differ (Hugging Face's GPT2Tokenizer agrees with it;
// JavaScript ports class U+0085 and U+FEFF differently, see PreTokenize):
//  1. Pre-tokenization splits the text with GPT-2's pattern
//       's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//     implemented by hand over UTF-8 characters (see PreTokenize).
//  2. Each piece's UTF-8 bytes are mapped to printable characters by the
//     byte-to-unicode table (ByteToUnicode: e.g. ' ' -> 'Ġ', '\n' -> 'Ċ').
//  3. Byte-pair merges apply by rank (lowest first, every occurrence of the
//     best pair, left to right) until no ranked pair remains; O(n log n) for
//     a piece of n bytes.
//  4. Each resulting symbol is looked up in the vocabulary.
// bpe_tokenizer_gpt2_reference_test checks all this against reference
// encoders with OpenAI's GPT-2 vocabulary.
//
// The merges (3) are ByteLevelBpe's (byte_level_bpe.h), shared with the
// tokenizer.json reader. No special tokens are added; GPT-2's files do not
// say which BOS the family puts first (OPT's tokenizer "</s>", GPT-2's
// none), so the caller names it (load_tokenizer.h) and prompts.h adds it.
//
// Thread-safety: const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/data/byte_level_bpe.h"
#include "runtime/data/tokenizer.h"

namespace zosched {

// Splits `text` into GPT-2 pre-tokens (views into `text`; concatenated they
// give back `text`), as OpenAI's encoder.py does with Python's `regex`
// module: the pattern's classes \p{L}, \p{N} and \s are those of
// gpt2_char_class.h (Unicode 17.0; \s is White_Space, as in encoder.py, not
// JavaScript's \s, which leaves out U+0085 and takes U+FEFF), the
// contractions are matched case-sensitively, and " ?" is U+0020 only. So
// " (\u2212" (a minus sign, Sm) is one piece, as "(" and "\u2212" are both
// neither letter, number nor space.
//
// Ill-formed UTF-8 (which encoder.py's text, a Python string, cannot hold)
// is not refused: each ill-formed byte counts as one character of none of
// the three classes, as a lone surrogate from Python's "surrogateescape"
// decoding would. So every byte sequence splits, and encodes, losslessly.
std::vector<absl::string_view> PreTokenize(absl::string_view text);

class BpeTokenizer : public Tokenizer {
 public:
  // Reads Hugging Face's `vocab.json` (a JSON object token -> id, ids
  // non-negative and distinct) and `merges.txt` (an optional first line
  // starting with "#version", then one merge "LEFT RIGHT" per line in rank
  // order; empty lines ignored). Both may start with a UTF-8 byte order mark
  // and end their lines in "\r\n".
  //
  // Errors: NotFound if a file cannot be read; InvalidArgument naming the
  // file and, for merges.txt (and vocab.json syntax errors), the line:
  // vocab.json not a JSON object of integer ids, a duplicate id, one of the
  // 256 byte symbols missing; a merge line not two space-separated symbols,
  // or a merge whose parts or result are not in the vocabulary (Hugging
  // Face's tokenizers refuses those too).
  //
  // `bos_token` is what bos_token() returns ("" for none); it need not be in
  // the vocabulary (prompts.h says so when it is not).
  static absl::StatusOr<BpeTokenizer> FromFiles(const std::string& vocab_path,
                                                const std::string& merges_path,
                                                std::string bos_token = "");

  // As FromFiles, from the files' contents; `vocab_name` and `merges_name`
  // name them in errors.
  static absl::StatusOr<BpeTokenizer> FromStrings(absl::string_view vocab_json,
                                                  const std::string& vocab_name,
                                                  absl::string_view merges_txt,
                                                  const std::string& merges_name,
                                                  std::string bos_token = "");

  // Token ids of `text`: any bytes, ill-formed UTF-8 included (PreTokenize
  // says how it splits), and Decode gives `text` back. Never fails: every
  // byte has a token and every merge result is in the vocabulary (checked at
  // load).
  std::vector<int32_t> Encode(absl::string_view text) const override;

  // Encode: GPT-2's pre-tokens start at a space anyway.
  std::vector<int32_t> EncodeContinuation(absl::string_view text) const override {
    return Encode(text);
  }

  // The text of `ids`: each token's symbols mapped back to bytes. Characters
  // outside the byte alphabet (in special tokens) are emitted as their UTF-8.
  // Errors: InvalidArgument for an id that no token has.
  absl::StatusOr<std::string> Decode(absl::Span<const int32_t> ids) const override;

  // The id of `token` spelt as in vocab.json (e.g. "Ġgreat", "</s>"), or -1.
  int32_t TokenId(absl::string_view token) const override { return bpe_.TokenId(token); }

  // One more than the largest id.
  int64_t vocab_size() const override { return bpe_.vocab_size(); }

  // The `bos_token` given to FromFiles.
  const std::string& bos_token() const override { return bos_token_; }

  // "VOCAB_NAME and MERGES_NAME".
  const std::string& files() const override { return files_; }

  // The files (or names) the tokenizer was read from, for messages.
  const std::string& vocab_name() const { return bpe_.name(); }
  const std::string& merges_name() const { return merges_name_; }

 private:
  BpeTokenizer(ByteLevelBpe bpe, std::string merges_name, std::string bos_token);

  ByteLevelBpe bpe_;
  std::string merges_name_, bos_token_, files_;
};

}  // namespace zosched
