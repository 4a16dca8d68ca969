// Evaluating a sweep's configurations: each is lowered and validated
// (LowerSchedule validates every schedule it returns, completely) and
// simulated under its compute profile, and again with every compute op at
// its roofline for its floor (sim/roofline_floor.h), or pruned by its step
// floor (sim/step_floor.h), on all cores.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "experiments/sweep_space.h"

namespace zosched {

enum class ConfigState {
  kFits,        // lowered, validated and simulated
  kDoesNotFit,  // the plan is over a device's or host's memory (reason says by how much)
  kInvalid,     // the options cannot be lowered (e.g. a batch D does not divide)
  kPruned,      // its floor shows it can neither win nor meet the constraints
  kFailed,      // the floor or the simulation failed: a bug (explore exits non-zero)
};
const char* ConfigStateName(ConfigState s);  // "fits", "does not fit", ...

struct ConfigResult {
  ConfigState state = ConfigState::kFailed;
  // Why it does not fit, is invalid, pruned or failed; for one that fits but
  // misses the constraints, which it misses ("misses the constraints: 4
  // GPUs above max_gpus 2; ..."); empty otherwise.
  std::string reason;
  // From the lowered plan (every state but kInvalid):
  double peak_device_gib = 0;  // the fullest device's plan
  double headroom_gib = 0;     // the least free memory over the devices used
  double host_gib = 0;         // host buffers on the busiest host
  double floor_ms = 0;         // StepFloorNs under its compute profile (kFits, kPruned)
  // From the simulation (kFits):
  double step_ms = 0;           // under its compute profile (SweepConfig::profile)
  double roofline_step_ms = 0;  // its floor: every compute op at its roofline
  double tokens_per_s = 0;
  double overlap = 0;          // Σ overlap / Σ communication over the devices (0: none)
  double exposed_comm_ms = 0;  // the most exposed communication of one device
  std::string binding;         // "compute", "host link", "peer link"
  // From the price (0 when the cluster is unpriced):
  double dollars_per_hour = 0;   // price per GPU-hour × GPUs used
  double tokens_per_dollar = 0;  // tokens/s × 3600 / dollars_per_hour
  bool meets_constraints = false;
  double score = 0;  // the objective, higher is better (step time negated); kFits only
  // Seconds spent, for the throughput report:
  double lower_s = 0;     // lowering and its validation
  double simulate_s = 0;  // the step floor and the simulations (the step and its floor)
};

struct EvaluationOptions {
  int threads = 1;
  bool prune = false;  // skip simulating what its floor shows cannot win
  // Called from the evaluating threads after each configuration (serialised).
  std::function<void(int done, int total)> progress;
};

// Evaluates every configuration of `space`, each under its compute profile
// (SweepConfig::profile), results in configuration order
// (whatever the thread count; the threads take the configurations with the
// most devices × layers first, so that a large one does not finish alone
// at the end). With `prune`, a configuration is not
// simulated when its optimistic objective (from StepFloorNs, which costs
// each compute op as the simulation under the same profile does, so bounds
// its step) is worse than the `best`-th best found so far, or it cannot
// meet a constraint; the best `best` configurations are the same as without
// pruning.
std::vector<ConfigResult> EvaluateSweep(const SweepSpace& space,
                                        const EvaluationOptions& options);

// Indices of the configurations that fit and meet the constraints, best
// first (ties: lower index first), at most `limit`.
std::vector<int> RankConfigs(const std::vector<ConfigResult>& results, int limit);

}  // namespace zosched
