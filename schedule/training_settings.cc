#include "schedule/training_settings.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/status_format.h"
#include "models/adapters.h"

namespace zosched {
TrainingSettings DefaultTrainingSettings() {
  TrainingSettings t;
  t.set_batch_size(16);
  t.set_micro_batch_size(0);
  t.set_seq_len(32);
  t.set_epsilon(1e-3);
  t.set_learning_rate(5e-4);
  t.set_weight_decay(0);
  t.set_base_seed(0);
  t.set_seed_policy(SEED_FROM_STEP);
  t.set_num_label_words(2);
  return t;
}

absl::Status ValidateTrainingSettings(const ModelSpec& model, const TrainingSettings& t) {
  if (t.batch_size() < 1 || t.batch_size() > kMaxBatchSize) {
    return InvalidArgument("training batch_size is %d (expected 1 to %d examples per step)",
                   t.batch_size(), kMaxBatchSize);
  }
  if (t.micro_batch_size() < 1 || t.micro_batch_size() > t.batch_size()) {
    return InvalidArgument("training micro_batch_size is %d (expected 1 to the batch size %d)",
                   t.micro_batch_size(), t.batch_size());
  }
  if (t.seq_len() < 1 || t.seq_len() > model.max_positions()) {
    return InvalidArgument("training seq_len is %d (expected 1 to model '%s' max_positions %d)",
                   t.seq_len(), model.name(), model.max_positions());
  }
  if (static_cast<int64_t>(t.batch_size()) * t.seq_len() > kMaxTokensPerStep) {
    return InvalidArgument("training batch_size %d × seq_len %d = %d tokens per step, above the "
                   "limit of %d",
                   t.batch_size(), t.seq_len(), static_cast<int64_t>(t.batch_size()) * t.seq_len(),
                   kMaxTokensPerStep);
  }
  if (t.directions() < 0 || t.directions() > kMaxDirections) {
    return InvalidArgument(
        "training directions is %d (expected 1 to %d perturbation directions a step, or 0 for 1)",
        t.directions(), kMaxDirections);
  }
  if (!(std::isfinite(t.epsilon()) && t.epsilon() > 0)) {
    return InvalidArgument("training epsilon is %g (expected a finite ε > 0, e.g. 1e-3)", t.epsilon());
  }
  if (!(std::isfinite(t.learning_rate()) && t.learning_rate() >= 0)) {
    return InvalidArgument("training learning_rate is %g (expected a finite η >= 0, e.g. 1e-6)",
                   t.learning_rate());
  }
  if (!(std::isfinite(t.weight_decay()) && t.weight_decay() >= 0)) {
    return InvalidArgument("training weight_decay is %g (expected a finite λ >= 0)", t.weight_decay());
  }
  if (t.num_label_words() < 1 || t.num_label_words() > model.vocab_size()) {
    return InvalidArgument("training num_label_words is %d (expected 1 to the vocabulary size %d)",
                   t.num_label_words(), model.vocab_size());
  }
  for (const auto& [field, dtype] : {std::pair<const char*, DType>{"host_dtype", t.host_dtype()},
                                     {"wire_dtype", t.wire_dtype()},
                                     {"compute_dtype", t.compute_dtype()}}) {
    if (dtype == DTYPE_UNSPECIFIED) {
      return InvalidArgument("training %s is not set (expected FP32, FP16 or BF16)", field);
    }
    if (!DType_IsValid(dtype)) {  // proto3 enums are open: a file may hold any number
      return InvalidArgument("training %s is %d, not a DType (expected FP32, FP16 or BF16)", field,
                             dtype);
    }
  }
  if (t.seed_policy() != SEED_FROM_STEP) {
    return InvalidArgument("training seed_policy is %s (expected SEED_FROM_STEP)",
                   SeedPolicy_Name(t.seed_policy()));
  }
  if (const absl::Status peft = ValidatePeft(model, t.peft()); !peft.ok()) {
    return InvalidArgument("training %s", peft.message());
  }
  if (const int64_t k = PrefixTokens(t.peft());
      k > 0 && k + t.seq_len() > model.max_positions()) {
    return InvalidArgument(
        "training seq_len %d after the prefix's %d virtual tokens reaches position %d, past "
        "model '%s''s %d positions (expected seq_len + prefix_tokens <= %d)",
        t.seq_len(), k, k + t.seq_len(), model.name(), model.max_positions(),
        model.max_positions());
  }
  return absl::OkStatus();
}

}  // namespace zosched
