#include "runtime/data/byte_level_bpe.h"

#include <array>
#include <queue>

#include "absl/strings/str_cat.h"
#include "runtime/data/utf8.h"

namespace zosched {
namespace {

using Json = nlohmann::json;

// Ids must stay below this (the zoo's largest vocabulary is ~152k): bounds
// the id table.
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

std::string ByteLevelSymbols(absl::string_view bytes) {
  std::string symbols;
  symbols.reserve(bytes.size() * 2);
  for (char c : bytes) symbols += ByteToUnicode(static_cast<uint8_t>(c));
  return symbols;
}

absl::StatusOr<ByteLevelBpe> ByteLevelBpe::FromVocabJson(const Json& vocab,
                                                         const std::string& name) {
  if (!vocab.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": not a JSON object of token -> id but ", vocab.type_name()));
  }
  ByteLevelBpe bpe;
  bpe.name_ = name;
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() >= kMaxId) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": token '", it.key(), "': id ",
          // Not the text of an array or object: it could nest deeper than
          // the (recursive) serializer can go.
          it->is_structured() ? it->type_name() : it->dump(),
          " is not an integer in [0, ", kMaxId, ")"));
    }
    const int32_t id = static_cast<int32_t>(it->get<int64_t>());
    if (id >= bpe.vocab_size()) {
      bpe.id_to_token_.resize(id + 1);
      bpe.id_used_.resize(id + 1, false);
    }
    if (bpe.id_used_[id]) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": tokens '", bpe.id_to_token_[id], "' and '", it.key(), "' share id ", id));
    }
    bpe.id_used_[id] = true;
    bpe.id_to_token_[id] = it.key();
    bpe.token_to_id_[it.key()] = id;
  }
  for (int b = 0; b < 256; ++b) {
    const int32_t id = bpe.TokenId(ByteToUnicode(static_cast<uint8_t>(b)));
    if (id < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": the symbol '", ByteToUnicode(static_cast<uint8_t>(b)), "' of byte 0x",
          absl::Hex(b, absl::kZeroPad2), " is missing (a byte-level vocabulary has all 256)"));
    }
    bpe.byte_ids_[b] = id;
  }
  return bpe;
}

absl::Status ByteLevelBpe::AddMerge(absl::string_view left, absl::string_view right) {
  const std::string merged = absl::StrCat(left, right);
  const int32_t ids[3] = {TokenId(left), TokenId(right), TokenId(merged)};
  const absl::string_view symbols[3] = {left, right, merged};
  for (int k = 0; k < 3; ++k) {
    if (ids[k] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("'", symbols[k], "' is not in ", name_));
    }
  }
  merges_.emplace(PairKey(ids[0], ids[1]), std::make_pair(next_rank_++, ids[2]));
  return absl::OkStatus();
}

int32_t ByteLevelBpe::TokenId(absl::string_view token) const {
  auto it = token_to_id_.find(token);
  return it == token_to_id_.end() ? -1 : it->second;
}

void ByteLevelBpe::EncodeWord(absl::string_view word, std::vector<int32_t>* ids) const {
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
  // rank. (Hugging Face's tokenizers merges one pair at a time instead; the
  // two agree whenever a merge's parts rank below it, as in every trained
  // vocabulary.) O(n log n) for n bytes (rescanning the word for each merge,
  // O(n^2), takes minutes for a 1 MiB word).
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

void ByteLevelBpe::AppendText(int32_t id, std::string* text) const {
  const std::string& token = id_to_token_[id];
  // Each character of the byte alphabet is its byte; any other character
  // (or ill-formed byte) of a special token is copied as it is.
  for (size_t i = 0; i < token.size();) {
    const Utf8Char c = DecodeUtf8At(token, i);
    if (c.code_point < CodePointBytes().size() && CodePointBytes()[c.code_point] >= 0) {
      text->push_back(static_cast<char>(CodePointBytes()[c.code_point]));
    } else {
      text->append(token, i, c.length);
    }
    i += c.length;
  }
}

}  // namespace zosched
