#include "models/adapters.h"

#include "gtest/gtest.h"
#include "models/peft_for_test.h"
#include "models/zoo_model_for_test.h"

namespace zosched {
namespace {

// OPT-125m's query and value adapters, as PEFT names and shapes them in
// adapter_model.safetensors (before its "base_model.model." prefix).
TEST(AdaptersTest, OptQueryAndValueByDefault) {
  const ModelSpec opt = Zoo("opt-125m");
  const Peft peft = LoraPeft(8, 16);
  ASSERT_TRUE(ValidatePeft(opt, peft).ok());
  const std::vector<LoraAdapter> adapters = BlockAdapters(opt, peft, 3);
  ASSERT_EQ(adapters.size(), 2u);
  EXPECT_EQ(adapters[0].a.name, "model.decoder.layers.3.self_attn.q_proj.lora_A.weight");
  EXPECT_EQ(adapters[0].a.shape, (std::vector<int64_t>{8, 768}));
  EXPECT_EQ(adapters[0].b.name, "model.decoder.layers.3.self_attn.q_proj.lora_B.weight");
  EXPECT_EQ(adapters[0].b.shape, (std::vector<int64_t>{768, 8}));
  EXPECT_EQ(adapters[1].module, "model.decoder.layers.3.self_attn.v_proj");
  EXPECT_EQ(adapters[0].a_offset, 0);
  EXPECT_EQ(adapters[0].b_offset, 8 * 768);
  EXPECT_EQ(adapters[1].a_offset, 2 * 8 * 768);
  EXPECT_EQ(AdapterParams(opt, peft), 4 * 8 * 768);
  EXPECT_FLOAT_EQ(LoraScaling(peft), 2.0f);
  EXPECT_EQ(LoraTargetName(opt, LORA_UP), "fc1");
  EXPECT_EQ(LoraTargetName(opt, LORA_OUTPUT), "out_proj");
}

// Targets come out in layout order whatever order they were given in, with
// each projection's own widths (grouped-query keys and values are narrower).
TEST(AdaptersTest, LlamaTargetsInLayoutOrder) {
  const ModelSpec llama = Zoo("llama-tiny");
  const Peft peft = LoraPeft(2, 4, {LORA_DOWN, LORA_GATE, LORA_KEY});
  ASSERT_TRUE(ValidatePeft(llama, peft).ok());
  const std::vector<LoraAdapter> adapters = BlockAdapters(llama, peft, 0);
  ASSERT_EQ(adapters.size(), 3u);
  EXPECT_EQ(adapters[0].target, LORA_KEY);
  EXPECT_EQ(adapters[1].target, LORA_GATE);
  EXPECT_EQ(adapters[2].target, LORA_DOWN);
  EXPECT_EQ(adapters[2].in, llama.ffn_size());
  EXPECT_EQ(adapters[2].out, llama.hidden_size());
  EXPECT_EQ(LoraTargetName(llama, LORA_GATE), "gate_proj");
  int64_t total = 0;
  for (const LoraAdapter& a : adapters) total += 2 * (a.in + a.out);
  EXPECT_EQ(AdapterParams(llama, peft), total);
}

// A prefix's keys and values per block, named on the attention module
// (MeZO's prefix_keys / prefix_values), kv wide: grouped-query models keep
// fewer.
TEST(AdaptersTest, PrefixKeysAndValuesPerBlock) {
  const ModelSpec opt = Zoo("opt-125m");
  const Peft peft = PrefixPeft(5);
  ASSERT_TRUE(ValidatePeft(opt, peft).ok());
  const std::vector<TensorSpec> tensors = AdapterTensors(opt, peft, 3);
  ASSERT_EQ(tensors.size(), 2u);
  EXPECT_EQ(tensors[0].name, "model.decoder.layers.3.self_attn.prefix_keys");
  EXPECT_EQ(tensors[0].shape, (std::vector<int64_t>{5, 768}));
  EXPECT_EQ(tensors[1].name, "model.decoder.layers.3.self_attn.prefix_values");
  EXPECT_EQ(AdapterParams(opt, peft), 2 * 5 * 768);
  EXPECT_TRUE(BlockAdapters(opt, peft, 0).empty());
  EXPECT_TRUE(TrainsAdapters(peft));
  EXPECT_FALSE(TrainsLora(peft));
  EXPECT_EQ(PrefixTokens(peft), 5);
  EXPECT_EQ(PeftLabel(peft), "prefix k5");
  const ModelSpec llama = Zoo("llama-tiny");
  EXPECT_EQ(AdapterTensors(llama, peft, 0)[1].shape,
            (std::vector<int64_t>{5, llama.hidden_size() / 2}));  // half the heads keep k and v
  EXPECT_EQ(AttentionModule(Zoo("gpt2-tiny"), 1), "h.1.attn");  // GPT-2 checkpoints name no root
  EXPECT_TRUE(ValidatePeft(Zoo("gpt2-tiny"), peft).ok()) << "a prefix runs on fused c_attn too";
}

TEST(AdaptersTest, RefusesWhatCannotRun) {
  const ModelSpec opt = Zoo("opt-tiny");
  auto refused = [&](const ModelSpec& model, const Peft& peft, const std::string& says) {
    const absl::Status status = ValidatePeft(model, peft);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << says;
    EXPECT_NE(status.message().find(says), std::string::npos) << status;
  };
  refused(opt, LoraPeft(0, 16), "lora_rank 0 is out of range");
  refused(opt, LoraPeft(8, 0), "lora_alpha 0 is not a finite number > 0");
  refused(opt, LoraPeft(8, 16, {LORA_GATE}), "no gated FFN");
  refused(opt, LoraPeft(8, 16, {LORA_QUERY, LORA_QUERY}), "names LORA_QUERY twice");
  refused(Zoo("gpt2-tiny"), LoraPeft(8, 16), "GPT-2");
  Peft stray;
  stray.set_lora_rank(8);
  refused(opt, stray, "its kind is PEFT_NONE");
  refused(opt, PrefixPeft(0), "prefix_tokens 0 is out of range");
  refused(opt, PrefixPeft(opt.max_positions()), "a prefix has 1 to 63 virtual tokens");
  Peft mixed = PrefixPeft(5);
  mixed.set_lora_rank(8);
  refused(opt, mixed, "its kind is PREFIX");
  refused(opt, [] { Peft p = LoraPeft(8, 16); p.set_prefix_tokens(3); return p; }(),
          "prefix_tokens 3 but its kind is LORA");
  EXPECT_TRUE(ValidatePeft(opt, Peft()).ok());
  EXPECT_EQ(AdapterParams(opt, Peft()), 0);
}

}  // namespace
}  // namespace zosched
