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
// No special tokens are added (OPT's leading "</s>" is the caller's: see
// prompts.h).
//
// Thread-safety: const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace zosched {

// The UTF-8 string GPT-2 uses for byte `b`: bytes '!'..'~', 0xA1..0xAC and
// 0xAE..0xFF map to the code point of the same value, the other 68 bytes
// (controls, space, 0x7F..0xA0, 0xAD) to code points 256, 257, ... in byte
// order.
const std::string& ByteToUnicode(uint8_t b);

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

class BpeTokenizer {
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
  static absl::StatusOr<BpeTokenizer> FromFiles(const std::string& vocab_path,
                                                const std::string& merges_path);

  // As FromFiles, from the files' contents; `vocab_name` and `merges_name`
  // name them in errors.
  static absl::StatusOr<BpeTokenizer> FromStrings(absl::string_view vocab_json,
                                                  const std::string& vocab_name,
                                                  absl::string_view merges_txt,
                                                  const std::string& merges_name);

  // Token ids of `text`: any bytes, ill-formed UTF-8 included (PreTokenize
  // says how it splits), and Decode gives `text` back. Never fails: every
  // byte has a token and every merge result is in the vocabulary (checked at
  // load).
  std::vector<int32_t> Encode(absl::string_view text) const;

  // The text of `ids`: each token's symbols mapped back to bytes. Characters
  // outside the byte alphabet (in special tokens) are emitted as their UTF-8.
  // Errors: InvalidArgument for an id that no token has.
  absl::StatusOr<std::string> Decode(absl::Span<const int32_t> ids) const;

  // The id of `token` spelt as in vocab.json (e.g. "Ġgreat", "</s>"), or -1.
  int32_t TokenId(absl::string_view token) const;

  // One more than the largest id.
  int64_t vocab_size() const { return static_cast<int64_t>(id_to_token_.size()); }

  // The files (or names) the tokenizer was read from, for messages.
  const std::string& vocab_name() const { return vocab_name_; }
  const std::string& merges_name() const { return merges_name_; }

 private:
  BpeTokenizer() = default;

  // Appends the ids of one pre-token to `ids`.
  void EncodeWord(absl::string_view word, std::vector<int32_t>* ids) const;

  std::string vocab_name_, merges_name_;
  absl::flat_hash_map<std::string, int32_t> token_to_id_;
  std::vector<std::string> id_to_token_;   // "" for unused ids
  std::vector<bool> id_used_;
  int32_t byte_ids_[256];                  // id of each byte's symbol
  // (left id, right id) -> (rank, merged id).
  absl::flat_hash_map<uint64_t, std::pair<int32_t, int32_t>> merges_;
};

}  // namespace zosched
