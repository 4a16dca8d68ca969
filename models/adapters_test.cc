#include "models/adapters.h"

#include "gtest/gtest.h"
#include "models/zoo_model_for_test.h"

namespace zosched {
namespace {

Peft Lora(int rank, double alpha, std::vector<LoraTarget> targets = {}) {
  Peft peft;
  peft.set_kind(LORA);
  peft.set_lora_rank(rank);
  peft.set_lora_alpha(alpha);
  for (LoraTarget t : targets) peft.add_lora_targets(t);
  return peft;
}

// OPT-125m's query and value adapters, as PEFT names and shapes them in
// adapter_model.safetensors (before its "base_model.model." prefix).
TEST(AdaptersTest, OptQueryAndValueByDefault) {
  const ModelSpec opt = Zoo("opt-125m");
  const Peft peft = Lora(8, 16);
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
  const Peft peft = Lora(2, 4, {LORA_DOWN, LORA_GATE, LORA_KEY});
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

TEST(AdaptersTest, RefusesWhatCannotRun) {
  const ModelSpec opt = Zoo("opt-tiny");
  auto refused = [&](const ModelSpec& model, const Peft& peft, const std::string& says) {
    const absl::Status status = ValidatePeft(model, peft);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << says;
    EXPECT_NE(status.message().find(says), std::string::npos) << status;
  };
  refused(opt, Lora(0, 16), "lora_rank 0 is out of range");
  refused(opt, Lora(8, 0), "lora_alpha 0 is not a finite number > 0");
  refused(opt, Lora(8, 16, {LORA_GATE}), "no gated FFN");
  refused(opt, Lora(8, 16, {LORA_QUERY, LORA_QUERY}), "names LORA_QUERY twice");
  refused(Zoo("gpt2-tiny"), Lora(8, 16), "GPT-2");
  Peft stray;
  stray.set_lora_rank(8);
  refused(opt, stray, "its kind is PEFT_NONE");
  EXPECT_TRUE(ValidatePeft(opt, Peft()).ok());
  EXPECT_EQ(AdapterParams(opt, Peft()), 0);
}

}  // namespace
}  // namespace zosched
