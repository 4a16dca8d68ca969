#include "runtime/data/bpe_tokenizer.h"

#include <utility>

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

}  // namespace

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

BpeTokenizer::BpeTokenizer(ByteLevelBpe bpe, std::string merges_name, std::string bos_token)
    : bpe_(std::move(bpe)),
      merges_name_(std::move(merges_name)),
      bos_token_(std::move(bos_token)),
      files_(absl::StrCat(bpe_.name(), " and ", merges_name_)) {}

absl::StatusOr<BpeTokenizer> BpeTokenizer::FromFiles(const std::string& vocab_path,
                                                     const std::string& merges_path,
                                                     std::string bos_token) {
  std::string vocab, merges;
  RETURN_IF_ERROR(ReadFileToString(vocab_path, &vocab));
  RETURN_IF_ERROR(ReadFileToString(merges_path, &merges));
  return FromStrings(vocab, vocab_path, merges, merges_path, std::move(bos_token));
}

absl::StatusOr<BpeTokenizer> BpeTokenizer::FromStrings(absl::string_view vocab_json,
                                                       const std::string& vocab_name,
                                                       absl::string_view merges_txt,
                                                       const std::string& merges_name,
                                                       std::string bos_token) {
  Json json;  // the parser skips a leading byte order mark
  try {
    json = Json::parse(vocab_json.begin(), vocab_json.end());
  } catch (const Json::exception& e) {  // parse_error; out_of_range for a number like 1e999
    return absl::InvalidArgumentError(absl::StrCat(vocab_name, ": not valid JSON: ", e.what()));
  }
  ASSIGN_OR_RETURN(ByteLevelBpe bpe, ByteLevelBpe::FromVocabJson(json, vocab_name));

  absl::ConsumePrefix(&merges_txt, kUtf8ByteOrderMark);
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
    const absl::Status merge = bpe.AddMerge(parts[0], parts[1]);
    if (!merge.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "merge '", line, "': ", merge.message()));
    }
  }
  return BpeTokenizer(std::move(bpe), merges_name, std::move(bos_token));
}

std::vector<int32_t> BpeTokenizer::Encode(absl::string_view text) const {
  std::vector<int32_t> ids;
  for (absl::string_view word : PreTokenize(text)) bpe_.EncodeWord(word, &ids);
  return ids;
}

absl::StatusOr<std::string> BpeTokenizer::Decode(absl::Span<const int32_t> ids) const {
  std::string text;
  for (int32_t id : ids) {
    if (!bpe_.HasId(id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", id, " is not in the vocabulary (", vocab_size(), " ids)"));
    }
    bpe_.AppendText(id, &text);
  }
  return text;
}

}  // namespace zosched
