#include "runtime/data/load_tokenizer.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/data/bpe_tokenizer.h"
#include "runtime/data/sentencepiece_tokenizer.h"
#include "runtime/data/tokenizer_json.h"

namespace zosched {
namespace {

bool IsFile(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& dir,
                                                        const std::string& gpt2_files_bos) {
  const std::string model = dir + "/tokenizer.model";
  const std::string json = dir + "/tokenizer.json";
  const std::string vocab = dir + "/vocab.json";
  const std::string merges = dir + "/merges.txt";
  if (IsFile(model)) {
    ASSIGN_OR_RETURN(SentencePieceTokenizer tokenizer, SentencePieceTokenizer::FromFile(model));
    return std::make_unique<SentencePieceTokenizer>(std::move(tokenizer));
  }
  if (IsFile(json)) {
    ASSIGN_OR_RETURN(TokenizerJson tokenizer, TokenizerJson::FromFile(json));
    return std::make_unique<TokenizerJson>(std::move(tokenizer));
  }
  if (IsFile(vocab) && IsFile(merges)) {
    ASSIGN_OR_RETURN(BpeTokenizer tokenizer, BpeTokenizer::FromFiles(vocab, merges, gpt2_files_bos));
    return std::make_unique<BpeTokenizer>(std::move(tokenizer));
  }
  const std::string found = IsFile(vocab)    ? " (it has vocab.json but no merges.txt)"
                            : IsFile(merges) ? " (it has merges.txt but no vocab.json)"
                                             : "";
  return absl::NotFoundError(absl::StrCat(
      "no tokenizer in ", dir, found,
      ": expected tokenizer.model (SentencePiece: LLaMA-2), tokenizer.json (Hugging Face's "
      "tokenizers: Llama-3.x, Qwen2.5, Qwen3, GPT-2) or vocab.json and merges.txt (GPT-2's "
      "files: OPT, GPT-2), as the model's Hugging Face repository ships them"));
}

}  // namespace zosched
