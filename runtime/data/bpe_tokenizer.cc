#include "runtime/data/bpe_tokenizer.h"

#include <array>
#include <queue>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "nlohmann/json.hpp"
#include "runtime/data/gpt2_char_class.h"
#include "runtime/data/utf8.h"

namespace zosched {
namespace {

using Json = nlohmann::json;

constexpr absl::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";

// Ids must stay below this (OPT's largest is ~50k): bounds the id table.
constexpr int64_t kMaxId = int64_t{1} << 24;

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

// GPT-2's bytes_to_unicode(): the code point of each byte.
const std::array<uint32_t, 256>& ByteCodePoints() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) ||
                             (b >= 0xae && b <= 0xff);
      t[b] = printable ? b : next++;
    }
    return t;
  }();
  return table;
}

// Code point -> byte for the byte alphabet (code points 0..323), else -1.
const std::array<int16_t, 324>& CodePointBytes() {
  static const std::array<int16_t, 324> table = [] {
    std::array<int16_t, 324> t;
    t.fill(-1);
    for (int b = 0; b < 256; ++b) t[ByteCodePoints()[b]] = static_cast<int16_t>(b);
    return t;
  }();
  return table;
}

// The GPT-2 class and the byte length of the character at byte `i` of
// `text`; an ill-formed UTF-8 byte is one character of class kOther.
struct Char {
  CharClass char_class;
  int length;
};
Char CharAt(absl::string_view text, size_t i) {
  const Utf8Char c = DecodeUtf8At(text, i);
  return {c.code_point == kIllFormedUtf8 ? CharClass::kOther : Gpt2CharClass(c.code_point),
          c.length};
}

// The length of the contraction ('s 't 're 've 'm 'll 'd, lower case only,
// as in GPT-2) at byte `i` of `text`, or 0.
size_t ContractionLength(absl::string_view text, size_t i) {
  if (text[i] != '\'' || i + 1 >= text.size()) return 0;
  const char c = text[i + 1];
  if (c == 's' || c == 't' || c == 'm' || c == 'd') return 2;
  if (i + 2 >= text.size()) return 0;
  const char d = text[i + 2];
  return (c == 'r' && d == 'e') || (c == 'v' && d == 'e') || (c == 'l' && d == 'l') ? 3 : 0;
}

uint64_t PairKey(int32_t left, int32_t right) {
  return static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32 | static_cast<uint32_t>(right);
}

}  // namespace

const std::string& ByteToUnicode(uint8_t b) {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    for (int i = 0; i < 256; ++i) AppendUtf8(ByteCodePoints()[i], &t[i]);
    return t;
  }();
  return table[b];
}

std::vector<absl::string_view> PreTokenize(absl::string_view text) {
  std::vector<absl::string_view> pieces;
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    size_t end = i + ContractionLength(text, i);
    if (end == i) {
      // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+': an optional ' ', then
      // a run of characters of one class.
      const size_t j = text[i] == ' ' ? i + 1 : i;
      if (j < n) {
        const CharClass run_class = CharAt(text, j).char_class;
        if (run_class != CharClass::kSpace) {
          end = j;
          for (Char c; end < n && (c = CharAt(text, end)).char_class == run_class;) end += c.length;
        }
      }
    }
    if (end == i) {
      // At whitespace (not a single ' ' before a non-space): '\s+(?!\S)'
      // takes the run but leaves its last character to what follows, if
      // anything does; '\s+' takes a lone whitespace character before a
      // non-space.
      size_t k = i, last = i;  // last: where the run's last character starts
      int count = 0;
      for (Char c; k < n && (c = CharAt(text, k)).char_class == CharClass::kSpace; ++count) {
        last = k;
        k += c.length;
      }
      end = k < n && count >= 2 ? last : k;
    }
    pieces.push_back(text.substr(i, end - i));
    i = end;
  }
  return pieces;
}

absl::StatusOr<BpeTokenizer> BpeTokenizer::FromFiles(const std::string& vocab_path,
                                                     const std::string& merges_path) {
  std::string vocab, merges;
  RETURN_IF_ERROR(ReadFileToString(vocab_path, &vocab));
  RETURN_IF_ERROR(ReadFileToString(merges_path, &merges));
  return FromStrings(vocab, vocab_path, merges, merges_path);
}

absl::StatusOr<BpeTokenizer> BpeTokenizer::FromStrings(absl::string_view vocab_json,
                                                       const std::string& vocab_name,
                                                       absl::string_view merges_txt,
                                                       const std::string& merges_name) {
  BpeTokenizer tok;
  tok.vocab_name_ = vocab_name;
  tok.merges_name_ = merges_name;
  Json json;  // the parser skips a leading byte order mark
  try {
    json = Json::parse(vocab_json.begin(), vocab_json.end());
  } catch (const Json::exception& e) {  // parse_error; out_of_range for a number like 1e999
    return absl::InvalidArgumentError(absl::StrCat(vocab_name, ": not valid JSON: ", e.what()));
  }
  if (!json.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(vocab_name, ": not a JSON object of token -> id but ", json.type_name()));
  }
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() >= kMaxId) {
      return absl::InvalidArgumentError(absl::StrCat(
          vocab_name, ": token '", it.key(), "': id ",
          // Not the text of an array or object: it could nest deeper than
          // the (recursive) serializer can go.
          it->is_structured() ? it->type_name() : it->dump(),
          " is not an integer in [0, ", kMaxId, ")"));
    }
    const int32_t id = static_cast<int32_t>(it->get<int64_t>());
    if (id >= static_cast<int64_t>(tok.id_to_token_.size())) {
      tok.id_to_token_.resize(id + 1);
      tok.id_used_.resize(id + 1, false);
    }
    if (tok.id_used_[id]) {
      return absl::InvalidArgumentError(absl::StrCat(vocab_name, ": tokens '",
                                                     tok.id_to_token_[id], "' and '", it.key(),
                                                     "' share id ", id));
    }
    tok.id_used_[id] = true;
    tok.id_to_token_[id] = it.key();
    tok.token_to_id_[it.key()] = id;
  }
  for (int b = 0; b < 256; ++b) {
    const int32_t id = tok.TokenId(ByteToUnicode(static_cast<uint8_t>(b)));
    if (id < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          vocab_name, ": the symbol '", ByteToUnicode(static_cast<uint8_t>(b)), "' of byte 0x",
          absl::Hex(b, absl::kZeroPad2), " is missing (a byte-level vocabulary has all 256)"));
    }
    tok.byte_ids_[b] = id;
  }

  absl::ConsumePrefix(&merges_txt, kUtf8ByteOrderMark);
  int32_t rank = 0;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(merges_txt, '\n')) {
    ++line_number;
    if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
    if (line_number == 1 && absl::StartsWith(line, "#version")) continue;
    if (line.empty()) continue;
    const std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
    const std::string where = absl::StrCat(merges_name, ":", line_number, ": ");
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "expected two space-separated symbols, got '", line, "'"));
    }
    const int32_t left = tok.TokenId(parts[0]);
    const int32_t right = tok.TokenId(parts[1]);
    const std::string merged = absl::StrCat(parts[0], parts[1]);
    const int32_t result = tok.TokenId(merged);
    for (const auto& [symbol, id] : {std::pair<absl::string_view, int32_t>{parts[0], left},
                                     {parts[1], right},
                                     {merged, result}}) {
      if (id < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "merge '", line, "': '", symbol, "' is not in ", vocab_name));
      }
    }
    tok.merges_.emplace(PairKey(left, right), std::make_pair(rank++, result));
  }
  return tok;
}

int32_t BpeTokenizer::TokenId(absl::string_view token) const {
  auto it = token_to_id_.find(token);
  return it == token_to_id_.end() ? -1 : it->second;
}

void BpeTokenizer::EncodeWord(absl::string_view word, std::vector<int32_t>* ids) const {
  // The word's symbols, a linked list over byte positions: a merged symbol
  // lives at its left part's position, its right part's becomes kMerged.
  constexpr int32_t kMerged = -1;
  const size_t n = word.size();  // also "none" in prev and next
  std::vector<int32_t> symbol(n);
  std::vector<size_t> prev(n), next(n);
  for (size_t i = 0; i < n; ++i) {
    symbol[i] = byte_ids_[static_cast<unsigned char>(word[i])];
    prev[i] = i == 0 ? n : i - 1;
    next[i] = i + 1;
  }
  // The adjacent pairs that have a merge, lowest rank first and, within a
  // rank, leftmost first. An entry goes stale when either symbol changes
  // (symbols only grow, so a changed one never comes back).
  struct Pair {
    int32_t rank;
    size_t position;  // of the left symbol
    int32_t left, right, merged;
  };
  const auto after = [](const Pair& a, const Pair& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.position > b.position;
  };
  std::priority_queue<Pair, std::vector<Pair>, decltype(after)> pairs(after);
  const auto push = [&](size_t i) {  // the pair of symbol i and the next one
    if (i >= n || next[i] >= n) return;
    const auto it = merges_.find(PairKey(symbol[i], symbol[next[i]]));
    if (it == merges_.end()) return;
    pairs.push({it->second.first, i, symbol[i], symbol[next[i]], it->second.second});
  };
  for (size_t i = 0; i + 1 < n; ++i) push(i);

  // Each round merges every occurrence of the lowest-ranked pair, left to
  // right, as encoder.py does; the pairs a round creates join the queue only
  // after it (encoder.py sees them in its next scan), even those of a lower
  // rank. O(n log n) for n bytes (rescanning the word for each merge, O(n^2),
  // takes minutes for a 1 MiB word).
  std::vector<size_t> merged_at;
  while (!pairs.empty()) {
    const int32_t rank = pairs.top().rank;
    merged_at.clear();
    while (!pairs.empty() && pairs.top().rank == rank) {
      const Pair pair = pairs.top();
      pairs.pop();
      const size_t i = pair.position;
      if (symbol[i] != pair.left || next[i] >= n || symbol[next[i]] != pair.right) continue;
      const size_t j = next[i];
      symbol[i] = pair.merged;
      symbol[j] = kMerged;
      next[i] = next[j];
      if (next[j] < n) prev[next[j]] = i;
      merged_at.push_back(i);
    }
    for (size_t i : merged_at) {
      push(prev[i]);
      push(i);
    }
  }
  for (size_t i = 0; i < n; i = next[i]) ids->push_back(symbol[i]);
}

std::vector<int32_t> BpeTokenizer::Encode(absl::string_view text) const {
  std::vector<int32_t> ids;
  for (absl::string_view word : PreTokenize(text)) EncodeWord(word, &ids);
  return ids;
}

absl::StatusOr<std::string> BpeTokenizer::Decode(absl::Span<const int32_t> ids) const {
  std::string text;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size() || !id_used_[id]) {
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", id, " is not in the vocabulary (", vocab_size(), " ids)"));
    }
    const std::string& token = id_to_token_[id];
    // Each character of the byte alphabet is its byte; any other character
    // (or ill-formed byte) of a special token is copied as it is.
    for (size_t i = 0; i < token.size();) {
      const Utf8Char c = DecodeUtf8At(token, i);
      if (c.code_point < CodePointBytes().size() && CodePointBytes()[c.code_point] >= 0) {
        text.push_back(static_cast<char>(CodePointBytes()[c.code_point]));
      } else {
        text.append(token, i, c.length);
      }
      i += c.length;
    }
  }
  return text;
}

}  // namespace zosched
