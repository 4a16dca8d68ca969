#include "runtime/ops/embed_plan.h"

#include "gtest/gtest.h"
#include "runtime/ops/test_models.h"

namespace zosched {
namespace {

ComputeOp EmbedOp(int first_example, int examples) {
  ComputeOp op;
  op.set_kind(EMBED);
  op.set_first_example(first_example);
  op.set_examples(examples);
  return op;
}

// Embedding part: embed_tokens [32, e], embed_positions [18, 8], project_in [8, e].
TEST(PlanEmbedTest, WithoutProjection) {
  const EmbedPlan plan = PlanEmbed(TestOpt(), EmbedOp(/*first_example=*/2, /*examples=*/3), 5);
  EXPECT_EQ(plan.token_table, 0);
  EXPECT_EQ(plan.row_elements, 8);
  EXPECT_EQ(plan.positions.first, 32 * 8 + 2 * 8);  // row 2 of the position table
  EXPECT_EQ(plan.positions.count, 5 * 8);
  EXPECT_EQ(plan.positions.into, 0);
  EXPECT_FALSE(plan.has_project_in);
  EXPECT_EQ(plan.first_token, 2 * 5);
  EXPECT_EQ(plan.token_count, 3 * 5);
  EXPECT_EQ(plan.row_count, 3 * 5);
  EXPECT_EQ(plan.scratch_at, 3 * 5 * 8);
}

TEST(PlanEmbedTest, ProjectedRowsArePaddedAndProjectInFollowsThePositions) {
  const EmbedPlan plan = PlanEmbed(TestOpt(/*embed_dim=*/4), EmbedOp(0, 3), 5);
  EXPECT_EQ(plan.row_elements, 4);
  EXPECT_EQ(plan.positions.first, 32 * 4 + 2 * 8);
  ASSERT_TRUE(plan.has_project_in);
  EXPECT_EQ(plan.project_in.first, 32 * 4 + 18 * 8);
  EXPECT_EQ(plan.project_in.count, 8 * 4);
  EXPECT_EQ(plan.project_in.into, 5 * 8);
  EXPECT_EQ(plan.token_count, 15);
  EXPECT_EQ(plan.row_count, 16);  // a multiple of 4: the projection's token panel
  EXPECT_EQ(plan.scratch_at, 16 * 4);
}

}  // namespace
}  // namespace zosched
