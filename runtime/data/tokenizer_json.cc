#include "runtime/data/tokenizer_json.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "nlohmann/json.hpp"
#include "runtime/data/nfc.h"

namespace zosched {
namespace {

using Json = nlohmann::json;

// The pattern of a ByteLevel pre-tokenizer with use_regex (GPT-2's), as the
// tokenizers library writes it.
constexpr absl::string_view kByteLevelPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Added tokens' ids stay below this, as ByteLevelBpe's do.
constexpr int64_t kMaxId = int64_t{1} << 24;

// A JSON value for a message: short, never the text of a deep structure.
std::string Show(const Json& value) {
  if (value.is_structured()) return value.type_name();
  std::string text = value.dump();
  return text.size() > 80 ? absl::StrCat(text.substr(0, 77), "...") : text;
}

}  // namespace

// Reads one file's JSON into a TokenizerJson; every error names the file
// and the place in it.
class TokenizerJson::Parser {
 public:
  explicit Parser(const std::string& name) : name_(name) {}

  absl::StatusOr<TokenizerJson> Parse(absl::string_view text) {
    Json root;
    try {
      root = Json::parse(text.begin(), text.end());
    } catch (const Json::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(name_, ": not valid JSON: ", e.what()));
    }
    if (!root.is_object()) return Error("the file", "not a JSON object but " + Show(root));
    const Json& model = Member(root, "model");
    if (!model.is_object()) return Error("model", "missing, or not an object");
    ASSIGN_OR_RETURN(ByteLevelBpe bpe,
                     ByteLevelBpe::FromVocabJson(Member(model, "vocab"), name_ + ": model.vocab"));
    TokenizerJson tok(std::move(bpe));
    tok.name_ = name_;
    RETURN_IF_ERROR(ReadModel(model, &tok));
    RETURN_IF_ERROR(ReadNormalizer(Member(root, "normalizer"), &tok));
    RETURN_IF_ERROR(ReadPreTokenizer(Member(root, "pre_tokenizer"), &tok));
    RETURN_IF_ERROR(ReadAddedTokens(Member(root, "added_tokens"), &tok));
    RETURN_IF_ERROR(ReadPostProcessor(Member(root, "post_processor"), "post_processor", &tok));
    const Json& decoder = Member(root, "decoder");
    if (!decoder.is_null() && Type(decoder) != "ByteLevel") {
      return Unsupported("decoder.type", decoder, "null or ByteLevel");
    }
    if (!tok.bos_token_.empty() && tok.TokenId(tok.bos_token_) < 0) {
      return Error("post_processor", absl::StrCat("the BOS token '", tok.bos_token_,
                                                  "' is neither an added token nor in model.vocab"));
    }
    tok.vocab_size_ = tok.bpe_.vocab_size();
    for (const AddedToken& added : tok.added_) {
      tok.vocab_size_ = std::max<int64_t>(tok.vocab_size_, int64_t{added.id} + 1);
    }
    return tok;
  }

 private:
  static const Json& Member(const Json& object, const char* key) {
    static const Json* const kNull = new Json();
    if (!object.is_object()) return *kNull;
    const auto it = object.find(key);
    return it == object.end() ? *kNull : *it;
  }
  static std::string Type(const Json& object) {
    const Json& type = Member(object, "type");
    return type.is_string() ? type.get<std::string>() : "";
  }

  absl::Status Error(absl::string_view where, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": ", where, ": ", what));
  }
  absl::Status Unsupported(absl::string_view where, const Json& object,
                           absl::string_view supported) const {
    const Json& type = Member(object, "type");
    return Error(where, absl::StrCat(type.is_null() ? Show(object) : Show(type),
                                     " is not supported (supported: ", supported, ")"));
  }

  // object[key] as a bool; `fallback` when missing or null.
  absl::StatusOr<bool> Bool(const Json& object, const char* key, bool fallback,
                            absl::string_view where) const {
    const Json& value = Member(object, key);
    if (value.is_null()) return fallback;
    if (!value.is_boolean()) {
      return Error(absl::StrCat(where, ".", key), "not true or false but " + Show(value));
    }
    return value.get<bool>();
  }
  // Refuses object[key] unless missing, null or `empty` (false, "", 0).
  absl::Status Absent(const Json& object, const char* key, const Json& empty,
                      absl::string_view where, absl::string_view feature) const {
    const Json& value = Member(object, key);
    if (value.is_null() || value == empty) return absl::OkStatus();
    return Error(absl::StrCat(where, ".", key),
                 absl::StrCat(Show(value), ": ", feature, " is not supported"));
  }

  absl::Status ReadModel(const Json& model, TokenizerJson* tok) const {
    if (!Member(model, "type").is_null() && Type(model) != "BPE") {
      return Unsupported("model.type", model, "BPE");
    }
    RETURN_IF_ERROR(Absent(model, "byte_fallback", false, "model", "byte fallback"));
    RETURN_IF_ERROR(Absent(model, "dropout", 0.0, "model", "BPE dropout"));
    RETURN_IF_ERROR(Absent(model, "continuing_subword_prefix", "", "model", "a subword prefix"));
    RETURN_IF_ERROR(Absent(model, "end_of_word_suffix", "", "model", "an end-of-word suffix"));
    ASSIGN_OR_RETURN(tok->ignore_merges_, Bool(model, "ignore_merges", false, "model"));
    const Json& merges = Member(model, "merges");
    if (!merges.is_array()) return Error("model.merges", "missing, or not an array");
    for (size_t i = 0; i < merges.size(); ++i) {
      const Json& merge = merges[i];
      const std::string where = absl::StrCat("model.merges[", i, "]");
      std::string left, right;
      if (merge.is_string()) {
        const std::vector<std::string> parts = absl::StrSplit(merge.get<std::string>(), ' ');
        if (parts.size() == 2) left = parts[0], right = parts[1];
      } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
                 merge[1].is_string()) {
        left = merge[0].get<std::string>();
        right = merge[1].get<std::string>();
      }
      if (left.empty() || right.empty()) {
        return Error(where, "expected \"LEFT RIGHT\" or [\"LEFT\", \"RIGHT\"], got " +
                                (merge.is_array() ? merge.dump().substr(0, 80) : Show(merge)));
      }
      const absl::Status added = tok->bpe_.AddMerge(left, right);
      if (!added.ok()) return Error(where, added.message());
    }
    return absl::OkStatus();
  }

  absl::Status ReadNormalizer(const Json& normalizer, TokenizerJson* tok) const {
    if (normalizer.is_null()) return absl::OkStatus();
    if (Type(normalizer) != "NFC") {
      return Unsupported("normalizer.type", normalizer,
                         "null or NFC; for LLaMA-2 put its tokenizer.model beside it");
    }
    tok->nfc_ = true;
    return absl::OkStatus();
  }

  absl::Status ReadPreTokenizer(const Json& pre_tokenizer, TokenizerJson* tok) const {
    constexpr absl::string_view kSupported =
        "ByteLevel, or a Sequence of Split steps and a last ByteLevel";
    if (pre_tokenizer.is_null()) {
      return Error("pre_tokenizer",
                   absl::StrCat("missing: a byte-level BPE tokenizer has one (supported: ",
                                kSupported, "); for LLaMA-2 put its tokenizer.model beside it"));
    }
    std::vector<std::pair<std::string, const Json*>> steps;  // (where, step)
    if (Type(pre_tokenizer) == "Sequence") {
      const Json& list = Member(pre_tokenizer, "pretokenizers");
      if (!list.is_array()) return Error("pre_tokenizer.pretokenizers", "missing, or not an array");
      for (size_t i = 0; i < list.size(); ++i) {
        steps.emplace_back(absl::StrCat("pre_tokenizer.pretokenizers[", i, "]"), &list[i]);
      }
    } else {
      steps.emplace_back("pre_tokenizer", &pre_tokenizer);
    }
    for (size_t i = 0; i < steps.size(); ++i) {
      const std::string& where = steps[i].first;
      const Json& step = *steps[i].second;
      const std::string type = Type(step);
      if (type == "Split") {
        RETURN_IF_ERROR(ReadSplit(step, where, tok));
      } else if (type == "ByteLevel") {
        if (i + 1 != steps.size()) {
          return Error(where, absl::StrCat("ByteLevel must be the last step (supported: ",
                                           kSupported, ")"));
        }
        // The tokenizers library's default for add_prefix_space is true.
        ASSIGN_OR_RETURN(const bool prefix_space, Bool(step, "add_prefix_space", true, where));
        if (prefix_space) {
          return Error(absl::StrCat(where, ".add_prefix_space"),
                       "true (or missing) is not supported: a space before the text");
        }
        ASSIGN_OR_RETURN(const bool use_regex, Bool(step, "use_regex", true, where));
        if (use_regex) {
          ASSIGN_OR_RETURN(RegexSplitter gpt2, RegexSplitter::Compile(kByteLevelPattern));
          tok->splitters_.push_back(std::move(gpt2));
        }
      } else {
        return Unsupported(absl::StrCat(where, ".type"), step, kSupported);
      }
    }
    if (Type(*steps.back().second) != "ByteLevel") {
      return Error("pre_tokenizer", absl::StrCat("no ByteLevel step: only byte-level BPE is "
                                                 "supported (supported: ", kSupported, ")"));
    }
    return absl::OkStatus();
  }

  absl::Status ReadSplit(const Json& split, const std::string& where, TokenizerJson* tok) const {
    const Json& pattern = Member(split, "pattern");
    const Json& regex = Member(pattern, "Regex");
    const Json& literal = Member(pattern, "String");
    if (!(regex.is_string() || literal.is_string())) {
      return Error(absl::StrCat(where, ".pattern"),
                   "expected {\"Regex\": \"...\"} or {\"String\": \"...\"}");
    }
    const Json& behavior = Member(split, "behavior");
    if (behavior != "Isolated") {
      return Error(absl::StrCat(where, ".behavior"),
                   absl::StrCat(Show(behavior), " is not supported (supported: \"Isolated\")"));
    }
    ASSIGN_OR_RETURN(const bool invert, Bool(split, "invert", false, where));
    if (invert) return Error(absl::StrCat(where, ".invert"), "true is not supported");
    absl::StatusOr<RegexSplitter> splitter =
        regex.is_string() ? RegexSplitter::Compile(regex.get<std::string>())
                          : RegexSplitter::Compile(literal.get<std::string>(), /*literal=*/true);
    if (!splitter.ok()) return Error(absl::StrCat(where, ".pattern"), splitter.status().message());
    tok->splitters_.push_back(*std::move(splitter));
    return absl::OkStatus();
  }

  absl::Status ReadAddedTokens(const Json& added_tokens, TokenizerJson* tok) const {
    if (added_tokens.is_null()) return absl::OkStatus();
    if (!added_tokens.is_array()) return Error("added_tokens", "not an array");
    for (size_t i = 0; i < added_tokens.size(); ++i) {
      const Json& entry = added_tokens[i];
      const std::string where = absl::StrCat("added_tokens[", i, "]");
      const Json& id = Member(entry, "id");
      const Json& content = Member(entry, "content");
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= kMaxId) {
        return Error(absl::StrCat(where, ".id"),
                     absl::StrCat(Show(id), " is not an integer in [0, ", kMaxId, ")"));
      }
      if (!content.is_string() || content.get<std::string>().empty()) {
        return Error(absl::StrCat(where, ".content"), "missing, or not a non-empty string");
      }
      for (const char* flag : {"lstrip", "rstrip", "single_word"}) {
        ASSIGN_OR_RETURN(const bool set, Bool(entry, flag, false, where));
        if (set) return Error(absl::StrCat(where, ".", flag), "true is not supported");
      }
      ASSIGN_OR_RETURN(const bool special, Bool(entry, "special", false, where));
      AddedToken token{content.get<std::string>(), static_cast<int32_t>(id.get<int64_t>()),
                       special};
      const int32_t vocab_id = tok->bpe_.TokenId(token.content);
      if ((vocab_id >= 0 && vocab_id != token.id) ||
          (vocab_id < 0 && tok->bpe_.HasId(token.id))) {
        return Error(where, absl::StrCat("'", token.content, "' with id ", token.id,
                                         ": model.vocab gives ",
                                         vocab_id >= 0 ? "this token another id"
                                                       : "this id to another token"));
      }
      if (tok->added_ids_.contains(token.content) || tok->added_by_id_.contains(token.id)) {
        return Error(where, absl::StrCat("'", token.content, "' with id ", token.id,
                                         ": an earlier added token has this content or id"));
      }
      const int32_t index = static_cast<int32_t>(tok->added_.size());
      tok->added_ids_[token.content] = index;
      tok->added_by_id_[token.id] = index;
      tok->added_by_first_byte_[static_cast<unsigned char>(token.content[0])].push_back(index);
      tok->added_.push_back(std::move(token));
    }
    for (std::vector<int32_t>& bucket : tok->added_by_first_byte_) {
      std::stable_sort(bucket.begin(), bucket.end(), [tok](int32_t a, int32_t b) {
        return tok->added_[a].content.size() > tok->added_[b].content.size();
      });
    }
    return absl::OkStatus();
  }

  absl::Status ReadPostProcessor(const Json& processor, const std::string& where,
                                 TokenizerJson* tok) const {
    constexpr absl::string_view kSupported =
        "null, ByteLevel, TemplateProcessing, or a Sequence of those";
    if (processor.is_null()) return absl::OkStatus();
    const std::string type = Type(processor);
    if (type == "ByteLevel") return absl::OkStatus();  // offsets only
    if (type == "Sequence") {
      const Json& list = Member(processor, "processors");
      if (!list.is_array()) return Error(where + ".processors", "missing, or not an array");
      for (size_t i = 0; i < list.size(); ++i) {
        RETURN_IF_ERROR(ReadPostProcessor(list[i], absl::StrCat(where, ".processors[", i, "]"),
                                          tok));
      }
      return absl::OkStatus();
    }
    if (type != "TemplateProcessing") return Unsupported(where + ".type", processor, kSupported);
    const Json& single = Member(processor, "single");
    if (!single.is_array()) return Error(where + ".single", "missing, or not an array");
    std::vector<std::string> before;  // special tokens before $A
    bool sequence_seen = false;
    for (const Json& piece : single) {
      const Json& special = Member(Member(piece, "SpecialToken"), "id");
      if (Member(piece, "Sequence").is_object()) {
        sequence_seen = true;
      } else if (special.is_string() && !sequence_seen) {
        before.push_back(special.get<std::string>());
      } else {
        return Error(where + ".single",
                     "only special tokens before the sequence are supported (a BOS), not " +
                         piece.dump().substr(0, 80));
      }
    }
    if (!sequence_seen || before.size() > 1) {
      return Error(where + ".single", "expected at most one special token, then the sequence");
    }
    if (!before.empty()) {
      if (!tok->bos_token_.empty() && tok->bos_token_ != before[0]) {
        return Error(where, "a second TemplateProcessing with another BOS");
      }
      tok->bos_token_ = before[0];
    }
    return absl::OkStatus();
  }

  const std::string& name_;
};

absl::StatusOr<TokenizerJson> TokenizerJson::FromFile(const std::string& path) {
  std::string text;
  RETURN_IF_ERROR(ReadFileToString(path, &text));
  return FromString(text, path);
}

absl::StatusOr<TokenizerJson> TokenizerJson::FromString(absl::string_view json,
                                                        const std::string& name) {
  return Parser(name).Parse(json);
}

int32_t TokenizerJson::TokenId(absl::string_view token) const {
  const auto it = added_ids_.find(token);
  return it != added_ids_.end() ? added_[it->second].id : bpe_.TokenId(token);
}

bool TokenizerJson::IsSpecialAddedToken(absl::string_view token) const {
  const auto it = added_ids_.find(token);
  return it != added_ids_.end() && added_[it->second].special;
}

void TokenizerJson::EncodeOrdinary(absl::string_view text, std::vector<int32_t>* ids) const {
  if (text.empty()) return;
  const std::string normalized = nfc_ ? NormalizeNfc(text) : std::string();
  std::vector<absl::string_view> pieces = {nfc_ ? absl::string_view(normalized) : text};
  std::vector<absl::string_view> split;
  for (const RegexSplitter& splitter : splitters_) {
    split.clear();
    for (absl::string_view piece : pieces) splitter.Split(piece, &split);
    pieces.swap(split);
  }
  for (absl::string_view piece : pieces) {
    if (ignore_merges_) {
      const int32_t id = bpe_.TokenId(ByteLevelSymbols(piece));
      if (id >= 0) {
        ids->push_back(id);
        continue;
      }
    }
    bpe_.EncodeWord(piece, ids);
  }
}

std::vector<int32_t> TokenizerJson::Encode(absl::string_view text) const {
  std::vector<int32_t> ids;
  size_t ordinary = 0;  // where the text not yet encoded starts
  for (size_t i = 0; i < text.size(); ++i) {
    for (int32_t index : added_by_first_byte_[static_cast<unsigned char>(text[i])]) {
      const AddedToken& added = added_[index];
      if (text.compare(i, added.content.size(), added.content) != 0) continue;
      EncodeOrdinary(text.substr(ordinary, i - ordinary), &ids);
      ids.push_back(added.id);
      ordinary = i + added.content.size();
      i = ordinary - 1;
      break;
    }
  }
  EncodeOrdinary(text.substr(ordinary), &ids);
  return ids;
}

absl::StatusOr<std::string> TokenizerJson::Decode(absl::Span<const int32_t> ids) const {
  std::string text;
  for (int32_t id : ids) {
    const auto added = added_by_id_.find(id);
    if (added != added_by_id_.end()) {
      text += added_[added->second].content;
    } else if (bpe_.HasId(id)) {
      bpe_.AppendText(id, &text);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("token id ", id, " is not in ", name_, " (",
                                                     vocab_size_, " ids)"));
    }
  }
  return text;
}

}  // namespace zosched
