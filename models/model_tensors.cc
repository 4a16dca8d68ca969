#include "models/model_tensors.h"

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "models/model_spec.h"
#include "models/position_rows.h"

namespace zosched {
namespace {

// Checkpoint names of one family. Projection names take ".weight"/".bias".
struct FamilyNames {
  const char* block_prefix;  // followed by the layer index and "."
  const char* qkv;           // fused q/k/v projection, or nullptr
  const char* q;
  const char* k;
  const char* v;
  const char* o;
  const char* attn_norm;
  const char* ffn_norm;
  const char* q_norm;  // QK-norm (Qwen3) only
  const char* k_norm;
  const char* gate;  // SwiGLU (LLaMA, Qwen) only
  const char* up;
  const char* down;
  const char* embed_tokens;
  const char* embed_positions;  // learned positions (OPT, GPT-2) only
  const char* project_in;       // OPT only
  const char* project_out;      // OPT only
  const char* final_norm;
  const char* lm_head;
  bool in_out_layout;  // Conv1D [in, out] rather than nn.Linear [out, in]
};

const FamilyNames& NamesOf(Family family) {
  static const FamilyNames kOpt = {
      "model.decoder.layers.", nullptr, "self_attn.q_proj", "self_attn.k_proj",
      "self_attn.v_proj", "self_attn.out_proj", "self_attn_layer_norm",
      "final_layer_norm", nullptr, nullptr, nullptr, "fc1", "fc2", "model.decoder.embed_tokens",
      "model.decoder.embed_positions", "model.decoder.project_in",
      "model.decoder.project_out", "model.decoder.final_layer_norm", "lm_head",
      false};
  static const FamilyNames kGpt2 = {
      "h.", "attn.c_attn", nullptr, nullptr, nullptr, "attn.c_proj", "ln_1",
      "ln_2", nullptr, nullptr, nullptr, "mlp.c_fc", "mlp.c_proj", "wte", "wpe", nullptr,
      nullptr, "ln_f", "lm_head", true};
  static const FamilyNames kLlama = {
      "model.layers.", nullptr, "self_attn.q_proj", "self_attn.k_proj",
      "self_attn.v_proj", "self_attn.o_proj", "input_layernorm",
      "post_attention_layernorm", "self_attn.q_norm", "self_attn.k_norm", "mlp.gate_proj", "mlp.up_proj",
      "mlp.down_proj", "model.embed_tokens", nullptr, nullptr, nullptr,
      "model.norm", "lm_head", false};
  switch (family) {
    case OPT:
      return kOpt;
    case GPT2:
      return kGpt2;
    case LLAMA:
    case QWEN2:  // Qwen2 and Qwen3 checkpoints use LLaMA's names
    case QWEN3:
      return kLlama;
    default:
      CHECK(false) << "no tensor names for family " << Family_Name(family);
  }
  return kOpt;
}

// Appends the tensors of a projection from `in` to `out` features: its
// weight in slot `weight` and, with `bias`, its bias in the slot after it.
void AddProjection(const FamilyNames& names, TensorSlot weight,
                   const std::string& name, int64_t in, int64_t out,
                   bool bias, std::vector<TensorSpec>* tensors) {
  std::vector<int64_t> shape =
      names.in_out_layout ? std::vector<int64_t>{in, out}
                          : std::vector<int64_t>{out, in};
  tensors->push_back({name + ".weight", shape, TensorRole::kMatrix, weight});
  if (bias) {
    tensors->push_back({name + ".bias", {out}, TensorRole::kBias,
                        static_cast<TensorSlot>(static_cast<int>(weight) + 1)});
  }
}

// A norm over `width` features (the hidden size, or one head's for QK-norm):
// its weight in slot `weight` and a LayerNorm's bias in the slot after it.
void AddNorm(const ModelSpec& spec, TensorSlot weight, const std::string& name,
             std::vector<TensorSpec>* tensors, int64_t width = 0) {
  if (width == 0) width = spec.hidden_size();
  tensors->push_back({name + ".weight", {width}, TensorRole::kNorm, weight});
  if (spec.norm() == LAYER_NORM) {
    tensors->push_back({name + ".bias", {width}, TensorRole::kNorm,
                        static_cast<TensorSlot>(static_cast<int>(weight) + 1)});
  }
}

}  // namespace

int64_t TensorSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool WeightsInOut(const ModelSpec& spec) { return NamesOf(spec.family()).in_out_layout; }

int64_t CountElements(const std::vector<TensorSpec>& tensors) {
  int64_t n = 0;
  for (const TensorSpec& t : tensors) n += t.elements();
  return n;
}

std::vector<TensorSpec> EmbeddingTensors(const ModelSpec& spec) {
  const FamilyNames& names = NamesOf(spec.family());
  const int64_t h = spec.hidden_size();
  std::vector<TensorSpec> tensors;
  tensors.push_back({absl::StrCat(names.embed_tokens, ".weight"),
                     {spec.vocab_size(), EmbedDim(spec)},
                     TensorRole::kEmbedding, TensorSlot::kTokenTable});
  if (spec.positional() == LEARNED_OPT_OFFSET || spec.positional() == LEARNED) {
    const int64_t rows = spec.max_positions() + FirstPositionRow(spec);
    tensors.push_back({absl::StrCat(names.embed_positions, ".weight"),
                       {rows, h},
                       TensorRole::kEmbedding, TensorSlot::kPositionTable});
  }
  if (spec.word_embed_proj_dim() != 0) {
    AddProjection(names, TensorSlot::kProjectIn, names.project_in, EmbedDim(spec), h,
                  /*bias=*/false, &tensors);
  }
  return tensors;
}

std::vector<TensorSpec> BlockTensors(const ModelSpec& spec, int64_t layer) {
  const FamilyNames& names = NamesOf(spec.family());
  const std::string prefix = absl::StrCat(names.block_prefix, layer, ".");
  const int64_t h = spec.hidden_size();
  const int64_t f = spec.ffn_size();
  const int64_t q = QueryWidth(spec);
  const int64_t kv = KvWidth(spec);
  const bool bias = spec.linear_bias();
  const bool qkv_bias = bias || spec.qkv_bias();
  std::vector<TensorSpec> tensors;
  AddNorm(spec, TensorSlot::kAttnNormWeight, prefix + names.attn_norm, &tensors);
  if (names.qkv != nullptr) {
    AddProjection(names, TensorSlot::kQkvWeight, prefix + names.qkv, h, q + 2 * kv, qkv_bias,
                  &tensors);
  } else {
    AddProjection(names, TensorSlot::kQWeight, prefix + names.q, h, q, qkv_bias, &tensors);
    AddProjection(names, TensorSlot::kKWeight, prefix + names.k, h, kv, qkv_bias, &tensors);
    AddProjection(names, TensorSlot::kVWeight, prefix + names.v, h, kv, qkv_bias, &tensors);
  }
  if (spec.qk_norm()) {
    AddNorm(spec, TensorSlot::kQNorm, prefix + names.q_norm, &tensors, HeadDim(spec));
    AddNorm(spec, TensorSlot::kKNorm, prefix + names.k_norm, &tensors, HeadDim(spec));
  }
  AddProjection(names, TensorSlot::kOWeight, prefix + names.o, q, h, bias, &tensors);
  AddNorm(spec, TensorSlot::kFfnNormWeight, prefix + names.ffn_norm, &tensors);
  if (spec.activation() == SWIGLU) {
    AddProjection(names, TensorSlot::kGateWeight, prefix + names.gate, h, f, bias, &tensors);
  }
  AddProjection(names, TensorSlot::kUpWeight, prefix + names.up, h, f, bias, &tensors);
  AddProjection(names, TensorSlot::kDownWeight, prefix + names.down, f, h, bias, &tensors);
  return tensors;
}

std::vector<TensorSpec> FinalNormTensors(const ModelSpec& spec) {
  std::vector<TensorSpec> tensors;
  if (spec.final_norm()) {
    AddNorm(spec, TensorSlot::kFinalNormWeight, NamesOf(spec.family()).final_norm, &tensors);
  }
  return tensors;
}

std::vector<TensorSpec> HeadTensors(const ModelSpec& spec) {
  const FamilyNames& names = NamesOf(spec.family());
  std::vector<TensorSpec> tensors;
  if (spec.word_embed_proj_dim() != 0) {
    AddProjection(names, TensorSlot::kProjectOut, names.project_out, spec.hidden_size(),
                  EmbedDim(spec), /*bias=*/false, &tensors);
  }
  if (!spec.tied_lm_head()) {
    tensors.push_back({absl::StrCat(names.lm_head, ".weight"),
                       {spec.vocab_size(), EmbedDim(spec)},
                       TensorRole::kMatrix, TensorSlot::kLmHead});
  }
  return tensors;
}

}  // namespace zosched
