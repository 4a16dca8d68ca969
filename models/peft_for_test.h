// The Peft settings tests ask for: LoRA adapters of a rank, α and targets
// (empty: query and value), or a prefix of k virtual tokens.
#pragma once

#include <vector>

#include "models/model.pb.h"

namespace zosched {

inline Peft LoraPeft(int rank, double alpha, const std::vector<LoraTarget>& targets = {}) {
  Peft peft;
  peft.set_kind(LORA);
  peft.set_lora_rank(rank);
  peft.set_lora_alpha(alpha);
  for (LoraTarget t : targets) peft.add_lora_targets(t);
  return peft;
}

inline Peft PrefixPeft(int tokens) {
  Peft peft;
  peft.set_kind(PREFIX);
  peft.set_prefix_tokens(tokens);
  return peft;
}

}  // namespace zosched
