// Which θ ± εz a forward op computes with: the z of the step's seed, scaled
// by the schedule's ε, added (PLUS) or subtracted (MINUS).
#pragma once

#include <cstdint>

#include "schedule/schedule.pb.h"

namespace zosched {

struct Perturbation {
  uint64_t seed = 0;  // z's seed: the step's (StepInputs.seed)
  float epsilon = 0;  // ε, TrainingSettings.epsilon
  int sign = 1;       // +1 for PLUS, -1 for MINUS
};

// The perturbation of forward op `op` (EMBED, BLOCK_FORWARD or HEAD_LOSS) in
// the step whose seed is `step_seed`.
Perturbation PerturbationOf(const ComputeOp& op, const TrainingSettings& training,
                            uint64_t step_seed);

}  // namespace zosched
