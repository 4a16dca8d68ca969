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
// Encoded as OPT's tokenizer does by default: "</s>" first (OPT's BOS).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/data/bpe_tokenizer.h"
#include "runtime/data/boolq.h"
#include "runtime/data/sst2.h"

namespace zosched {

enum class PromptTask { kSst2, kBoolq };

struct PromptTemplate {
  PromptTask task;
  // Token put before the prompt, spelt as in vocab.json; "" for none.
  std::string bos_token;
  // By label index, each with its leading space; each must be one token.
  std::vector<std::string> label_words;
};

// MeZO's SST-2 template: " It was", " terrible"/" great", BOS "</s>".
PromptTemplate Sst2Template();
// MeZO's BoolQ template: "?" after the question, " No"/" Yes", BOS "</s>".
PromptTemplate BoolqTemplate();

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

// Encodes `prompt` into at most `max_len` tokens: body and suffix are
// tokenized separately, which equals tokenizing their concatenation when the
// suffix starts with a space (a pre-token boundary), as both templates'
// suffixes do. If too long, body tokens are dropped from the left.
//
// Errors: InvalidArgument if the template's BOS token is not in the
// vocabulary, if BOS plus the suffix alone exceed `max_len`, or if the label
// is not a valid index into the label words.
absl::StatusOr<EncodedExample> EncodePrompt(const BpeTokenizer& tokenizer,
                                            const PromptTemplate& prompt_template,
                                            const PromptText& prompt, int64_t max_len);

// EncodePrompt of Sst2Prompt(example) / BoolqPrompt(example). CHECK-fails if
// `prompt_template` is for another task (a bug).
absl::StatusOr<EncodedExample> EncodeExample(const BpeTokenizer& tokenizer,
                                             const PromptTemplate& prompt_template,
                                             const Sst2Example& example, int64_t max_len);
absl::StatusOr<EncodedExample> EncodeExample(const BpeTokenizer& tokenizer,
                                             const PromptTemplate& prompt_template,
                                             const BoolqExample& example, int64_t max_len);

// The token id of each label word, by label index.
// Errors: InvalidArgument naming a label word that is not exactly one token,
// the tokens it became, the tokenizer's files (BpeTokenizer::vocab_name and
// merges_name), and the fix (the model's own tokenizer files).
absl::StatusOr<std::vector<int32_t>> LabelWordIds(const BpeTokenizer& tokenizer,
                                                  const PromptTemplate& prompt_template);

}  // namespace zosched
