#include "runtime/ops/head_loss_plan.h"

#include "gtest/gtest.h"
#include "runtime/model_parts.h"
#include "runtime/ops/test_models.h"

namespace zosched {
namespace {

TEST(PlanHeadLossTest, HeadPartThenTheLabelRowsOfTheTokenTable) {
  const ModelSpec model = TestOpt(/*embed_dim=*/4);
  ComputeOp op;
  op.set_kind(HEAD_LOSS);
  op.mutable_lm_head()->set_first_element(12);
  const HeadLossPlan plan = PlanHeadLoss(model, op, /*label_words=*/2);
  // final_layer_norm [8] + [8], project_out [4, 8].
  EXPECT_EQ(plan.head.first, 0);
  EXPECT_EQ(plan.head.count, 8 + 8 + 4 * 8);
  EXPECT_EQ(plan.head.into, 0);
  EXPECT_EQ(plan.rows_at, plan.head.count);
  EXPECT_EQ(plan.table_stream, PartStream(model, EMBEDDING_PART, 0));
  EXPECT_EQ(plan.table_first, 12);
  EXPECT_EQ(plan.row_elements, 4);
  EXPECT_EQ(plan.label_rows, 2);
}

}  // namespace
}  // namespace zosched
