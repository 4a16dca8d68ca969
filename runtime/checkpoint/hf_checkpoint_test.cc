// Loading Hugging Face checkpoints of every family as transformers writes
// them (BF16, sharded with an index; the names spelt by hand in
// hf_checkpoint_testdata), refusing those of another model, and saving
// what loads back.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/textproto.h"
#include "gtest/gtest.h"
#include "models/model_spec.h"
#include "models/model_tensors.h"
#include "runtime/checkpoint/checkpoint_files.h"
#include "runtime/checkpoint/checkpoint_names.h"
#include "runtime/checkpoint/hf_checkpoint_testdata.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/dtype/convert.h"

namespace zosched {
namespace {

// Whether `text` contains `part`, showing both if not.
::testing::AssertionResult Contains(absl::string_view text, absl::string_view part) {
  if (text.find(part) != absl::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

ModelSpec Spec(const std::string& text) {
  ModelSpec spec;
  EXPECT_TRUE(ParseTextProto(text, "test", &spec).ok());
  const absl::Status valid = ValidateModelSpec(spec, "test");
  EXPECT_TRUE(valid.ok()) << valid;
  return spec;
}

constexpr char kLlamaBlock[] = R"pb(
  activation: SWIGLU norm: RMS_NORM norm_placement: PRE_NORM positional: ROTARY
  linear_bias: false final_norm: true weight_dtype: BF16 vocab_size: 32 max_positions: 64
)pb";

// LLaMA with grouped-query attention (4 query heads, 2 key/value heads) and
// an untied head.
ModelSpec Llama(int layers = 2) {
  return Spec(absl::StrCat(R"pb(name: "tiny-llama" family: LLAMA hidden_size: 16 num_heads: 4
                                num_kv_heads: 2 ffn_size: 24 rope_theta: 10000
                                tied_lm_head: false num_layers: )pb",
                           layers, kLlamaBlock));
}

// Qwen2: biases on q, k and v; tied head.
ModelSpec Qwen2() {
  return Spec(absl::StrCat(R"pb(name: "tiny-qwen2" family: QWEN2 hidden_size: 16 num_layers: 2
                                num_heads: 4 num_kv_heads: 2 ffn_size: 24 rope_theta: 1000000
                                norm_eps: 1e-6 qkv_bias: true tied_lm_head: true)pb",
                           kLlamaBlock));
}

// Qwen3: QK-norm, heads 8 wide although hidden_size / num_heads is 4.
ModelSpec Qwen3() {
  return Spec(absl::StrCat(R"pb(name: "tiny-qwen3" family: QWEN3 hidden_size: 16 num_layers: 2
                                num_heads: 4 num_kv_heads: 2 head_dim: 8 ffn_size: 24
                                rope_theta: 1000000 norm_eps: 1e-6 qk_norm: true
                                tied_lm_head: true)pb",
                           kLlamaBlock));
}

ModelSpec Gpt2() {
  return Spec(R"pb(
    name: "tiny-gpt2" family: GPT2 hidden_size: 16 num_layers: 2 num_heads: 4
    ffn_size: 64 vocab_size: 32 max_positions: 16 activation: GELU norm: LAYER_NORM
    norm_placement: PRE_NORM positional: LEARNED tied_lm_head: true linear_bias: true
    final_norm: true weight_dtype: FP32
  )pb");
}

std::string Dir(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/hf_checkpoint_", name);
}

// The values of `spec`'s parameters in the ModelSpec's order, taken from
// `hf` by name under either spelling (the expected result of a load).
std::vector<float> Expected(const ModelSpec& spec, const std::vector<HfTensor>& hf,
                            const std::vector<TensorSpec>& tensors) {
  std::vector<float> values;
  for (const TensorSpec& t : tensors) {
    const HfTensor* found = nullptr;
    for (const std::string& name : StoredNames(spec.family(), t.name)) {
      if (found == nullptr) found = FindHf(hf, name);
    }
    if (found == nullptr) {
      ADD_FAILURE() << t.name << " is not in the checkpoint";
      continue;
    }
    EXPECT_EQ(found->shape, t.shape) << t.name;
    values.insert(values.end(), found->values.begin(), found->values.end());
  }
  return values;
}

// Loads every parameter of `spec` from `path` as FP32.
absl::StatusOr<std::vector<float>> LoadAll(const std::string& path, const ModelSpec& spec) {
  const std::vector<TensorSpec> tensors = ModelParameters(spec);
  std::vector<float> out(CountElements(tensors));
  const absl::Status s = LoadModelParameters(path, spec, tensors, FP32, out.data());
  if (!s.ok()) return s;
  return out;
}

// `tensors` with `name` reshaped to `shape` (its values resized).
std::vector<HfTensor> Reshaped(std::vector<HfTensor> tensors, const std::string& name,
                               std::vector<int64_t> shape) {
  for (HfTensor& t : tensors) {
    if (t.name != name) continue;
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    t.shape = std::move(shape);
    t.values.assign(n, 0.25f);
    return tensors;
  }
  ADD_FAILURE() << "no tensor " << name;
  return tensors;
}

std::vector<HfTensor> Without(std::vector<HfTensor> tensors, const std::string& name) {
  for (auto it = tensors.begin(); it != tensors.end(); ++it) {
    if (it->name == name) {
      tensors.erase(it);
      return tensors;
    }
  }
  ADD_FAILURE() << "no tensor " << name;
  return tensors;
}

// A non-parameter tensor of `shape`, F32.
HfTensor Buffer(const std::string& name, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return {name, std::move(shape), std::vector<float>(n, 1.0f), FP32};
}

// Every family, BF16 in three shards, loads by its directory and by its
// index, each value in place; one block alone loads too, as BF16.
TEST(HfCheckpointTest, EveryFamilyLoadsFromShardsByDirectoryOrIndex) {
  for (const ModelSpec& spec : {Llama(), Qwen2(), Qwen3(), Gpt2()}) {
    SCOPED_TRACE(spec.name());
    const std::vector<HfTensor> hf = HfParameters(spec);
    const std::string dir = Dir(spec.name());
    const std::string index = WriteHfCheckpoint(dir, hf, 3);
    const std::vector<float> expected = Expected(spec, hf, ModelParameters(spec));
    for (const std::string& path : {dir, index}) {
      absl::StatusOr<std::vector<float>> loaded = LoadAll(path, spec);
      ASSERT_TRUE(loaded.ok()) << loaded.status();
      EXPECT_EQ(*loaded, expected) << path;
    }
    const std::vector<TensorSpec> block = BlockTensors(spec, 1);
    std::vector<uint16_t> bf16(CountElements(block));
    const absl::Status s = LoadModelParameters(dir, spec, block, BF16, bf16.data());
    ASSERT_TRUE(s.ok()) << s;
    const std::vector<float> block_values = Expected(spec, hf, block);
    std::vector<uint16_t> want(block_values.size());
    ConvertBuffer(FP32, block_values.data(), BF16, want.data(), want.size());
    EXPECT_EQ(bf16, want);
  }
}

// GPT2LMHeadModel.save_pretrained writes "transformer.h.0.…"; older
// checkpoints also hold the attention masks: both load as the bare names.
TEST(HfCheckpointTest, Gpt2LoadsUnderTransformerPrefixWithMaskBuffers) {
  const ModelSpec spec = Gpt2();
  const std::vector<HfTensor> bare = HfParameters(spec);
  std::vector<HfTensor> prefixed = WithPrefix(bare, "transformer.");
  for (int l = 0; l < spec.num_layers(); ++l) {
    prefixed.push_back(Buffer(absl::StrCat("transformer.h.", l, ".attn.bias"), {1, 1, 16, 16}));
    prefixed.push_back(Buffer(absl::StrCat("transformer.h.", l, ".attn.masked_bias"), {}));
  }
  const std::string dir = Dir("gpt2_transformer");
  WriteHfCheckpoint(dir, prefixed, 2);
  absl::StatusOr<std::vector<float>> loaded = LoadAll(dir, spec);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, Expected(spec, bare, ModelParameters(spec)));

  // openai-community/gpt2's own file: bare names, the masks, one file.
  std::vector<HfTensor> published = bare;
  published.push_back(Buffer("h.0.attn.bias", {1, 1, 16, 16}));
  published.push_back(Buffer("h.1.attn.masked_bias", {}));
  const std::string single = Dir("gpt2_published");
  WriteHfCheckpoint(single, published, 1);
  loaded = LoadAll(single, spec);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, Expected(spec, bare, ModelParameters(spec)));
}

// A checkpoint of the base model (LlamaModel / Qwen2Model.save_pretrained):
// no "model." prefix, no head (tied here).
TEST(HfCheckpointTest, BaseModelNamesWithoutThePrefixLoad) {
  const ModelSpec spec = Qwen2();
  const std::vector<HfTensor> hf = HfParameters(spec);
  std::vector<HfTensor> base = hf;
  for (HfTensor& t : base) t.name = t.name.substr(std::string("model.").size());
  const std::string dir = Dir("qwen2_base");
  WriteHfCheckpoint(dir, base, 2);
  absl::StatusOr<std::vector<float>> loaded = LoadAll(dir, spec);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, Expected(spec, hf, ModelParameters(spec)));
}

// Some Qwen3 checkpoints store the tied head's copy; older LLaMA ones the
// rotary frequencies. Neither is a parameter of another model.
TEST(HfCheckpointTest, TiedHeadCopiesAndRotaryBuffersAreIgnored) {
  const ModelSpec qwen3 = Qwen3();
  std::vector<HfTensor> hf = HfParameters(qwen3);
  hf.push_back({kLmHeadName, hf.front().shape, hf.front().values, BF16});
  const std::string dir = Dir("qwen3_lm_head");
  WriteHfCheckpoint(dir, hf, 3);
  absl::StatusOr<std::vector<float>> loaded = LoadAll(dir, qwen3);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, Expected(qwen3, hf, ModelParameters(qwen3)));

  const ModelSpec llama = Llama();
  hf = HfParameters(llama);
  for (int l = 0; l < llama.num_layers(); ++l) {
    hf.push_back(Buffer(absl::StrCat("model.layers.", l, ".self_attn.rotary_emb.inv_freq"), {2}));
  }
  WriteHfCheckpoint(Dir("llama_inv_freq"), hf, 2);
  loaded = LoadAll(Dir("llama_inv_freq"), llama);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
}

// Two wrong shapes: the one named is the first in the ModelSpec's order
// (v_proj before mlp.up_proj), although the files order them by name.
TEST(HfCheckpointErrorTest, TheFirstWrongShapeInModelOrderIsNamed) {
  const ModelSpec spec = Llama();
  std::vector<HfTensor> hf = HfParameters(spec);
  hf = Reshaped(hf, "model.layers.0.mlp.up_proj.weight", {16, 16});
  hf = Reshaped(hf, "model.layers.0.self_attn.v_proj.weight", {16, 16});  // no GQA
  const std::string dir = Dir("llama_shapes");
  WriteHfCheckpoint(dir, hf, 3);
  const absl::Status s = LoadAll(dir, spec).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s.message(), absl::StrCat(dir, "/model-0000")));
  EXPECT_TRUE(Contains(s.message(), ".safetensors: tensor 'model.layers.0.self_attn.v_proj.weight'"
                                    ": shape [8, 16] expected, found [16, 16]"));
}

// Under the other spelling, the message shows the name it is stored as.
TEST(HfCheckpointErrorTest, AWrongShapeShowsTheStoredName) {
  const ModelSpec spec = Gpt2();
  const std::vector<HfTensor> hf =
      WithPrefix(Reshaped(HfParameters(spec), "h.1.attn.c_attn.weight", {16, 16}), "transformer.");
  const std::string dir = Dir("gpt2_shape");
  WriteHfCheckpoint(dir, hf, 1);
  const absl::Status s = LoadAll(dir, spec).status();
  EXPECT_EQ(s.message(), dir + "/model.safetensors: tensor 'h.1.attn.c_attn.weight' (stored as "
                               "'transformer.h.1.attn.c_attn.weight'): shape [16, 48] expected, "
                               "found [16, 16]");
}

TEST(HfCheckpointErrorTest, AMissingTensorIsNamedWithBothSpellings) {
  const ModelSpec spec = Llama();
  const std::string dir = Dir("llama_missing");
  WriteHfCheckpoint(
      dir, Without(HfParameters(spec), "model.layers.1.post_attention_layernorm.weight"), 2);
  const absl::Status s = LoadAll(dir, spec).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_EQ(s.message(), dir + ": tensor 'model.layers.1.post_attention_layernorm.weight' not "
                               "found (nor as 'layers.1.post_attention_layernorm.weight'); the "
                               "checkpoint holds 20 tensors");
}

// A 1-block model's checkpoint for a 2-block spec: the first tensor of
// block 1 is missing, and so is the whole block.
TEST(HfCheckpointErrorTest, ASmallerModelIsNamedAsSuch) {
  const std::string dir = Dir("llama_smaller");
  WriteHfCheckpoint(dir, HfParameters(Llama(1)), 2);
  const absl::Status s = LoadAll(dir, Llama(2)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_TRUE(Contains(s.message(), "tensor 'model.layers.1.input_layernorm.weight' not found"));
  EXPECT_TRUE(Contains(s.message(), "it holds blocks up to 0 only, and 'tiny-llama' has 2 (0-1), "
                                    "so it is probably of a smaller model of the family (a "
                                    "different size)"));
}

// A 3-block model's checkpoint for a 2-block spec: every tensor the spec
// has is there, but so are the 9 of block 2.
TEST(HfCheckpointErrorTest, ABiggerModelIsRefused) {
  const std::string dir = Dir("llama_bigger");
  const std::string index = WriteHfCheckpoint(dir, HfParameters(Llama(3)), 3);
  for (const std::string& path : {dir, index}) {
    const absl::Status s = LoadAll(path, Llama(2)).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(Contains(s.message(),
                         ".safetensors: tensor 'model.layers.2.input_layernorm.weight' (1 of 9 "
                         "tensors not of model 'tiny-llama') is of block 2, but 'tiny-llama' has "
                         "2 blocks (0-1); the checkpoint, which has blocks up to 2, is probably "
                         "of a bigger model of the family (a different size): start from a "
                         "checkpoint of 'tiny-llama'"));
  }
  // The one block needed loads alone no more than the whole model.
  std::vector<float> out(CountElements(BlockTensors(Llama(2), 0)));
  const absl::Status s =
      LoadModelParameters(dir, Llama(2), BlockTensors(Llama(2), 0), FP32, out.data());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

// A Qwen3 checkpoint for a LLaMA spec of the same sizes: q_norm and k_norm
// are not LLaMA's.
TEST(HfCheckpointErrorTest, AnotherVariantsTensorsAreRefused) {
  ModelSpec llama = Qwen3();
  llama.set_name("llama-like-qwen3");
  llama.set_family(LLAMA);
  llama.set_qk_norm(false);
  ASSERT_TRUE(ValidateModelSpec(llama, "test").ok());
  const std::string dir = Dir("qwen3_as_llama");
  WriteHfCheckpoint(dir, HfParameters(Qwen3()), 2);
  const absl::Status s = LoadAll(dir, llama).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s.message(),
                       ".safetensors: tensor 'model.layers.0.self_attn.k_norm.weight' (1 of 4 "
                       "tensors not of model 'llama-like-qwen3') is not a parameter of "
                       "'llama-like-qwen3' (family LLAMA, 2 blocks: its block 0 has no such "
                       "tensor); the checkpoint is probably of another model (a different size "
                       "or variant of the family)"));
}

// What training saves (one file, the spec's names, "format": "pt") loads
// back; GPT-2's names stay bare, as openai-community/gpt2 has them.
TEST(HfCheckpointSaveTest, SavedGpt2HasBareNamesAndLoadsBack) {
  const ModelSpec spec = Gpt2();
  const std::vector<HfTensor> hf = HfParameters(spec);
  const std::vector<TensorSpec> tensors = ModelParameters(spec);
  const std::vector<float> values = Expected(spec, hf, tensors);
  const std::string path = Dir("gpt2_saved.safetensors");
  ASSERT_TRUE(SaveModelParameters(path, spec, {{tensors, FP32, values.data()}},
                                  {{"format", "np"}})
                  .ok());
  absl::StatusOr<SafetensorsFile> file = ReadSafetensors(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->metadata().at("format"), "pt");
  EXPECT_NE(file->Find("h.0.attn.c_attn.weight"), nullptr);
  EXPECT_NE(file->Find("wte.weight"), nullptr);
  EXPECT_EQ(file->tensors().size(), tensors.size());
  absl::StatusOr<std::vector<float>> loaded = LoadAll(path, spec);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, values);
}

// A tied model's head is the embedding: a part holding "lm_head.weight" is
// not written, and loading the head gives the embedding.
TEST(HfCheckpointSaveTest, ATiedModelSavesNoHead) {
  const ModelSpec spec = Qwen2();
  std::vector<TensorSpec> tensors = ModelParameters(spec);
  const TensorSpec embedding = tensors.front();
  tensors.push_back({kLmHeadName, embedding.shape, TensorRole::kMatrix});
  std::vector<float> values(CountElements(tensors));
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * (i % 7);
  const std::string path = Dir("qwen2_saved.safetensors");
  ASSERT_TRUE(SaveModelParameters(path, spec, {{tensors, FP32, values.data()}}, {}).ok());
  absl::StatusOr<SafetensorsFile> file = ReadSafetensors(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->Find(kLmHeadName), nullptr);
  EXPECT_EQ(file->tensors().size(), tensors.size() - 1);
  std::vector<float> head(embedding.elements());
  const absl::Status s = LoadModelParameters(path, spec, {tensors.back()}, FP32, head.data());
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(head, std::vector<float>(values.begin(), values.begin() + head.size()));
}

}  // namespace
}  // namespace zosched
