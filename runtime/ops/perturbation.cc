#include "runtime/ops/perturbation.h"

namespace zosched {

Perturbation PerturbationOf(const ComputeOp& op, const TrainingSettings& training,
                            uint64_t step_seed) {
  Perturbation p;
  p.seed = step_seed;
  p.epsilon = training.epsilon();
  p.sign = op.sign() == MINUS ? -1 : 1;
  return p;
}

}  // namespace zosched
