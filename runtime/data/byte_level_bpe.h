// A byte-level BPE model: the vocabulary and ranked merges that GPT-2's
// tokenizer introduced and Llama-3 and Qwen reuse, shared by the readers of
// GPT-2's files (bpe_tokenizer.h) and of Hugging Face's tokenizer.json
// (tokenizer_json.h). It encodes one pre-token at a time; splitting text
// into pre-tokens is the reader's.
//
// Tokens are spelt in GPT-2's byte alphabet (ByteToUnicode): each byte of a
// token's text is one character, e.g. " great" is "Ġgreat".
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
#include "nlohmann/json.hpp"

namespace zosched {

// The UTF-8 string GPT-2 uses for byte `b`: bytes '!'..'~', 0xA1..0xAC and
// 0xAE..0xFF map to the code point of the same value, the other 68 bytes
// (controls, space, 0x7F..0xA0, 0xAD) to code points 256, 257, ... in byte
// order.
const std::string& ByteToUnicode(uint8_t b);

// `bytes` spelt in the byte alphabet: ByteToUnicode of each byte, joined.
std::string ByteLevelSymbols(absl::string_view bytes);

class ByteLevelBpe {
 public:
  // The vocabulary from a JSON object token -> id (vocab.json, or
  // tokenizer.json's model.vocab), without merges; `name` names it in errors
  // (e.g. "DIR/vocab.json").
  //
  // Errors: InvalidArgument naming `name`: not a JSON object, an id that is
  // not an integer in [0, 2^24), two tokens with one id, one of the 256 byte
  // symbols missing.
  static absl::StatusOr<ByteLevelBpe> FromVocabJson(const nlohmann::json& vocab,
                                                    const std::string& name);

  // Adds the merge of `left` and `right`, ranked after those added before. A
  // pair already added keeps its first rank.
  // Errors: InvalidArgument "'SYMBOL' is not in NAME" for the first of
  // `left`, `right` and their concatenation that is not a token (Hugging
  // Face's tokenizers refuses those too); the caller adds where it was.
  absl::Status AddMerge(absl::string_view left, absl::string_view right);

  // Appends the ids of `word` (any bytes, one pre-token) to `ids`: its bytes'
  // symbols, merged by rank (lowest first, every occurrence of the best pair
  // left to right, as OpenAI's encoder.py does) until no ranked pair
  // remains; O(n log n) for n bytes. Never fails: every byte has a token and
  // every merge's result is one.
  void EncodeWord(absl::string_view word, std::vector<int32_t>* ids) const;

  // The id of `token` as the vocabulary spells it (e.g. "Ġgreat"), or -1.
  int32_t TokenId(absl::string_view token) const;

  // Whether some token has id `id`.
  bool HasId(int32_t id) const {
    return id >= 0 && id < vocab_size() && id_used_[static_cast<size_t>(id)];
  }

  // Appends the text of token `id` (HasId(id) must hold) to `text`: each
  // character of the byte alphabet as its byte, any other character (in
  // special tokens such as "<|endoftext|>" spelt outside the alphabet) as
  // its UTF-8.
  void AppendText(int32_t id, std::string* text) const;

  // One more than the largest id.
  int64_t vocab_size() const { return static_cast<int64_t>(id_to_token_.size()); }

  // The name given to FromVocabJson.
  const std::string& name() const { return name_; }

 private:
  ByteLevelBpe() = default;

  std::string name_;
  absl::flat_hash_map<std::string, int32_t> token_to_id_;
  std::vector<std::string> id_to_token_;  // "" for unused ids
  std::vector<bool> id_used_;
  int32_t byte_ids_[256];                 // id of each byte's symbol
  int32_t next_rank_ = 0;
  // (left id, right id) -> (rank, merged id).
  absl::flat_hash_map<uint64_t, std::pair<int32_t, int32_t>> merges_;
};

}  // namespace zosched
