#include "runtime/nn/param_layout.h"

#include <string>

#include "gtest/gtest.h"
#include "models/accounting.h"
#include "models/model_zoo.h"
#include "models/zoo_model_for_test.h"

namespace zosched {
namespace {

// Offsets are back to back in the model_tensors order.
void ExpectContiguous(const PartLayout& layout) {
  int64_t offset = 0;
  for (const TensorSlice& t : layout.tensors) {
    EXPECT_EQ(t.offset, offset) << t.name;
    offset += t.elements();
  }
  EXPECT_EQ(layout.total_floats, offset);
}

TEST(PartLayout, SizesMatchAccounting) {
  for (const char* name :
       {"opt-125m", "opt-350m", "opt-1.3b", "gpt2-small", "llama2-7b"}) {
    SCOPED_TRACE(name);
    const ModelSpec spec = Zoo(name);
    const PartLayout embedding = EmbeddingPartLayout(spec);
    const PartLayout block = BlockPartLayout(spec, 3);
    const PartLayout head = HeadPartLayout(spec);
    ExpectContiguous(embedding);
    ExpectContiguous(block);
    ExpectContiguous(head);
    EXPECT_EQ(embedding.total_floats, EmbeddingParams(spec));
    EXPECT_EQ(block.total_floats, BlockParams(spec));
    EXPECT_EQ(head.total_floats, FinalNormParams(spec) + HeadParams(spec));
  }
}

TEST(PartLayout, OptBlockOrderShapesAndSuffixes) {
  const ModelSpec spec = Zoo("opt-125m");  // h 768, f 3072
  const PartLayout block = BlockPartLayout(spec, 5);
  const std::vector<std::string> suffixes = {"self_attn_layer_norm.weight",
                                             "self_attn_layer_norm.bias",
                                             "self_attn.q_proj.weight",
                                             "self_attn.q_proj.bias",
                                             "self_attn.k_proj.weight",
                                             "self_attn.k_proj.bias",
                                             "self_attn.v_proj.weight",
                                             "self_attn.v_proj.bias",
                                             "self_attn.out_proj.weight",
                                             "self_attn.out_proj.bias",
                                             "final_layer_norm.weight",
                                             "final_layer_norm.bias",
                                             "fc1.weight",
                                             "fc1.bias",
                                             "fc2.weight",
                                             "fc2.bias"};
  ASSERT_EQ(block.tensors.size(), suffixes.size());
  for (size_t i = 0; i < suffixes.size(); ++i) {
    EXPECT_EQ(block.tensors[i].suffix, suffixes[i]);
    EXPECT_EQ(block.tensors[i].name, "model.decoder.layers.5." + suffixes[i]);
  }
  const int64_t h = 768, f = 3072;
  EXPECT_EQ(block.Get("fc1.weight").shape, (std::vector<int64_t>{f, h}));
  EXPECT_EQ(block.Get("fc2.weight").shape, (std::vector<int64_t>{h, f}));
  // 2 norms before fc1's weight: ln1 (2h) + 4 projections (4h² + 4h) + ln2
  // (2h).
  EXPECT_EQ(block.Get("fc1.weight").offset, 2 * h + 4 * h * h + 4 * h + 2 * h);
  // Lookup by a shorter suffix.
  EXPECT_EQ(block.Find("q_proj.bias"), &block.tensors[3]);
  EXPECT_EQ(block.Find("no_such.weight"), nullptr);

  // Every layer has the same suffixes and offsets.
  const PartLayout block0 = BlockPartLayout(spec, 0);
  for (size_t i = 0; i < suffixes.size(); ++i) {
    EXPECT_EQ(block0.tensors[i].suffix, block.tensors[i].suffix);
    EXPECT_EQ(block0.tensors[i].offset, block.tensors[i].offset);
  }
}

TEST(PartLayout, AmbiguousSuffixFails) {
  const PartLayout block = BlockPartLayout(Zoo("opt-125m"), 0);
  EXPECT_DEATH(block.Find("weight"), "matches both");
  EXPECT_DEATH(block.Get("nope.weight"), "no tensor with suffix");
}

TEST(Slots, FindEveryOptBlockTensorInOrder) {
  const ModelSpec spec = Zoo("opt-125m");
  const int64_t h = 768, f = 3072;
  const PartLayout block = BlockPartLayout(spec);
  auto at = [&](TensorSlot slot) { return block.Get(slot).offset; };
  EXPECT_EQ(at(TensorSlot::kAttnNormWeight), 0);
  EXPECT_EQ(at(TensorSlot::kAttnNormBias), h);
  EXPECT_EQ(at(TensorSlot::kQWeight), 2 * h);
  EXPECT_EQ(at(TensorSlot::kQBias), at(TensorSlot::kQWeight) + h * h);
  EXPECT_EQ(at(TensorSlot::kKWeight), at(TensorSlot::kQBias) + h);
  EXPECT_EQ(at(TensorSlot::kVWeight), at(TensorSlot::kKBias) + h);
  EXPECT_EQ(at(TensorSlot::kOWeight), at(TensorSlot::kVBias) + h);
  EXPECT_EQ(at(TensorSlot::kFfnNormWeight), at(TensorSlot::kOBias) + h);
  EXPECT_EQ(at(TensorSlot::kUpWeight), at(TensorSlot::kFfnNormBias) + h);
  EXPECT_EQ(at(TensorSlot::kUpBias), at(TensorSlot::kUpWeight) + f * h);
  EXPECT_EQ(at(TensorSlot::kDownWeight), at(TensorSlot::kUpBias) + f);
  EXPECT_EQ(at(TensorSlot::kDownBias) + h, BlockParams(spec));
  EXPECT_EQ(block.Find(TensorSlot::kGateWeight), nullptr);
  EXPECT_EQ(block.Find(TensorSlot::kQNorm), nullptr);

  const float* base = reinterpret_cast<const float*>(0x1000);
  const EmbeddingView emb = MakeEmbeddingView(spec, base);
  EXPECT_EQ(emb.tokens, base);
  EXPECT_EQ(emb.positions, base + 50272 * h);
  EXPECT_EQ(emb.project_in, nullptr);
  const HeadView head = MakeHeadView(spec, base);
  EXPECT_EQ(head.norm_weight, base);
  EXPECT_EQ(head.norm_bias, base + h);
  EXPECT_EQ(head.project_out, nullptr);
  EXPECT_EQ(head.lm_head, nullptr);
}

TEST(Slots, Opt350mProjectionsAndNoFinalNorm) {
  const ModelSpec spec = Zoo("opt-350m");  // h 1024, e 512, no final norm
  const float* base = reinterpret_cast<const float*>(0x1000);
  const EmbeddingView emb = MakeEmbeddingView(spec, base);
  EXPECT_EQ(emb.positions, base + 50272 * 512);
  EXPECT_EQ(emb.project_in, emb.positions + 2050 * 1024);
  const HeadView head = MakeHeadView(spec, base);
  EXPECT_EQ(head.norm_weight, nullptr);
  EXPECT_EQ(head.norm_bias, nullptr);
  EXPECT_EQ(head.project_out, base);
  EXPECT_EQ(HeadPartLayout(spec).Get("project_out.weight").shape,
            (std::vector<int64_t>{512, 1024}));
}

TEST(Slots, LlamaHasNoPositionTableAndAnUntiedHeadLast) {
  const ModelSpec spec = Zoo("llama2-7b");
  const float* base = reinterpret_cast<const float*>(0x1000);
  EXPECT_EQ(MakeEmbeddingView(spec, base).positions, nullptr);
  const PartLayout head = HeadPartLayout(spec);
  const TensorSlice& lm_head = head.Get(TensorSlot::kLmHead);
  EXPECT_EQ(lm_head.name, "lm_head.weight");
  EXPECT_EQ(lm_head.offset, 4096);  // after model.norm.weight
  EXPECT_EQ(lm_head.offset + lm_head.elements(), head.total_floats);
  const PartLayout block = BlockPartLayout(spec, 3);
  EXPECT_EQ(block.Get(TensorSlot::kGateWeight).name, "model.layers.3.mlp.gate_proj.weight");
  EXPECT_EQ(block.Find(TensorSlot::kAttnNormBias), nullptr);
}

}  // namespace
}  // namespace zosched
