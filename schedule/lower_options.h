// What to lower: the strategy, its grid and knobs, and the training settings
// (schedule/lowering.h turns them into a Schedule), and the checks that make
// a set of options lowerable.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/model.pb.h"
#include "schedule/cluster.pb.h"
#include "schedule/schedule.pb.h"
#include "schedule/training_settings.h"

namespace zosched {

struct LowerOptions {
  StrategyKind strategy = STRATEGY_KIND_UNSPECIFIED;
  int pertp = 1;          // DISTZO2: P, 1 or 2
  int dp = 1;             // DISTZO2: D >= 1
  bool slicing = true;    // DISTZO2: the DistZO2 communication strategy
  int block_slots = 3;    // ZO2 / DISTZO2: device slots in the ring, >= 1
  // Cluster device names to use, in rank order; empty: the cluster's first
  // devices (1 for MEZO and ZO2, P·D for DISTZO2).
  std::vector<std::string> devices;
  // First-order strategies (SINGLE_DEVICE, DDP, ZERO_1/2/3) run on `dp`
  // devices with these:
  PrecisionRecipe precision = AMP_FP32_MASTER;
  int64_t bucket_bytes = 25 << 20;  // DDP / ZERO_1 gradient buckets (PyTorch's 25 MiB)
  bool recompute = false;           // full activation recomputation
  bool flash_attention = true;      // a fused attention kernel keeps no scores
  // micro_batch_size 0 means each device's whole share in one micro-batch.
  // Dtypes left unspecified: host defaults to the model's weight_dtype, wire
  // to the host dtype, compute to the model's weight_dtype where every device
  // has a ComputePeak for it and else FP32 (the CPU testbed).
  // First-order strategies: host (the parameters' dtype) is the recipe's,
  // RecipeParamDType; wire the same; compute defaults to FP16 (AMP) or BF16.
  TrainingSettings training;
};

// The options with every default resolved for `model` on `cluster`: the
// micro-batch (0: each device's share), the dtypes, and the devices (in rank
// order, pointers into `cluster`).
struct ResolvedLowerOptions {
  LowerOptions options;
  std::vector<const Device*> devices;
};

// Resolves and checks `options`.
//
// Errors: InvalidArgument for options that cannot be lowered, saying what
// would be right: no strategy, an unknown device, P·D not equal to the
// number of devices, P not dividing 2q (q: the training settings'
// directions), directions > 1 or a peft for a first-order strategy, a batch not
// divisible by D or a share not
// divisible by the micro-batch, block_slots < 1, P or D given for a strategy
// other than DISTZO2 (or D, the device count, for a first-order one),
// SINGLE_DEVICE with D > 1, a first-order strategy without a precision
// recipe or with a bucket under 1 MiB, training settings ValidateTrainingSettings refuses, a
// compute dtype a device has no ComputePeak for.
absl::StatusOr<ResolvedLowerOptions> ResolveLowerOptions(const ModelSpec& model,
                                                         const Cluster& cluster,
                                                         const LowerOptions& options);

}  // namespace zosched
