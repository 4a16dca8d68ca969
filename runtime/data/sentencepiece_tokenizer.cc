#include "runtime/data/sentencepiece_tokenizer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/status_macros.h"

namespace zosched {

SentencePieceTokenizer::SentencePieceTokenizer(std::string name,
                                               std::unique_ptr<SentencePieceModel> whole,
                                               std::unique_ptr<SentencePieceModel> continuation)
    : name_(std::move(name)),
      bos_token_(whole->BosPiece()),
      whole_(std::move(whole)),
      continuation_(std::move(continuation)) {}

absl::StatusOr<SentencePieceTokenizer> SentencePieceTokenizer::FromFile(const std::string& path) {
  std::string model;
  RETURN_IF_ERROR(ReadFileToString(path, &model));
  return FromString(model, path);
}

absl::StatusOr<SentencePieceTokenizer> SentencePieceTokenizer::FromString(
    const std::string& model, const std::string& name) {
  std::string error;
  SentencePieceModel::Spaces spaces;
  if (!SentencePieceModel::ReadSpaces(model, &spaces, &error)) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", error));
  }
  std::unique_ptr<SentencePieceModel> whole =
      SentencePieceModel::Load(model, /*dummy_prefix=*/spaces.add_dummy_prefix, &error);
  std::unique_ptr<SentencePieceModel> continuation =
      whole == nullptr ? nullptr : SentencePieceModel::Load(model, /*dummy_prefix=*/false, &error);
  if (whole == nullptr || continuation == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", error));
  }
  if (spaces.remove_extra_whitespaces) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": the model's normalizer removes extra whitespace (remove_extra_whitespaces), "
              "which would drop the space before a prompt's suffix and label words; not "
              "supported (LLaMA-2's tokenizer.model keeps whitespace)"));
  }
  return SentencePieceTokenizer(name, std::move(whole), std::move(continuation));
}

namespace {

std::vector<int32_t> ToIds(const std::vector<int>& ids) {
  return std::vector<int32_t>(ids.begin(), ids.end());
}

}  // namespace

std::vector<int32_t> SentencePieceTokenizer::Encode(absl::string_view text) const {
  return ToIds(whole_->Encode(std::string_view(text.data(), text.size())));
}

std::vector<int32_t> SentencePieceTokenizer::EncodeContinuation(absl::string_view text) const {
  return ToIds(continuation_->Encode(std::string_view(text.data(), text.size())));
}

absl::StatusOr<std::string> SentencePieceTokenizer::Decode(absl::Span<const int32_t> ids) const {
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", id, " is not in ", name_, " (", vocab_size(), " ids)"));
    }
  }
  return whole_->Decode(std::vector<int>(ids.begin(), ids.end()));
}

int32_t SentencePieceTokenizer::TokenId(absl::string_view token) const {
  return whole_->PieceId(std::string_view(token.data(), token.size()));
}

}  // namespace zosched
