#include "runtime/ops/part_spans.h"

#include "gtest/gtest.h"
#include "runtime/ops/test_models.h"

namespace zosched {
namespace {

TEST(PartDecaySpansTest, OneTablePerKindOfPart) {
  const ModelSpec model = TestOpt();
  Peft lora;
  lora.set_kind(LORA);
  lora.set_lora_rank(2);
  lora.set_lora_alpha(4);
  const PerPart<std::vector<DecaySpan>> spans = PartDecaySpans(model, lora);
  EXPECT_EQ(&spans.Of(EMBEDDING_PART), &spans.embedding);
  EXPECT_EQ(&spans.Of(ADAPTER_PART), &spans.adapters);
  ASSERT_EQ(spans.adapters.size(), 4u);  // A and B of query and value
  for (const DecaySpan& span : spans.adapters) EXPECT_TRUE(span.decays);
  EXPECT_EQ(&spans.Of(HEAD_PART), &spans.head);
  EXPECT_EQ(&spans.Of(DECODER_BLOCK), &spans.block);
  EXPECT_EQ(spans.block.size(), DecaySpans(PartTensors(model, DECODER_BLOCK, 1, Peft())).size());
  ASSERT_FALSE(spans.head.empty());
  EXPECT_FALSE(spans.head.front().decays);  // the final norm's weight
}

}  // namespace
}  // namespace zosched
