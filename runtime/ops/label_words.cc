#include "runtime/ops/label_words.h"

#include "absl/strings/str_format.h"

namespace zosched {

absl::Status CheckLabelWords(const Schedule& schedule, const std::vector<int32_t>& label_words) {
  const ModelSpec& model = schedule.model();
  if (static_cast<int>(label_words.size()) != schedule.training().num_label_words()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the task has %d label words but the schedule was lowered for %d", label_words.size(),
        schedule.training().num_label_words()));
  }
  for (int32_t word : label_words) {
    if (word < 0 || word >= model.vocab_size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "label word token %d is outside model '%s''s vocabulary of %d", word, model.name(),
          model.vocab_size()));
    }
  }
  return absl::OkStatus();
}

}  // namespace zosched
