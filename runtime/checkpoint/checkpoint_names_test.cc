#include "runtime/checkpoint/checkpoint_names.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/textproto.h"
#include "gtest/gtest.h"
#include "models/adapters.h"
#include "models/model_spec.h"
#include "runtime/checkpoint/checkpoint_files.h"
#include "runtime/checkpoint/hf_checkpoint_testdata.h"
#include "runtime/checkpoint/safetensors.h"

namespace zosched {
namespace {

ModelSpec Spec(const char* text) {
  ModelSpec spec;
  EXPECT_TRUE(ParseTextProto(text, "test", &spec).ok());
  const absl::Status valid = ValidateModelSpec(spec, "test");
  EXPECT_TRUE(valid.ok()) << valid;
  return spec;
}

ModelSpec TinyLlama() {
  return Spec(R"pb(
    name: "tiny-llama" family: LLAMA hidden_size: 16 num_layers: 12 num_heads: 4
    num_kv_heads: 2 ffn_size: 24 vocab_size: 32 max_positions: 64 activation: SWIGLU
    norm: RMS_NORM norm_placement: PRE_NORM positional: ROTARY rope_theta: 10000
    tied_lm_head: false linear_bias: false final_norm: true weight_dtype: BF16
  )pb");
}

ModelSpec TinyGpt2() {
  return Spec(R"pb(
    name: "tiny-gpt2" family: GPT2 hidden_size: 16 num_layers: 2 num_heads: 4
    ffn_size: 64 vocab_size: 32 max_positions: 16 activation: GELU norm: LAYER_NORM
    norm_placement: PRE_NORM positional: LEARNED tied_lm_head: true linear_bias: true
    final_norm: true weight_dtype: FP32
  )pb");
}

// The prefix rule: removed where the name has it, added where it has not.
TEST(CheckpointNamesTest, EachParameterHasTwoSpellings) {
  EXPECT_EQ(StoredNames(LLAMA, "model.layers.3.mlp.up_proj.weight"),
            (std::vector<std::string>{"model.layers.3.mlp.up_proj.weight",
                                      "layers.3.mlp.up_proj.weight"}));
  EXPECT_EQ(StoredNames(QWEN3, "model.norm.weight"),
            (std::vector<std::string>{"model.norm.weight", "norm.weight"}));
  EXPECT_EQ(StoredNames(OPT, "model.decoder.embed_tokens.weight"),
            (std::vector<std::string>{"model.decoder.embed_tokens.weight",
                                      "decoder.embed_tokens.weight"}));
  EXPECT_EQ(StoredNames(GPT2, "h.0.attn.c_attn.weight"),
            (std::vector<std::string>{"h.0.attn.c_attn.weight",
                                      "transformer.h.0.attn.c_attn.weight"}));
  EXPECT_EQ(StoredNames(FAMILY_UNSPECIFIED, "a"), (std::vector<std::string>{"a"}));
  EXPECT_EQ(StoredNames(LLAMA, "lm_head.weight"), (std::vector<std::string>{"lm_head.weight"}));
  EXPECT_EQ(StoredNames(GPT2, "lm_head.weight"), (std::vector<std::string>{"lm_head.weight"}));
  EXPECT_EQ(BaseModelPrefix(QWEN2), "model.");
  EXPECT_EQ(BaseModelPrefix(GPT2), "transformer.");
}

TEST(CheckpointNamesTest, StoredLayerReadsTheBlockIndexOfEitherSpelling) {
  const ModelSpec llama = TinyLlama();
  EXPECT_EQ(StoredLayer(llama, "model.layers.11.mlp.up_proj.weight"), 11);
  EXPECT_EQ(StoredLayer(llama, "layers.7.input_layernorm.weight"), 7);
  EXPECT_EQ(StoredLayer(llama, "model.layers.40.self_attn.q_norm.weight"), 40);  // not its own
  EXPECT_EQ(StoredLayer(llama, "model.norm.weight"), -1);
  EXPECT_EQ(StoredLayer(llama, "model.layers.x.a"), -1);
  EXPECT_EQ(StoredLayer(llama, "model.layers.3"), -1);
  const ModelSpec gpt2 = TinyGpt2();
  EXPECT_EQ(StoredLayer(gpt2, "h.1.ln_1.weight"), 1);
  EXPECT_EQ(StoredLayer(gpt2, "transformer.h.23.attn.bias"), 23);
  EXPECT_EQ(StoredLayer(gpt2, "wte.weight"), -1);
  EXPECT_EQ(StoredLayer(gpt2, "hh.1.x"), -1);
}

TEST(CheckpointNamesTest, BuffersAreNotParameters) {
  EXPECT_TRUE(IsNonParameterBuffer("h.0.attn.bias"));
  EXPECT_TRUE(IsNonParameterBuffer("transformer.h.11.attn.masked_bias"));
  EXPECT_TRUE(IsNonParameterBuffer("model.layers.0.self_attn.rotary_emb.inv_freq"));
  EXPECT_FALSE(IsNonParameterBuffer("h.0.attn.c_attn.bias"));
  EXPECT_FALSE(IsNonParameterBuffer("model.layers.0.self_attn.q_proj.bias"));
}

// The names and shapes of model_tensors.h are those of the families'
// checkpoints, spelt by hand in hf_checkpoint_testdata, in the same order.
TEST(CheckpointNamesTest, ModelParametersAreTheCheckpointsTensorsInOrder) {
  for (const ModelSpec& spec : {TinyLlama(), TinyGpt2()}) {
    const std::vector<TensorSpec> parameters = ModelParameters(spec);
    const std::vector<HfTensor> hf = HfParameters(spec);
    ASSERT_EQ(parameters.size(), hf.size()) << spec.name();
    for (size_t i = 0; i < hf.size(); ++i) {
      EXPECT_EQ(parameters[i].name, hf[i].name) << spec.name();
      EXPECT_EQ(parameters[i].shape, hf[i].shape) << hf[i].name;
    }
  }
}


// A LoRA or prefix run's checkpoint holds its ADAPTER_PARTs' tensors
// (AdapterTensors' names: "….lora_A.weight", "<attention
// module>.prefix_keys", ...) beside the base: they are no other model's
// tensors, and they load back exactly (a resumed run's adapters).
TEST(CheckpointNamesTest, AdapterTensorsAreNotForeignAndLoadBack) {
  const ModelSpec llama = TinyLlama();
  Peft prefix;
  prefix.set_kind(PREFIX);
  prefix.set_prefix_tokens(3);
  Peft lora;
  lora.set_kind(LORA);
  lora.set_lora_rank(2);
  lora.set_lora_alpha(4);
  std::vector<HfTensor> tensors = HfParameters(llama);
  std::vector<TensorSpec> adapters;  // the prefix's, to load
  std::vector<float> expected;
  float next = 0;
  for (int64_t l = 0; l < llama.num_layers(); ++l) {
    for (const Peft& peft : {prefix, lora}) {
      for (const TensorSpec& t : AdapterTensors(llama, peft, l)) {
        HfTensor hf{t.name, t.shape, {}, FP32};
        for (int64_t i = 0; i < CountElements({t}); ++i) hf.values.push_back(next++ / 4);
        if (peft.kind() == PREFIX) {
          adapters.push_back(t);
          expected.insert(expected.end(), hf.values.begin(), hf.values.end());
        }
        tensors.push_back(std::move(hf));
      }
    }
  }
  ASSERT_EQ(adapters[0].name, "model.layers.0.self_attn.prefix_keys");
  ASSERT_EQ(adapters[1].name, "model.layers.0.self_attn.prefix_values");

  const std::string dir = absl::StrCat(::testing::TempDir(), "/names_adapters");
  WriteHfCheckpoint(dir, tensors, 2);
  {
    absl::StatusOr<CheckpointFiles> checkpoint = CheckpointFiles::Open(dir);
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
    const absl::Status clean = CheckNoForeignTensors(*checkpoint, llama);
    EXPECT_TRUE(clean.ok()) << clean;
  }
  std::vector<float> loaded(expected.size());
  const absl::Status load = LoadModelParameters(dir, llama, adapters, FP32, loaded.data());
  ASSERT_TRUE(load.ok()) << load;
  EXPECT_EQ(loaded, expected);

  // Another tensor of the attention module still is another model's.
  tensors.push_back({"model.layers.1.self_attn.prefix_bias", {8}, std::vector<float>(8), FP32});
  const std::string other = absl::StrCat(::testing::TempDir(), "/names_adapters_other");
  WriteHfCheckpoint(other, tensors, 1);
  absl::StatusOr<CheckpointFiles> checkpoint = CheckpointFiles::Open(other);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  const absl::Status foreign = CheckNoForeignTensors(*checkpoint, llama);
  EXPECT_EQ(foreign.code(), absl::StatusCode::kInvalidArgument) << foreign;
  EXPECT_NE(foreign.message().find("tensor 'model.layers.1.self_attn.prefix_bias' (the one "
                                   "tensor not of model 'tiny-llama')"),
            absl::string_view::npos)
      << foreign;
}

}  // namespace
}  // namespace zosched
