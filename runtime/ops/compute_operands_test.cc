#include "runtime/ops/compute_operands.h"

#include <string>

#include "gtest/gtest.h"
#include "runtime/model_parts.h"
#include "runtime/ops/test_models.h"

namespace zosched {
namespace {

BufferRange Range(const std::string& buffer, int64_t offset) {
  BufferRange r;
  r.set_buffer(buffer);
  r.set_offset_bytes(offset);
  return r;
}

TEST(ResolveComputeOperandsTest, EachRoleAtItsRangeAndNullWithout) {
  const ModelSpec model = TestOpt();
  TrainingSettings training;
  training.set_seq_len(4);
  ComputeOp op;
  op.set_kind(BLOCK_FORWARD);
  op.set_examples(2);
  op.mutable_params()->set_part(DECODER_BLOCK);
  op.mutable_params()->set_block(1);
  *op.mutable_params()->mutable_range() = Range("slot", 64);
  *op.mutable_perturbed() = Range("scratch", 0);
  *op.mutable_activations() = Range("acts", 16);
  *op.mutable_workspace() = Range("scratch", 128);
  char memory[1024];
  auto address_of = [&](const BufferRange& r) {
    const int64_t buffer = r.buffer() == "slot" ? 0 : r.buffer() == "scratch" ? 256 : 512;
    return memory + buffer + r.offset_bytes();
  };
  const ComputeOperands o = ResolveComputeOperands(model, training, op, 0, address_of);
  EXPECT_EQ(o.params, memory + 64);
  EXPECT_EQ(o.perturbed, memory + 256);
  EXPECT_EQ(o.activations, memory + 512 + 16);
  EXPECT_EQ(o.workspace, memory + 256 + 128);
  EXPECT_EQ(o.lm_head, nullptr);
  EXPECT_EQ(o.losses, nullptr);
  EXPECT_EQ(o.zo_state, nullptr);
  EXPECT_EQ(o.wire, nullptr);
  EXPECT_EQ(o.z_stream, PartStream(model, DECODER_BLOCK, 1));
}

TEST(ResolveComputeOperandsTest, PlansTheEmbedAndTheHeadLoss) {
  const ModelSpec model = TestOpt();
  TrainingSettings training;
  training.set_seq_len(4);
  auto nowhere = [](const BufferRange&) -> char* { return nullptr; };
  ComputeOp embed;
  embed.set_kind(EMBED);
  embed.set_examples(2);
  EXPECT_EQ(ResolveComputeOperands(model, training, embed, 2, nowhere).embed.token_count, 8);
  ComputeOp head;
  head.set_kind(HEAD_LOSS);
  EXPECT_EQ(ResolveComputeOperands(model, training, head, 2, nowhere).head_loss.label_rows, 2);
}

}  // namespace
}  // namespace zosched
