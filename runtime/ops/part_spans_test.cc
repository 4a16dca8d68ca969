#include "runtime/ops/part_spans.h"

#include "gtest/gtest.h"
#include "runtime/ops/test_models.h"

namespace zosched {
namespace {

TEST(PartDecaySpansTest, OneTablePerKindOfPart) {
  const ModelSpec model = TestOpt();
  const PerPart<std::vector<DecaySpan>> spans = PartDecaySpans(model);
  EXPECT_EQ(&spans.Of(EMBEDDING_PART), &spans.embedding);
  EXPECT_EQ(&spans.Of(HEAD_PART), &spans.head);
  EXPECT_EQ(&spans.Of(DECODER_BLOCK), &spans.block);
  EXPECT_EQ(spans.block.size(), DecaySpans(PartTensors(model, DECODER_BLOCK, 1)).size());
  ASSERT_FALSE(spans.head.empty());
  EXPECT_FALSE(spans.head.front().decays);  // the final norm's weight
}

}  // namespace
}  // namespace zosched
