#include "runtime/nn/param_layout.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"

namespace zosched {
namespace {

// Common name prefixes of OPT's parts (models/model_tensors.cc spells the
// full names; only the prefix that makes suffixes layer-independent is
// repeated here).
constexpr char kOptDecoderPrefix[] = "model.decoder.";

std::string BlockPrefix(const ModelSpec& spec, int64_t layer) {
  switch (spec.family()) {
    case OPT:
      return absl::StrCat("model.decoder.layers.", layer, ".");
    case GPT2:
      return absl::StrCat("h.", layer, ".");
    case LLAMA:
      return absl::StrCat("model.layers.", layer, ".");
    default:
      CHECK(false) << "no block prefix for family "
                   << Family_Name(spec.family());
  }
  return "";
}

std::string PartPrefix(const ModelSpec& spec) {
  switch (spec.family()) {
    case OPT:
      return kOptDecoderPrefix;
    case LLAMA:
      return "model.";
    default:
      return "";
  }
}

const float* At(const PartLayout& layout, const float* part,
                const std::string& suffix) {
  return part + layout.Get(suffix).offset;
}

const float* AtIfAny(const PartLayout& layout, const float* part,
                     const std::string& suffix) {
  const TensorSlice* slice = layout.Find(suffix);
  return slice == nullptr ? nullptr : part + slice->offset;
}

void CheckOpt(const ModelSpec& spec) {
  CHECK(spec.family() == OPT && spec.norm() == LAYER_NORM && spec.linear_bias())
      << "OPT views need family OPT, LAYER_NORM and linear biases; model '"
      << spec.name() << "'";
}

}  // namespace

int64_t TensorSlice::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const TensorSlice* PartLayout::Find(const std::string& suffix) const {
  const TensorSlice* found = nullptr;
  const std::string dotted = "." + suffix;
  for (const TensorSlice& t : tensors) {
    if (t.suffix == suffix || absl::EndsWith(t.suffix, dotted)) {
      CHECK(found == nullptr) << "suffix '" << suffix << "' matches both '"
                              << found->name << "' and '" << t.name << "'";
      found = &t;
    }
  }
  return found;
}

const TensorSlice& PartLayout::Get(const std::string& suffix) const {
  const TensorSlice* slice = Find(suffix);
  CHECK(slice != nullptr) << "no tensor with suffix '" << suffix
                          << "' in this part";
  return *slice;
}

PartLayout LayoutOf(const std::vector<TensorSpec>& tensors,
                    const std::string& prefix) {
  PartLayout layout;
  for (const TensorSpec& t : tensors) {
    TensorSlice slice;
    slice.name = t.name;
    slice.suffix = absl::StartsWith(t.name, prefix)
                       ? t.name.substr(prefix.size())
                       : t.name;
    slice.offset = layout.total_floats;
    slice.shape = t.shape;
    layout.total_floats += t.elements();
    layout.tensors.push_back(std::move(slice));
  }
  return layout;
}

PartLayout EmbeddingPartLayout(const ModelSpec& spec) {
  return LayoutOf(EmbeddingTensors(spec), PartPrefix(spec));
}

PartLayout BlockPartLayout(const ModelSpec& spec, int64_t layer) {
  return LayoutOf(BlockTensors(spec, layer), BlockPrefix(spec, layer));
}

PartLayout HeadPartLayout(const ModelSpec& spec) {
  std::vector<TensorSpec> tensors = FinalNormTensors(spec);
  for (TensorSpec& t : HeadTensors(spec)) tensors.push_back(std::move(t));
  return LayoutOf(tensors, PartPrefix(spec));
}

OptEmbeddingView MakeOptEmbeddingView(const ModelSpec& spec,
                                      const float* part) {
  CheckOpt(spec);
  const PartLayout layout = EmbeddingPartLayout(spec);
  OptEmbeddingView view;
  view.embed_tokens = At(layout, part, "embed_tokens.weight");
  view.embed_positions = At(layout, part, "embed_positions.weight");
  view.project_in = AtIfAny(layout, part, "project_in.weight");
  CHECK((view.project_in != nullptr) == (spec.word_embed_proj_dim() != 0));
  return view;
}

OptBlockView MakeOptBlockView(const ModelSpec& spec, const float* part) {
  CheckOpt(spec);
  const PartLayout layout = BlockPartLayout(spec);
  OptBlockView v;
  v.ln1_w = At(layout, part, "self_attn_layer_norm.weight");
  v.ln1_b = At(layout, part, "self_attn_layer_norm.bias");
  v.q_w = At(layout, part, "self_attn.q_proj.weight");
  v.q_b = At(layout, part, "self_attn.q_proj.bias");
  v.k_w = At(layout, part, "self_attn.k_proj.weight");
  v.k_b = At(layout, part, "self_attn.k_proj.bias");
  v.v_w = At(layout, part, "self_attn.v_proj.weight");
  v.v_b = At(layout, part, "self_attn.v_proj.bias");
  v.o_w = At(layout, part, "self_attn.out_proj.weight");
  v.o_b = At(layout, part, "self_attn.out_proj.bias");
  v.ln2_w = At(layout, part, "final_layer_norm.weight");
  v.ln2_b = At(layout, part, "final_layer_norm.bias");
  v.fc1_w = At(layout, part, "fc1.weight");
  v.fc1_b = At(layout, part, "fc1.bias");
  v.fc2_w = At(layout, part, "fc2.weight");
  v.fc2_b = At(layout, part, "fc2.bias");
  return v;
}

OptHeadView MakeOptHeadView(const ModelSpec& spec, const float* part) {
  CheckOpt(spec);
  const PartLayout layout = HeadPartLayout(spec);
  OptHeadView view;
  view.ln_w = AtIfAny(layout, part, "final_layer_norm.weight");
  view.ln_b = AtIfAny(layout, part, "final_layer_norm.bias");
  view.project_out = AtIfAny(layout, part, "project_out.weight");
  CHECK((view.ln_w != nullptr) == spec.final_norm());
  CHECK((view.project_out != nullptr) == (spec.word_embed_proj_dim() != 0));
  return view;
}

}  // namespace zosched
