// The GPT-2 byte-level BPE tokenizer (what OPT, RoBERTa and GPT-2 use), read
// from Hugging Face's `vocab.json` and `merges.txt`.
//
// Encoding, as in Hugging Face's GPT2Tokenizer:
//  1. Pre-tokenization splits the text with GPT-2's pattern
//       's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//     implemented by hand over bytes (see PreTokenize).
//  2. Each piece's UTF-8 bytes are mapped to printable characters by the
//     byte-to-unicode table (ByteToUnicode: e.g. ' ' -> 'Ġ', '\n' -> 'Ċ').
//  3. Byte-pair merges apply by rank (lowest first, every occurrence of the
//     best pair, left to right) until no ranked pair remains.
//  4. Each resulting symbol is looked up in the vocabulary.
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
// give back `text`). The pattern's Unicode classes are approximated over
// bytes: letters \p{L} are A-Z, a-z and every byte >= 0x80 (so all non-ASCII
// characters, including non-ASCII punctuation and spaces, count as letters);
// digits \p{N} are 0-9; whitespace \s is space, \t, \n, \v, \f, \r. The
// contractions are matched case-sensitively, as in GPT-2.
std::vector<absl::string_view> PreTokenize(absl::string_view text);

class BpeTokenizer {
 public:
  // Reads Hugging Face's `vocab.json` (a JSON object token -> id, ids
  // non-negative and distinct) and `merges.txt` (an optional first line
  // starting with "#version", then one merge "LEFT RIGHT" per line in rank
  // order; empty lines ignored).
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

  // Token ids of `text` (any bytes; invalid UTF-8 is encoded byte by byte).
  // Never fails: every byte has a token and every merge result is in the
  // vocabulary (checked at load).
  std::vector<int32_t> Encode(absl::string_view text) const;

  // The text of `ids`: each token's symbols mapped back to bytes. Characters
  // outside the byte alphabet (in special tokens) are emitted as their UTF-8.
  // Errors: InvalidArgument for an id that no token has.
  absl::StatusOr<std::string> Decode(absl::Span<const int32_t> ids) const;

  // The id of `token` spelt as in vocab.json (e.g. "Ġgreat", "</s>"), or -1.
  int32_t TokenId(absl::string_view token) const;

  // One more than the largest id.
  int64_t vocab_size() const { return static_cast<int64_t>(id_to_token_.size()); }

 private:
  BpeTokenizer() = default;

  // Appends the ids of one pre-token to `ids`.
  void EncodeWord(absl::string_view word, std::vector<int32_t>* ids) const;

  absl::flat_hash_map<std::string, int32_t> token_to_id_;
  std::vector<std::string> id_to_token_;   // "" for unused ids
  std::vector<bool> id_used_;
  int32_t byte_ids_[256];                  // id of each byte's symbol
  // (left id, right id) -> (rank, merged id).
  absl::flat_hash_map<uint64_t, std::pair<int32_t, int32_t>> merges_;

};

}  // namespace zosched
