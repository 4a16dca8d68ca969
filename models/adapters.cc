#include "models/adapters.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/check.h"
#include "models/model_spec.h"

namespace zosched {
namespace {

constexpr char kWeightSuffix[] = ".weight";

// The block tensor a target adapts, or kUnspecified when the family has
// no separate tensor for it.
TensorSlot SlotOf(const ModelSpec& spec, LoraTarget target) {
  switch (target) {
    case LORA_QUERY: return TensorSlot::kQWeight;
    case LORA_KEY: return TensorSlot::kKWeight;
    case LORA_VALUE: return TensorSlot::kVWeight;
    case LORA_OUTPUT: return TensorSlot::kOWeight;
    case LORA_GATE: return spec.activation() == SWIGLU ? TensorSlot::kGateWeight
                                                       : TensorSlot::kUnspecified;
    case LORA_UP: return TensorSlot::kUpWeight;
    case LORA_DOWN: return TensorSlot::kDownWeight;
    default: return TensorSlot::kUnspecified;
  }
}

const TensorSpec* FindSlot(const std::vector<TensorSpec>& tensors, TensorSlot slot) {
  for (const TensorSpec& t : tensors) {
    if (t.slot == slot) return &t;
  }
  return nullptr;
}

}  // namespace

std::vector<LoraTarget> LoraTargetsOf(const Peft& peft) {
  std::vector<LoraTarget> targets;
  for (int t : peft.lora_targets()) targets.push_back(static_cast<LoraTarget>(t));
  if (targets.empty()) targets = {LORA_QUERY, LORA_VALUE};
  std::sort(targets.begin(), targets.end());
  return targets;
}

std::string LoraTargetName(const ModelSpec& spec, LoraTarget target) {
  const TensorSlot slot = SlotOf(spec, target);
  const std::vector<TensorSpec> tensors = BlockTensors(spec, 0);
  const TensorSpec* base = FindSlot(tensors, slot);
  if (base == nullptr) return LoraTarget_Name(target);
  std::string module = base->name.substr(0, base->name.size() - sizeof(kWeightSuffix) + 1);
  return module.substr(module.rfind('.') + 1);
}

std::string PeftLabel(const Peft& peft) {
  if (TrainsLora(peft)) return absl::StrCat("lora r", peft.lora_rank());
  if (PrefixTokens(peft) > 0) return absl::StrCat("prefix k", peft.prefix_tokens());
  return "";
}

absl::Status ValidatePeft(const ModelSpec& model, const Peft& peft) {
  if (!PeftKind_IsValid(peft.kind())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("peft kind %d is not one of PEFT_NONE, LORA, PREFIX", peft.kind()));
  }
  const bool lora_fields =
      peft.lora_rank() != 0 || peft.lora_alpha() != 0 || peft.lora_targets_size() != 0;
  if (peft.kind() != LORA && lora_fields) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "peft sets LoRA fields (lora_rank, lora_alpha or lora_targets) but its kind is %s; "
        "set kind LORA or drop them",
        PeftKind_Name(peft.kind())));
  }
  if (peft.kind() != PREFIX && peft.prefix_tokens() != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "peft sets prefix_tokens %d but its kind is %s; set kind PREFIX or drop it",
        peft.prefix_tokens(), PeftKind_Name(peft.kind())));
  }
  if (peft.kind() == PEFT_NONE) return absl::OkStatus();
  if (peft.kind() == PREFIX) {
    const int64_t limit = std::min<int64_t>(kMaxPrefixTokens, model.max_positions() - 1);
    if (peft.prefix_tokens() < 1 || peft.prefix_tokens() > limit) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "peft prefix_tokens %d is out of range: a prefix has 1 to %d virtual tokens for "
          "model '%s' (the real tokens follow them, within its %d positions; MeZO: 5)",
          peft.prefix_tokens(), limit, model.name(), model.max_positions()));
    }
    return absl::OkStatus();
  }
  if (peft.lora_rank() < 1 || peft.lora_rank() > kMaxLoraRank) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "peft lora_rank %d is out of range: LoRA's rank r is in [1, %d] (MeZO: 8)",
        peft.lora_rank(), kMaxLoraRank));
  }
  if (!std::isfinite(peft.lora_alpha()) || peft.lora_alpha() <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "peft lora_alpha %g is not a finite number > 0 (MeZO: 16; the scaling is alpha / r)",
        peft.lora_alpha()));
  }
  if (WeightsInOut(model) || FindSlot(BlockTensors(model, 0), TensorSlot::kQkvWeight) != nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "model '%s' fuses its query, key and value projections into one transposed c_attn "
        "(GPT-2); LoRA runs on families with separate nn.Linear projections (OPT, LLaMA, Qwen)",
        model.name()));
  }
  std::vector<int> seen;
  for (int t : peft.lora_targets()) {
    const LoraTarget target = static_cast<LoraTarget>(t);
    if (!LoraTarget_IsValid(t) || target == LORA_TARGET_UNSPECIFIED) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "peft lora_targets holds %d, which is not a target (query, key, value, output, gate, "
          "up, down)", t));
    }
    if (std::find(seen.begin(), seen.end(), t) != seen.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "peft lora_targets names %s twice", LoraTarget_Name(target)));
    }
    seen.push_back(t);
    if (SlotOf(model, target) == TensorSlot::kUnspecified) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "peft lora_targets names %s, but model '%s' has no gated FFN (no gate projection)",
          LoraTarget_Name(target), model.name()));
    }
  }
  return absl::OkStatus();
}

std::vector<LoraAdapter> BlockAdapters(const ModelSpec& spec, const Peft& peft, int64_t layer) {
  std::vector<LoraAdapter> adapters;
  if (!TrainsLora(peft)) return adapters;
  const std::vector<TensorSpec> tensors = BlockTensors(spec, layer);
  const int64_t r = peft.lora_rank();
  int64_t offset = 0;
  for (LoraTarget target : LoraTargetsOf(peft)) {
    const TensorSpec* base = FindSlot(tensors, SlotOf(spec, target));
    CHECK(base != nullptr && base->shape.size() == 2 && absl::EndsWith(base->name, kWeightSuffix))
        << "ValidatePeft admits no target " << LoraTarget_Name(target) << " of " << spec.name();
    LoraAdapter a;
    a.target = target;
    a.base = base->slot;
    a.module = base->name.substr(0, base->name.size() - sizeof(kWeightSuffix) + 1);
    a.out = base->shape[0];
    a.in = base->shape[1];
    a.a = {absl::StrCat(a.module, ".lora_A.weight"), {r, a.in}, TensorRole::kMatrix,
           TensorSlot::kUnspecified};
    a.b = {absl::StrCat(a.module, ".lora_B.weight"), {a.out, r}, TensorRole::kMatrix,
           TensorSlot::kUnspecified};
    a.a_offset = offset;
    a.b_offset = offset + r * a.in;
    offset = a.b_offset + a.out * r;
    adapters.push_back(std::move(a));
  }
  return adapters;
}

std::string AttentionModule(const ModelSpec& spec, int64_t layer) {
  for (const TensorSpec& t : BlockTensors(spec, layer)) {
    if (t.slot == TensorSlot::kQWeight || t.slot == TensorSlot::kQkvWeight) {
      const std::string projection = t.name.substr(0, t.name.rfind('.'));  // "....q_proj"
      return projection.substr(0, projection.rfind('.'));
    }
  }
  CHECK(false) << "model '" << spec.name() << "' has no query projection";
  return "";
}

std::vector<TensorSpec> AdapterTensors(const ModelSpec& spec, const Peft& peft, int64_t layer) {
  std::vector<TensorSpec> tensors;
  if (const int64_t k = PrefixTokens(peft); k > 0) {
    const std::string module = AttentionModule(spec, layer);
    for (const char* name : {".prefix_keys", ".prefix_values"}) {
      tensors.push_back({absl::StrCat(module, name), {k, KvWidth(spec)}, TensorRole::kMatrix,
                         TensorSlot::kUnspecified});
    }
    return tensors;
  }
  for (LoraAdapter& a : BlockAdapters(spec, peft, layer)) {
    tensors.push_back(std::move(a.a));
    tensors.push_back(std::move(a.b));
  }
  return tensors;
}

int64_t AdapterParams(const ModelSpec& spec, const Peft& peft) {
  return CountElements(AdapterTensors(spec, peft, 0));
}

float LoraScaling(const Peft& peft) {
  return static_cast<float>(peft.lora_alpha() / peft.lora_rank());
}

}  // namespace zosched
