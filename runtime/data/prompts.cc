#include "runtime/data/prompts.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/check.h"

namespace zosched {

PromptTemplate Sst2Template(const Tokenizer& tokenizer) {
  return {PromptTask::kSst2, tokenizer.bos_token(), {" terrible", " great"}};
}

PromptTemplate BoolqTemplate(const Tokenizer& tokenizer) {
  return {PromptTask::kBoolq, tokenizer.bos_token(), {" No", " Yes"}};
}

PromptText Sst2Prompt(const Sst2Example& example) {
  return {std::string(absl::StripAsciiWhitespace(example.sentence)), " It was", example.label};
}

PromptText BoolqPrompt(const BoolqExample& example) {
  return {example.passage, absl::StrCat(" ", example.question, "?"), example.answer ? 1 : 0};
}

absl::StatusOr<EncodedExample> EncodePrompt(const Tokenizer& tokenizer,
                                            const PromptTemplate& prompt_template,
                                            const PromptText& prompt, int64_t max_len) {
  if (prompt.label < 0 || prompt.label >= static_cast<int>(prompt_template.label_words.size())) {
    return absl::InvalidArgumentError(absl::StrCat("label ", prompt.label, " is not in [0, ",
                                                    prompt_template.label_words.size(), ")"));
  }
  EncodedExample out;
  out.label = prompt.label;
  if (!prompt_template.bos_token.empty()) {
    const int32_t bos = tokenizer.TokenId(prompt_template.bos_token);
    if (bos < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "BOS token '", prompt_template.bos_token, "' is not in the vocabulary"));
    }
    out.ids.push_back(bos);
  }
  const std::vector<int32_t> body = tokenizer.Encode(prompt.body);
  const std::vector<int32_t> suffix = tokenizer.EncodeContinuation(prompt.suffix);
  const int64_t fixed = static_cast<int64_t>(out.ids.size() + suffix.size());
  if (fixed > max_len) {
    return absl::InvalidArgumentError(absl::StrCat(
        "prompt suffix '", prompt.suffix, "' needs ", fixed, " tokens with BOS, more than max_len ",
        max_len));
  }
  const int64_t keep = std::min<int64_t>(body.size(), max_len - fixed);
  out.ids.insert(out.ids.end(), body.end() - keep, body.end());
  out.ids.insert(out.ids.end(), suffix.begin(), suffix.end());
  out.length = static_cast<int64_t>(out.ids.size());
  return out;
}

absl::StatusOr<EncodedExample> EncodeExample(const Tokenizer& tokenizer,
                                             const PromptTemplate& prompt_template,
                                             const Sst2Example& example, int64_t max_len) {
  CHECK(prompt_template.task == PromptTask::kSst2) << "an SST-2 example needs the SST-2 template";
  return EncodePrompt(tokenizer, prompt_template, Sst2Prompt(example), max_len);
}

absl::StatusOr<EncodedExample> EncodeExample(const Tokenizer& tokenizer,
                                             const PromptTemplate& prompt_template,
                                             const BoolqExample& example, int64_t max_len) {
  CHECK(prompt_template.task == PromptTask::kBoolq) << "a BoolQ example needs the BoolQ template";
  return EncodePrompt(tokenizer, prompt_template, BoolqPrompt(example), max_len);
}

absl::StatusOr<std::vector<int32_t>> LabelWordIds(const Tokenizer& tokenizer,
                                                  const PromptTemplate& prompt_template) {
  std::vector<int32_t> ids;
  for (const std::string& word : prompt_template.label_words) {
    const std::vector<int32_t> tokens = tokenizer.EncodeContinuation(word);
    if (tokens.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "label word '", word, "' of the ",
          prompt_template.task == PromptTask::kSst2 ? "SST-2" : "BoolQ", " template is ",
          tokens.size(), " tokens [", absl::StrJoin(tokens, ", "), "] with the tokenizer of ",
          tokenizer.files(),
          "; each label word must be one token of the vocabulary: use the model's own "
          "tokenizer files (the tokenizer.json, tokenizer.model, or vocab.json and merges.txt "
          "that came with its weights)"));
    }
    ids.push_back(tokens[0]);
  }
  return ids;
}

}  // namespace zosched
