// The command-line flags that choose what to lower, shared by every tool
// that lowers a schedule (lower, train): one definition, one set of defaults
// (DefaultTrainingSettings, schedule/training_settings.h) and one range
// check, so that lowering a schedule and training it agree.
//
//   every strategy:     --model --cluster --strategy --devices --batch
//                       --micro_batch --seq --compute_dtype
//   mezo, zo2, distzo2: --epsilon --lr --weight_decay --seed --label_words
//                       --directions --peft --lora_rank --lora_alpha
//                       --lora_targets (--block_slots defaults to 2 under
//                       --peft=lora: nothing is offloaded)
//   zo2, distzo2:       --block_slots --host_dtype --wire_dtype
//   distzo2:            --pertp --slicing
//   distzo2 and ddp, zero_1, zero_2, zero_3: --dp
//   first-order (single_device, ddp, zero_1, zero_2, zero_3):
//                       --precision --recompute --flash_attention
//   ddp:                --bucket_mb
//
// A flag given on the command line for a strategy that does not read it is
// an error (one left out is not: its default changes nothing).
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
// strategy or dtype, or for a flag given on the command line that the
// strategy does not read, naming the strategies it applies to
// ("--bucket_mb=50 does not apply to --strategy=zero_1: it applies to ddp
// only; drop it").
absl::StatusOr<LowerOptions> LowerOptionsFromFlags();

// OK unless a lowering flag given on the command line disagrees with
// `schedule` (read from `path`), which wins: the error names the flag, both
// values and the way out, e.g. "--lr=0.001 disagrees with learning_rate
// 0.0005 of the schedule in s.pb, which wins: drop --lr, or lower the
// schedule again with --lr=0.001". A flag the schedule's strategy does not
// read is an error too, as in LowerOptionsFromFlags; so are a bad value
// and --devices (the schedule names its devices).
absl::Status CheckFlagsAgreeWithSchedule(const Schedule& schedule, const std::string& path);

}  // namespace zosched
