#include "models/model_spec.h"

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
  if (spec.hidden_size() % spec.num_heads() != 0) {
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
       {Enum{"family", spec.family(), Family_IsValid, "OPT, GPT2 or LLAMA"},
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
  if (spec.family() == LLAMA &&
      (spec.activation() != SWIGLU || spec.positional() != ROTARY)) {
    return SpecError(source, spec,
                     "LLAMA blocks use activation SWIGLU and positional "
                     "ROTARY (got %s, %s)",
                     Activation_Name(spec.activation()),
                     Positional_Name(spec.positional()));
  }
  if (spec.family() != LLAMA && spec.activation() == SWIGLU) {
    return SpecError(source, spec,
                     "activation SWIGLU needs family LLAMA (%s uses RELU or GELU)",
                     Family_Name(spec.family()));
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
  return spec.hidden_size() / spec.num_heads();
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
