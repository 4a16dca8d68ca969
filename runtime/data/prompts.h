// MeZO's prompt templates for classification (Malladi et al., 2023,
// large_models/templates.py), and encoding an example into token ids.
//
// The model reads the prompt and is scored at its last position on the
// logits of the label words (one token each), cross-entropy against the
// example's label.
//
//   SST-2: "<sentence> It was"        label words " terrible" (0), " great" (1)
//          (the sentence with leading/trailing whitespace stripped, as MeZO's
//          SST2Template does)
//   BoolQ: "<passage> <question>?"    label words " No" (false), " Yes" (true)
//
// Encoded as the model family's tokenizer encodes the prompt's text with its
// special tokens: its BOS first (Tokenizer::bos_token: OPT "</s>", LLaMA-2
// "<s>", Llama-3.x "<|begin_of_text|>", GPT-2 and Qwen none). The label words
// are one token in every family's own tokenizer (OPT and GPT-2 "Ġterrible",
// LLaMA-2 "▁terrible", ...): a label word is scored as it continues the
// prompt (Tokenizer::EncodeContinuation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/data/boolq.h"
#include "runtime/data/sst2.h"
#include "runtime/data/tokenizer.h"

namespace zosched {

enum class PromptTask { kSst2, kBoolq };

struct PromptTemplate {
  PromptTask task;
  // Token put before the prompt, spelt as the tokenizer's files spell it;
  // "" for none.
  std::string bos_token;
  // By label index, each with its leading space; each must be one token.
  std::vector<std::string> label_words;
};

// MeZO's SST-2 template: " It was", " terrible"/" great", and the BOS of
// `tokenizer` (its bos_token()).
PromptTemplate Sst2Template(const Tokenizer& tokenizer);
// MeZO's BoolQ template: "?" after the question, " No"/" Yes", and the BOS
// of `tokenizer`.
PromptTemplate BoolqTemplate(const Tokenizer& tokenizer);

// A prompt's text in two parts: `body` may lose tokens from its left when
// the prompt is too long; `suffix` is always kept whole.
struct PromptText {
  std::string body;
  std::string suffix;
  int label = 0;
};

// SST-2: body = the stripped sentence, suffix = " It was".
PromptText Sst2Prompt(const Sst2Example& example);
// BoolQ: body = the passage, suffix = " " + question + "?"; label 1 = true.
PromptText BoolqPrompt(const BoolqExample& example);

struct EncodedExample {
  // BOS (if any), the body's last tokens, the suffix's tokens; no padding.
  std::vector<int32_t> ids;
  int64_t length = 0;  // ids.size(); the scored position is length - 1
  int label = 0;       // index into the template's label words
};

// Encodes `prompt` into at most `max_len` tokens: the body with
// Tokenizer::Encode, the suffix with EncodeContinuation, which together equal
// encoding their concatenation when the suffix starts with a space, as both
// templates' suffixes do (and the body does not end in one). If too long,
// body tokens are dropped from the left.
//
// Errors: InvalidArgument if the template's BOS token is not in the
// vocabulary, if BOS plus the suffix alone exceed `max_len`, or if the label
// is not a valid index into the label words.
absl::StatusOr<EncodedExample> EncodePrompt(const Tokenizer& tokenizer,
                                            const PromptTemplate& prompt_template,
                                            const PromptText& prompt, int64_t max_len);

// EncodePrompt of Sst2Prompt(example) / BoolqPrompt(example). CHECK-fails if
// `prompt_template` is for another task (a bug).
absl::StatusOr<EncodedExample> EncodeExample(const Tokenizer& tokenizer,
                                             const PromptTemplate& prompt_template,
                                             const Sst2Example& example, int64_t max_len);
absl::StatusOr<EncodedExample> EncodeExample(const Tokenizer& tokenizer,
                                             const PromptTemplate& prompt_template,
                                             const BoolqExample& example, int64_t max_len);

// The token id of each label word (encoded with EncodeContinuation), by
// label index.
// Errors: InvalidArgument naming a label word that is not exactly one token,
// the tokens it became, the tokenizer's files (Tokenizer::files), and the
// fix (the model's own tokenizer files).
absl::StatusOr<std::vector<int32_t>> LabelWordIds(const Tokenizer& tokenizer,
                                                  const PromptTemplate& prompt_template);

}  // namespace zosched
