// A sweep (experiments/sweep.proto) read, checked and expanded into the
// configurations //experiments:explore evaluates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/cluster_family.h"
#include "experiments/sweep.pb.h"
#include "models/model.pb.h"
#include "schedule/lower_options.h"

namespace zosched {

// One configuration: a model and a cluster member (indices into the
// space's lists) and everything lowering needs.
struct SweepConfig {
  int model = 0;
  int member = 0;
  LowerOptions options;  // strategy, knobs and training settings
  int gpus = 0;          // devices the strategy uses
  // How its GPU compute is costed: the sweep's compute_profile, else the
  // configuration's kernel-level profile (KernelProfileFor; ExpandSweep
  // refuses a configuration that has none).
  ComputeProfile profile = ROOFLINE;
};

struct SweepSpace {
  Sweep sweep;                       // as read, with defaults filled in (objective, best)
  std::vector<ModelSpec> models;     // in sweep order
  std::vector<ClusterMember> members;  // every family's members, in sweep order
  std::vector<SweepConfig> configs;  // models × training × members × strategies × knobs
};

// Most configurations one sweep may expand to, and most cluster members its
// families may have together. Both are counted before anything is built, so
// that a sweep above them is refused at once, without large allocations.
constexpr int64_t kMaxSweepConfigs = 1000000;
constexpr int64_t kMaxSweepClusters = 10000;

// Reads the Sweep textproto at `path` and expands it (ExpandSweep).
//
// Errors: those of ReadTextProtoFile ("FILE:LINE:COLUMN: ..."), and of
// ExpandSweep with `path` as the source.
absl::StatusOr<SweepSpace> LoadSweep(const std::string& path);

// Every configuration of `sweep`, in the order models, batch, seq_len,
// micro_batch, cluster members, strategies, then each strategy's knobs
// (SweepConfig), each with the compute profile it is predicted under. A
// knob that does not apply to a strategy is an error, so a typo never
// silently sweeps nothing. DISTZO2 and the first-order strategies
// without `dp` try every D (P·D within the member's devices; first-order D
// from 2, SINGLE_DEVICE 1) whose share of the batch the micro-batch divides.
//
// Errors: InvalidArgument naming `source`, the field and the value, and
// saying what would be right:
// - name empty or not a plain directory name (letters, digits, '-', '_',
//   '.'; not starting with '.'; at most 100 characters);
// - no models, clusters or strategies; an unknown model (LoadModelSpec's
//   message); a family ExpandClusterFamily refuses;
// - a compute_profile that names no profile, or one that does not run
//   every configuration (CheckProfileRuns: e.g. pytorch_first_order with a
//   ZO strategy); with none named, a configuration no kernel-level profile
//   runs (KernelProfileFor gives ROOFLINE: Megatron's recipe,
//   recomputation, first-order training beyond OPT and GPT-2), whose step
//   at the roofline would be ranked beside kernel-level ones; each naming
//   the strategy entry, its precision and recompute setting and the model;
// - a number out of range: batch (1 to kMaxBatchSize), seq_len (>= 1),
//   micro_batch (0 to kMaxBatchSize), block_slots (1 to 1024), dp (1 to
//   4096), pertp (1 or 2), lora_rank and prefix_tokens (1 to 4096), best
//   (1 to 1000), a constraint negative or not finite (NaN, infinity);
// - an enum unset or unknown (a number no name has): strategy kind,
//   wire_dtype, precision, peft, objective; a knob a strategy has no use
//   for (e.g. "strategies[0] (MEZO): block_slots applies to ZO2 and
//   DISTZO2"), or lora_rank or prefix_tokens without its kind in peft;
// - a value listed twice, which would rank the same configuration twice: a
//   model (by name, or two names for equal specs), a batch, seq_len or
//   micro_batch, a knob value, a heat map, a cluster member two families
//   share (by label), or two entries of one strategy kind that give the
//   same configuration;
// - a price-based objective or constraint with an unpriced family;
// - more than kMaxSweepClusters cluster members (counted from the axes'
//   lengths before any is built) or more than kMaxSweepConfigs
//   configurations (counted before any is built), saying the count, the
//   limit and the lengths that multiply to it; none at all;
// - a heat map axis that is not a knob column (SweepKnobColumns).
absl::StatusOr<SweepSpace> ExpandSweep(const Sweep& sweep, const std::string& source);

// The CSV columns that describe a configuration (not its results), the ones
// a heat map may use, in CSV order.
const std::vector<std::string>& SweepKnobColumns();

// The knob columns' values for `config` in `space`, in SweepKnobColumns order.
std::vector<std::string> SweepKnobValues(const SweepSpace& space, const SweepConfig& config);

// "distzo2 P2xD4 sliced, 3 slots", "zo2, 2 slots, wire FP16", "ddp x8, amp,
// recompute", "zo2, 2 slots, prefix k5": the strategy and the knobs set,
// for tables (adapters as PeftLabel shows them).
std::string StrategyLabel(const SweepConfig& config);

}  // namespace zosched
