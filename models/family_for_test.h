// A model of each family the runtime runs, at the sizes a test picks, with
// each family's distinguishing features switched on: GPT-2's fused Conv1D
// attention and GELU; LLaMA's grouped-query attention, untied head and
// Llama-3.1 rotary scaling; Qwen2's q/k/v biases and tied head; Qwen3's
// QK-norm with a head width other than h / heads and an untied head.
// OPT is OptForTest's.
#pragma once

#include <string>

#include "models/model.pb.h"
#include "models/opt_for_test.h"

namespace zosched {

// `sizes.heads` must be even (the LLaMA and Qwen models use heads / 2
// key/value heads) and h / heads even (rotary pairs).
inline ModelSpec FamilyForTest(Family family, const std::string& name,
                               const OptTestSizes& sizes) {
  ModelSpec spec = OptForTest(name, sizes);
  spec.set_family(family);
  if (family == OPT) return spec;
  if (family == GPT2) {
    spec.set_activation(GELU);
    spec.set_positional(LEARNED);
    return spec;
  }
  spec.set_activation(SWIGLU);
  spec.set_norm(RMS_NORM);
  spec.set_positional(ROTARY);
  spec.set_linear_bias(false);
  spec.set_num_kv_heads(sizes.heads / 2);
  if (family == LLAMA) {
    spec.set_tied_lm_head(false);
    spec.set_rope_theta(500000);
    RopeScaling* scaling = spec.mutable_rope_scaling();
    scaling->set_factor(8);
    scaling->set_low_freq_factor(1);
    scaling->set_high_freq_factor(4);
    scaling->set_original_max_positions(sizes.max_positions);
  } else if (family == QWEN2) {
    spec.set_rope_theta(1000000);
    spec.set_norm_eps(1e-6);
    spec.set_qkv_bias(true);
  } else if (family == QWEN3) {
    spec.set_rope_theta(1000000);
    spec.set_norm_eps(1e-6);
    spec.set_qk_norm(true);
    spec.set_head_dim(2 * sizes.hidden / sizes.heads);  // q is 2h wide
    spec.set_tied_lm_head(false);
  }
  return spec;
}

}  // namespace zosched
