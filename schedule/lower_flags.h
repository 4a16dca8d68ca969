// The command-line flags that choose what to lower, shared by every tool
// that lowers a schedule (lower, train): one definition, one set of defaults
// (DefaultTrainingSettings, schedule/training_settings.h) and one range
// check, so that lowering a schedule and training it agree.
//
//   --model --cluster --strategy --pertp --dp --slicing --block_slots
//   --devices --batch --micro_batch --seq --epsilon --lr --weight_decay
//   --seed --host_dtype --wire_dtype --compute_dtype --label_words
//   --precision --bucket_mb --recompute --flash_attention (first-order)
#pragma once

#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schedule/lower_options.h"
#include "schedule/schedule.pb.h"

ABSL_DECLARE_FLAG(std::string, model);
ABSL_DECLARE_FLAG(std::string, cluster);

namespace zosched {

// The LowerOptions the flags give (the model and cluster are --model and
// --cluster, loaded by the caller).
//
// Errors: InvalidArgument naming the flag, its value and the valid range
// ("--batch=-3: expected 1 to 1048576 examples per step"), for an unknown
// strategy or dtype, or for --pertp/--dp given with a strategy other than
// distzo2.
absl::StatusOr<LowerOptions> LowerOptionsFromFlags();

// OK unless a lowering flag given on the command line disagrees with
// `schedule` (read from `path`), which wins: the error names the flag, both
// values and the way out, e.g. "--lr=0.001 disagrees with learning_rate
// 0.0005 of the schedule in s.pb, which wins: drop --lr, or lower the
// schedule again with --lr=0.001".
absl::Status CheckFlagsAgreeWithSchedule(const Schedule& schedule, const std::string& path);

}  // namespace zosched
