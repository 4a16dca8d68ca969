#include "runtime/ops/perturbation.h"

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(PerturbationOfTest, MinusSubtractsAndPlusAdds) {
  TrainingSettings training;
  training.set_epsilon(1e-3f);
  ComputeOp op;
  op.set_sign(MINUS);
  const Perturbation minus = PerturbationOf(op, training, 77);
  EXPECT_EQ(minus.seed, 77u);
  EXPECT_EQ(minus.epsilon, 1e-3f);
  EXPECT_EQ(minus.sign, -1);
  op.set_sign(PLUS);
  EXPECT_EQ(PerturbationOf(op, training, 77).sign, 1);
}

}  // namespace
}  // namespace zosched
