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
    case QWEN2:
    case QWEN3:
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
    case QWEN2:
    case QWEN3:
      return "model.";
    default:
      return "";
  }
}

const float* AtIfAny(const PartLayout& layout, const float* part, TensorSlot slot) {
  const TensorSlice* slice = layout.Find(slot);
  return slice == nullptr ? nullptr : part + slice->offset;
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

const TensorSlice* PartLayout::Find(TensorSlot slot) const {
  for (const TensorSlice& t : tensors) {
    if (t.slot == slot) return &t;
  }
  return nullptr;
}

const TensorSlice& PartLayout::Get(TensorSlot slot) const {
  const TensorSlice* slice = Find(slot);
  CHECK(slice != nullptr) << "no tensor in slot " << static_cast<int>(slot) << " in this part";
  return *slice;
}

PartLayout LayoutOf(const std::vector<TensorSpec>& tensors,
                    const std::string& prefix) {
  PartLayout layout;
  for (const TensorSpec& t : tensors) {
    TensorSlice slice;
    slice.name = t.name;
    slice.slot = t.slot;
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

EmbeddingView MakeEmbeddingView(const ModelSpec& spec, const float* part) {
  const PartLayout layout = EmbeddingPartLayout(spec);
  EmbeddingView view;
  view.tokens = AtIfAny(layout, part, TensorSlot::kTokenTable);
  view.positions = AtIfAny(layout, part, TensorSlot::kPositionTable);
  view.project_in = AtIfAny(layout, part, TensorSlot::kProjectIn);
  return view;
}

HeadView MakeHeadView(const ModelSpec& spec, const float* part) {
  const PartLayout layout = HeadPartLayout(spec);
  HeadView view;
  view.norm_weight = AtIfAny(layout, part, TensorSlot::kFinalNormWeight);
  view.norm_bias = AtIfAny(layout, part, TensorSlot::kFinalNormBias);
  view.project_out = AtIfAny(layout, part, TensorSlot::kProjectOut);
  view.lm_head = AtIfAny(layout, part, TensorSlot::kLmHead);
  return view;
}

}  // namespace zosched
