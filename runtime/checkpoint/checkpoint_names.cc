#include "runtime/checkpoint/checkpoint_names.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace zosched {
namespace {

// `name` with the family's base-model prefix removed if it has it, added if
// not; empty when the family has no prefix.
std::string OtherSpelling(Family family, absl::string_view name) {
  const absl::string_view prefix = BaseModelPrefix(family);
  if (prefix.empty()) return "";
  if (absl::StartsWith(name, prefix)) return std::string(name.substr(prefix.size()));
  return absl::StrCat(prefix, name);
}

// How block tensors are named: both spellings of the prefix before the
// block index ("model.layers." and "layers.", "h." and "transformer.h.").
struct BlockNaming {
  explicit BlockNaming(const ModelSpec& spec) {
    if (spec.family() == FAMILY_UNSPECIFIED) return;
    // The common beginning of the same tensor's name in blocks 0 and 1.
    const std::string a = BlockTensors(spec, 0).front().name;
    const std::string b = BlockTensors(spec, 1).front().name;
    size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    prefixes.push_back(a.substr(0, n));
    prefixes.push_back(OtherSpelling(spec.family(), prefixes.front()));
  }

  // The block index of `name`, or -1.
  int64_t LayerOf(absl::string_view name) const {
    for (const std::string& prefix : prefixes) {
      if (!absl::StartsWith(name, prefix)) continue;
      const absl::string_view rest = name.substr(prefix.size());
      size_t digits = 0;
      while (digits < rest.size() && digits < 9 && absl::ascii_isdigit(rest[digits])) ++digits;
      if (digits == 0 || digits == rest.size() || rest[digits] != '.') continue;
      int64_t layer = 0;
      for (size_t i = 0; i < digits; ++i) layer = layer * 10 + (rest[i] - '0');
      return layer;
    }
    return -1;
  }

  std::vector<std::string> prefixes;
};

}  // namespace

std::vector<TensorSpec> ModelParameters(const ModelSpec& spec) {
  std::vector<TensorSpec> all = EmbeddingTensors(spec);
  for (int64_t l = 0; l < spec.num_layers(); ++l) {
    for (TensorSpec& t : BlockTensors(spec, l)) all.push_back(std::move(t));
  }
  for (TensorSpec& t : FinalNormTensors(spec)) all.push_back(std::move(t));
  for (TensorSpec& t : HeadTensors(spec)) all.push_back(std::move(t));
  return all;
}

absl::string_view BaseModelPrefix(Family family) {
  switch (family) {
    case OPT:
    case LLAMA:
    case QWEN2:
    case QWEN3:
      return "model.";
    case GPT2:
      return "transformer.";
    default:
      return "";
  }
}

std::vector<std::string> StoredNames(Family family, const std::string& name) {
  std::vector<std::string> names = {name};
  if (name == kLmHeadName) return names;  // the head is never in the base model
  std::string other = OtherSpelling(family, name);
  if (!other.empty()) names.push_back(std::move(other));
  return names;
}

const SafetensorsTensor* FindParameter(const CheckpointFiles& checkpoint, const ModelSpec& spec,
                                       const std::string& name, std::string* tied_to) {
  tied_to->clear();
  for (const std::string& stored : StoredNames(spec.family(), name)) {
    if (const SafetensorsTensor* t = checkpoint.Find(stored); t != nullptr) return t;
  }
  if (name != kLmHeadName || !spec.tied_lm_head()) return nullptr;
  const std::string embedding = EmbeddingTensors(spec).front().name;
  for (const std::string& stored : StoredNames(spec.family(), embedding)) {
    if (const SafetensorsTensor* t = checkpoint.Find(stored); t != nullptr) {
      *tied_to = embedding;
      return t;
    }
  }
  return nullptr;
}

int64_t StoredLayer(const ModelSpec& spec, absl::string_view name) {
  return BlockNaming(spec).LayerOf(name);
}

bool IsNonParameterBuffer(absl::string_view name) {
  return absl::EndsWith(name, ".attn.bias") || absl::EndsWith(name, ".attn.masked_bias") ||
         absl::EndsWith(name, ".rotary_emb.inv_freq");
}

// A tensor of an ADAPTER_PART (models/adapters.h AdapterTensors), which a
// LoRA or prefix run's checkpoint holds beside its base: a LoRA adapter's A
// or B, a prefix's keys or values. Not a parameter of the base model.
bool IsAdapterTensor(absl::string_view name) {
  for (absl::string_view suffix :
       {".lora_A.weight", ".lora_B.weight", ".prefix_keys", ".prefix_values"}) {
    if (absl::EndsWith(name, suffix)) return true;
  }
  return false;
}

absl::Status CheckNoForeignTensors(const CheckpointFiles& checkpoint, const ModelSpec& spec) {
  if (spec.family() == FAMILY_UNSPECIFIED) return absl::OkStatus();
  std::set<std::string, std::less<>> parameters;
  for (const TensorSpec& t : ModelParameters(spec)) {
    for (std::string& stored : StoredNames(spec.family(), t.name)) {
      parameters.insert(std::move(stored));
    }
  }
  const BlockNaming blocks(spec);
  const absl::string_view prefix = BaseModelPrefix(spec.family());
  // (block or -1, name, tensor) of each tensor not of `spec`.
  std::vector<std::tuple<int64_t, absl::string_view, const SafetensorsTensor*>> foreign;
  for (const SafetensorsTensor* t : checkpoint.tensors()) {
    if (parameters.count(t->name) != 0 || IsNonParameterBuffer(t->name) ||
        IsAdapterTensor(t->name) || t->name == kLmHeadName) {
      continue;
    }
    const int64_t layer = blocks.LayerOf(t->name);
    if (layer < 0 && !absl::StartsWith(t->name, prefix)) continue;  // no model's tensor
    foreign.emplace_back(layer, t->name, t);
  }
  if (foreign.empty()) return absl::OkStatus();
  std::sort(foreign.begin(), foreign.end());
  const auto& [layer, name, tensor] = foreign.front();
  const int64_t last_layer = std::get<0>(foreign.back());
  const std::string& model = spec.name();
  const std::string head = absl::StrCat(
      checkpoint.PathOf(*tensor), ": tensor '", name, "' (",
      foreign.size() == 1 ? std::string("the one tensor")
                          : absl::StrCat("1 of ", foreign.size(), " tensors"),
      " not of model '", model, "')");
  const std::string what_to_do = absl::StrCat(
      "start from a checkpoint of '", model, "', or train the model the checkpoint was saved "
      "from (its ModelSpec)");
  if (layer >= spec.num_layers()) {
    return absl::InvalidArgumentError(absl::StrCat(
        head, " is of block ", layer, ", but '", model, "' has ", spec.num_layers(),
        " blocks (0-", spec.num_layers() - 1, "); the checkpoint, which has blocks up to ",
        last_layer, ", is probably of a bigger model of the family (a different size): ",
        what_to_do));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      head, " is not a parameter of '", model, "' (family ", Family_Name(spec.family()),
      ", ", spec.num_layers(), " blocks",
      layer >= 0 ? absl::StrCat(": its block ", layer, " has no such tensor") : std::string(),
      "); the checkpoint is probably of another model (a different size or variant of the "
      "family): ",
      what_to_do));
}

}  // namespace zosched
