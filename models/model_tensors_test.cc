#include "models/model_tensors.h"

#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "models/zoo_model_for_test.h"

namespace zosched {
namespace {

const TensorSpec* Find(const std::vector<TensorSpec>& tensors,
                       const std::string& name) {
  for (const TensorSpec& t : tensors) {
    if (t.name == name) return &t;
  }
  ADD_FAILURE() << "no tensor " << name;
  return nullptr;
}

using Shape = std::vector<int64_t>;

TEST(BlockTensors, OptUsesHuggingFaceNamesAndLinearLayout) {
  std::vector<TensorSpec> block = BlockTensors(Zoo("opt-125m"), 5);
  EXPECT_EQ(block.size(), 16u);  // 4 norm + 8 attention + 4 FFN tensors
  const TensorSpec* fc1 = Find(block, "model.decoder.layers.5.fc1.weight");
  ASSERT_NE(fc1, nullptr);
  EXPECT_EQ(fc1->shape, (Shape{3072, 768}));  // nn.Linear: [out, in]
  EXPECT_TRUE(fc1->weight_decay());
  const TensorSpec* ln = Find(block, "model.decoder.layers.5.self_attn_layer_norm.bias");
  ASSERT_NE(ln, nullptr);
  EXPECT_FALSE(ln->weight_decay());
  const TensorSpec* bias = Find(block, "model.decoder.layers.5.self_attn.out_proj.bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_FALSE(bias->weight_decay());
}

TEST(BlockTensors, Gpt2FusesQkvInConv1dLayout) {
  std::vector<TensorSpec> block = BlockTensors(Zoo("gpt2-small"), 0);
  const TensorSpec* qkv = Find(block, "h.0.attn.c_attn.weight");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->shape, (Shape{768, 2304}));  // Conv1D: [in, out]
  const TensorSpec* fc = Find(block, "h.0.mlp.c_fc.weight");
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(fc->shape, (Shape{768, 3072}));
}

TEST(BlockTensors, LlamaHasGroupedKvAndNoBiases) {
  std::vector<TensorSpec> block = BlockTensors(Zoo("llama2-70b"), 79);
  EXPECT_EQ(block.size(), 9u);  // 2 RMSNorm weights + q k v o + gate up down
  const TensorSpec* k = Find(block, "model.layers.79.self_attn.k_proj.weight");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->shape, (Shape{1024, 8192}));  // 8 kv heads x 128
  for (const TensorSpec& t : block) EXPECT_NE(t.role, TensorRole::kBias) << t.name;
}

TEST(OutsideTensors, Opt350mProjectsEmbeddingsAndHasNoFinalNorm) {
  ModelSpec spec = Zoo("opt-350m");
  std::vector<TensorSpec> embedding = EmbeddingTensors(spec);
  ASSERT_EQ(embedding.size(), 3u);
  EXPECT_EQ(embedding[0].shape, (Shape{50272, 512}));
  EXPECT_EQ(embedding[1].shape, (Shape{2050, 1024}));  // OPT's offset of 2
  EXPECT_EQ(embedding[2].name, "model.decoder.project_in.weight");
  EXPECT_EQ(embedding[2].shape, (Shape{1024, 512}));
  EXPECT_TRUE(FinalNormTensors(spec).empty());
  std::vector<TensorSpec> head = HeadTensors(spec);
  ASSERT_EQ(head.size(), 1u);  // project_out only: the LM head is tied
  EXPECT_EQ(head[0].shape, (Shape{512, 1024}));
}

TEST(OutsideTensors, LlamaHasNoPositionTableAndAnUntiedHead) {
  ModelSpec spec = Zoo("llama2-7b");
  ASSERT_EQ(EmbeddingTensors(spec).size(), 1u);
  std::vector<TensorSpec> head = HeadTensors(spec);
  ASSERT_EQ(head.size(), 1u);
  EXPECT_EQ(head[0].name, "lm_head.weight");
  EXPECT_EQ(head[0].shape, (Shape{32000, 4096}));
  EXPECT_EQ(CountElements(FinalNormTensors(spec)), 4096);  // RMSNorm: weight only
}

}  // namespace
}  // namespace zosched
