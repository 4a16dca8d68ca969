// The training settings of a Schedule (schedule.proto TrainingSettings): the
// defaults every tool shares (lower, train, calibrate, the experiments) and
// the checks every schedule's settings pass.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "models/model.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The training settings every tool starts from (flags override them): batch
// 16, one micro-batch per device (0), seq_len 32, ε 1e-3, η 5e-4, no weight
// decay, base seed 0 with SEED_FROM_STEP, 2 label words, dtypes unspecified
// (= the model's). seq_len and η suit the CPU testbed's opt-tiny from a
// random initialisation; fine-tuning a pretrained model wants MeZO's
// settings instead (η 1e-6 or 1e-7, seq_len up to the prompts' length).
TrainingSettings DefaultTrainingSettings();

// Upper bounds that keep every size and cost of a schedule inside int64.
constexpr int kMaxBatchSize = 1 << 20;          // examples per step
constexpr int64_t kMaxTokensPerStep = 1LL << 31;  // batch × seq_len

// Most perturbation directions a step (TrainingSettings.directions): each
// costs two forwards of the batch, so past this a step is impractical.
constexpr int kMaxDirections = 1024;

// q, the perturbation directions of a step: `directions`, where 0 (unset)
// means 1.
inline int DirectionsOf(const TrainingSettings& training) {
  return training.directions() > 1 ? training.directions() : 1;
}

// Checks `training` on its own and against `model`: batch_size in [1,
// kMaxBatchSize]; micro_batch_size >= 1; seq_len in [1, max_positions];
// batch × seq_len <= kMaxTokensPerStep; directions in [0, kMaxDirections]
// (0 means 1); ε finite and > 0; η and λ finite
// and >= 0; num_label_words in [1, vocab_size]; host, wire and compute
// dtypes set; seed policy set; peft as ValidatePeft (models/adapters.h)
// accepts it for the model.
//
// Errors: InvalidArgument naming the field, its value and the valid range.
absl::Status ValidateTrainingSettings(const ModelSpec& model, const TrainingSettings& training);

}  // namespace zosched
