#include "runtime/nn/perturbed_block_layout.h"

#include "gtest/gtest.h"
#include "models/accounting.h"
#include "models/model_zoo.h"

namespace zosched {
namespace {

TEST(PerturbedBlockLayout, VectorsPackedThenOneRoomForEveryMatrix) {
  const ModelSpec spec = *LoadModelSpec("opt-125m");  // h 768, f 3072
  const PerturbedBlockLayout layout(spec);
  const PartLayout block = BlockPartLayout(spec);
  // 2 norms (weight, bias) and 6 biases: 9h + f elements of vectors, then
  // the largest matrix (fc1 and fc2, f·h).
  const int64_t vectors = 9 * 768 + 3072;
  EXPECT_EQ(layout.elements(), vectors + 3072 * 768);
  EXPECT_EQ(layout.elements(), BlockPerturbedScratchElements(spec));
  EXPECT_EQ(layout.vectors().size(), 10u);
  // The first tensor, self_attn_layer_norm.weight, opens the scratch; q_proj's
  // bias follows the two norm vectors; every matrix shares the room.
  EXPECT_EQ(layout.ScratchOffset(block.Get("self_attn_layer_norm.weight").offset), 0);
  EXPECT_EQ(layout.ScratchOffset(block.Get("self_attn.q_proj.bias").offset), 2 * 768);
  EXPECT_FALSE(layout.IsMatrix(block.Get("self_attn.q_proj.bias").offset));
  for (const char* matrix : {"self_attn.q_proj.weight", "self_attn.out_proj.weight", "fc1.weight",
                             "fc2.weight"}) {
    EXPECT_TRUE(layout.IsMatrix(block.Get(matrix).offset)) << matrix;
    EXPECT_EQ(layout.ScratchOffset(block.Get(matrix).offset), vectors) << matrix;
  }
}

}  // namespace
}  // namespace zosched
