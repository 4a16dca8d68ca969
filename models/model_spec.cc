#include "models/model_spec.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "base/check.h"

namespace zosched {
namespace {

// Formats an error about `spec` from `source`.
template <typename... Args>
absl::Status SpecError(const std::string& source, const ModelSpec& spec,
                       const absl::FormatSpec<Args...>& format,
                       const Args&... args) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: model '%s': ", source, spec.name()) +
      absl::StrFormat(format, args...));
}

}  // namespace

absl::Status ValidateModelSpec(const ModelSpec& spec, const std::string& source) {
  if (spec.name().empty()) {
    return SpecError(source, spec, "name is empty (expected e.g. name: \"opt-1.3b\")");
  }
  struct Size {
    const char* field;
    int64_t value;
    int64_t limit;
  };
  for (const Size& p : {Size{"hidden_size", spec.hidden_size(), kMaxHiddenSize},
                        Size{"num_layers", spec.num_layers(), kMaxLayers},
                        Size{"num_heads", spec.num_heads(), kMaxHiddenSize},
                        Size{"ffn_size", spec.ffn_size(), kMaxFfnSize},
                        Size{"vocab_size", spec.vocab_size(), kMaxVocabSize},
                        Size{"max_positions", spec.max_positions(), kMaxPositions}}) {
    if (p.value <= 0 || p.value > p.limit) {
      return SpecError(source, spec, "%s is %d (expected a positive integer up to %d)",
                       p.field, p.value, p.limit);
    }
  }
  if (spec.num_kv_heads() < 0 || spec.word_embed_proj_dim() < 0 ||
      spec.num_kv_heads() > spec.num_heads() || spec.word_embed_proj_dim() > kMaxHiddenSize) {
    return SpecError(source, spec,
                     "num_kv_heads %d and word_embed_proj_dim %d must be >= 0 "
                     "(0 means: same as num_heads / hidden_size) and at most num_heads "
                     "and %d",
                     spec.num_kv_heads(), spec.word_embed_proj_dim(), kMaxHiddenSize);
  }
  if (spec.head_dim() < 0 || spec.head_dim() > kMaxHiddenSize) {
    return SpecError(source, spec, "head_dim is %d (expected 0, meaning hidden_size / num_heads, "
                     "or a positive integer up to %d)", spec.head_dim(), kMaxHiddenSize);
  }
  if (spec.head_dim() == 0 && spec.hidden_size() % spec.num_heads() != 0) {
    return SpecError(source, spec,
                     "hidden_size %d is not divisible by num_heads %d",
                     spec.hidden_size(), spec.num_heads());
  }
  if (spec.num_heads() % KvHeads(spec) != 0) {
    return SpecError(source, spec,
                     "num_heads %d is not divisible by num_kv_heads %d",
                     spec.num_heads(), KvHeads(spec));
  }
  // Each enum set, to a value of its type: proto3 enums are open, so a file
  // may hold any number (e.g. `family: 6`).
  struct Enum {
    const char* field;
    int value;  // 0 is each enum's *_UNSPECIFIED
    bool (*is_valid)(int);
    const char* expected;
  };
  for (const Enum& e :
       {Enum{"family", spec.family(), Family_IsValid, "OPT, GPT2, LLAMA, QWEN2 or QWEN3"},
        Enum{"activation", spec.activation(), Activation_IsValid, "RELU, GELU or SWIGLU"},
        Enum{"norm", spec.norm(), Norm_IsValid, "LAYER_NORM or RMS_NORM"},
        Enum{"norm_placement", spec.norm_placement(), NormPlacement_IsValid,
             "PRE_NORM or POST_NORM"},
        Enum{"positional", spec.positional(), Positional_IsValid,
             "LEARNED_OPT_OFFSET, LEARNED or ROTARY"},
        Enum{"weight_dtype", spec.weight_dtype(), DType_IsValid, "FP32, FP16 or BF16"}}) {
    if (e.value == 0) {
      return SpecError(source, spec, "%s is not set (expected %s)", e.field,
                       e.expected);
    }
    if (!e.is_valid(e.value)) {
      return SpecError(source, spec, "%s is %d, not a value of its enum (expected %s)",
                       e.field, e.value, e.expected);
    }
  }
  if (spec.family() == GPT2 && KvHeads(spec) != spec.num_heads()) {
    return SpecError(source, spec,
                     "GPT2 attention fuses q, k and v; num_kv_heads %d must be "
                     "0 or num_heads %d",
                     spec.num_kv_heads(), spec.num_heads());
  }
  if (spec.word_embed_proj_dim() != 0 && spec.family() != OPT) {
    return SpecError(source, spec,
                     "word_embed_proj_dim is an OPT feature (project_in / "
                     "project_out); family %s must leave it 0",
                     Family_Name(spec.family()));
  }
  // Tensor names follow the family's checkpoints (model_tensors.h), so only
  // the features those checkpoints have are accepted.
  const bool llama_like = IsLlamaLike(spec.family());
  if (llama_like && (spec.activation() != SWIGLU || spec.positional() != ROTARY ||
                     spec.norm() != RMS_NORM || spec.norm_placement() != PRE_NORM ||
                     spec.linear_bias())) {
    return SpecError(source, spec,
                     "%s blocks are pre-norm with RMS_NORM, activation SWIGLU, positional "
                     "ROTARY and no linear biases (got %s, %s, %s, %s, linear_bias %s)",
                     Family_Name(spec.family()), NormPlacement_Name(spec.norm_placement()),
                     Norm_Name(spec.norm()), Activation_Name(spec.activation()),
                     Positional_Name(spec.positional()), spec.linear_bias() ? "true" : "false");
  }
  if (!llama_like && (spec.activation() == SWIGLU || spec.positional() == ROTARY)) {
    return SpecError(source, spec,
                     "activation SWIGLU and positional ROTARY need family LLAMA, QWEN2 or QWEN3 "
                     "(%s uses RELU or GELU and learned positions)",
                     Family_Name(spec.family()));
  }
  if (!llama_like && spec.head_dim() != 0 &&
      spec.head_dim() * spec.num_heads() != spec.hidden_size()) {
    return SpecError(source, spec,
                     "head_dim %d: %s heads are hidden_size / num_heads = %d wide (leave it 0)",
                     spec.head_dim(), Family_Name(spec.family()),
                     spec.hidden_size() / spec.num_heads());
  }
  if (spec.qkv_bias() && spec.family() != QWEN2) {
    return SpecError(source, spec,
                     "qkv_bias is Qwen2's (q, k and v biases on bias-free blocks); family %s "
                     "must leave it false%s",
                     Family_Name(spec.family()),
                     spec.linear_bias() ? " (its linear_bias already gives every projection one)"
                                        : "");
  }
  if (spec.qk_norm() != (spec.family() == QWEN3)) {
    return SpecError(source, spec, "qk_norm %s: QWEN3 blocks normalise q and k per head, no "
                     "other family's do (set qk_norm: %s)",
                     spec.qk_norm() ? "true" : "false",
                     spec.family() == QWEN3 ? "true" : "false");
  }
  if (spec.positional() == ROTARY) {
    if (!(spec.rope_theta() > 1.0) || !std::isfinite(spec.rope_theta())) {
      return SpecError(source, spec,
                       "rope_theta is %g (expected the published base of the rotary "
                       "frequencies, e.g. 10000 for LLaMA-2, 500000 for Llama-3)",
                       spec.rope_theta());
    }
    if (HeadDim(spec) % 2 != 0) {
      return SpecError(source, spec, "head_dim %d is odd: rotary embeddings rotate pairs",
                       HeadDim(spec));
    }
  } else if (spec.rope_theta() != 0 || spec.has_rope_scaling()) {
    return SpecError(source, spec, "rope_theta and rope_scaling are for positional ROTARY "
                     "(this model's is %s)", Positional_Name(spec.positional()));
  }
  if (spec.has_rope_scaling()) {
    const RopeScaling& r = spec.rope_scaling();
    if (!(r.factor() >= 1.0) || !(r.low_freq_factor() > 0) ||
        !(r.high_freq_factor() > r.low_freq_factor()) || r.original_max_positions() <= 0 ||
        !std::isfinite(r.factor()) || !std::isfinite(r.high_freq_factor())) {
      return SpecError(source, spec,
                       "rope_scaling {factor %g, low_freq_factor %g, high_freq_factor %g, "
                       "original_max_positions %d}: expected factor >= 1, 0 < low_freq_factor "
                       "< high_freq_factor and original_max_positions > 0 (Llama-3.1: 8, 1, 4, "
                       "8192)",
                       r.factor(), r.low_freq_factor(), r.high_freq_factor(),
                       r.original_max_positions());
    }
  }
  if (!(spec.norm_eps() >= 0 && spec.norm_eps() < 1)) {
    return SpecError(source, spec, "norm_eps is %g (expected 0, meaning 1e-5, or the published "
                     "epsilon in (0, 1))", spec.norm_eps());
  }
  // GPT-2 and LLaMA checkpoints end with a final norm (OPT's only when its
  // blocks are pre-norm; OPT-350m has none).
  if (spec.family() != OPT && !spec.final_norm()) {
    return SpecError(source, spec,
                     "final_norm false: %s models end with a final norm (ln_f, model.norm) "
                     "in their checkpoints; set final_norm: true",
                     Family_Name(spec.family()));
  }
  // The head part (final norm, project_out, an untied LM head) is what a
  // schedule keeps resident and updates after the last block.
  if (!spec.final_norm() && spec.word_embed_proj_dim() == 0 && spec.tied_lm_head()) {
    return SpecError(source, spec,
                     "has no parameters after its last block (no final norm, no project_out, "
                     "an LM head tied to the token embedding): zosched's schedules keep and "
                     "update a head part, so such a model is not supported; give it "
                     "word_embed_proj_dim (project_out) or an untied LM head");
  }
  return absl::OkStatus();
}

int64_t HeadDim(const ModelSpec& spec) {
  return spec.head_dim() != 0 ? spec.head_dim() : spec.hidden_size() / spec.num_heads();
}

int64_t QueryWidth(const ModelSpec& spec) { return spec.num_heads() * HeadDim(spec); }

int64_t KvWidth(const ModelSpec& spec) { return KvHeads(spec) * HeadDim(spec); }

float NormEps(const ModelSpec& spec) {
  return spec.norm_eps() == 0 ? 1e-5f : static_cast<float>(spec.norm_eps());
}

bool IsLlamaLike(Family family) {
  return family == LLAMA || family == QWEN2 || family == QWEN3;
}

int64_t KvHeads(const ModelSpec& spec) {
  return spec.num_kv_heads() == 0 ? spec.num_heads() : spec.num_kv_heads();
}

int64_t EmbedDim(const ModelSpec& spec) {
  return spec.word_embed_proj_dim() == 0 ? spec.hidden_size()
                                         : spec.word_embed_proj_dim();
}

absl::StatusOr<DType> ParseDTypeFlag(const std::string& flag, const std::string& value) {
  DType dtype = DTYPE_UNSPECIFIED;
  if (value.empty()) return dtype;
  if (!DType_Parse(absl::AsciiStrToUpper(value), &dtype) || dtype == DTYPE_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--%s=%s: expected FP32, FP16 or BF16", flag, value));
  }
  return dtype;
}

int64_t DTypeBytes(DType dtype) {
  switch (dtype) {
    case FP32:
      return 4;
    case FP16:
    case BF16:
      return 2;
    default:
      CHECK(false) << "DTypeBytes of " << DType_Name(dtype);
  }
  return 0;
}

}  // namespace zosched
