#include "runtime/ops/perturbation.h"

#include "models/adapters.h"
#include "runtime/zo/zo_math.h"

namespace zosched {

Perturbation PerturbationOf(const ComputeOp& op, const TrainingSettings& training,
                            uint64_t step_seed) {
  Perturbation p;
  p.seed = DirectionSeed(step_seed, op.direction());
  p.epsilon = training.epsilon();
  p.sign = op.sign() == MINUS ? -1 : 1;
  p.frozen_params = TrainsAdapters(training.peft());
  return p;
}

}  // namespace zosched
