// Which θ ± εz a forward op computes with: the z of its direction's seed
// (the step's seed for direction 0, runtime/zo/zo_math.h DirectionSeed),
// scaled by the schedule's ε, added (PLUS) or subtracted (MINUS). Under LoRA
// or a prefix the op's params are frozen (read as they are) and only the
// adapters take θ ± εz.
#pragma once

#include <cstdint>

#include "schedule/schedule.pb.h"

namespace zosched {

struct Perturbation {
  uint64_t seed = 0;  // z's seed: DirectionSeed(StepInputs.seed, op.direction)
  float epsilon = 0;  // ε, TrainingSettings.epsilon
  int sign = 1;       // +1 for PLUS, -1 for MINUS
  bool frozen_params = false;  // LoRA or a prefix: the params are copied, not perturbed
};

// The perturbation of forward op `op` (EMBED, BLOCK_FORWARD or HEAD_LOSS) in
// the step whose seed is `step_seed`.
Perturbation PerturbationOf(const ComputeOp& op, const TrainingSettings& training,
                            uint64_t step_seed);

}  // namespace zosched
