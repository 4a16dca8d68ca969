// OPT as the runtime runs it, at the sizes a test picks: pre-norm
// LayerNorm, ReLU, learned positions with OPT's offset, tied head, biases on
// every linear layer, a final norm, FP32 weights.
#pragma once

#include <string>

#include "models/model.pb.h"

namespace zosched {

struct OptTestSizes {
  int hidden = 8;         // h
  int layers = 2;
  int heads = 2;
  int ffn = 32;           // f
  int vocab = 32;
  int max_positions = 16;
};

inline ModelSpec OptForTest(const std::string& name, const OptTestSizes& sizes) {
  ModelSpec spec;
  spec.set_name(name);
  spec.set_family(OPT);
  spec.set_hidden_size(sizes.hidden);
  spec.set_num_layers(sizes.layers);
  spec.set_num_heads(sizes.heads);
  spec.set_ffn_size(sizes.ffn);
  spec.set_vocab_size(sizes.vocab);
  spec.set_max_positions(sizes.max_positions);
  spec.set_activation(RELU);
  spec.set_norm(LAYER_NORM);
  spec.set_norm_placement(PRE_NORM);
  spec.set_positional(LEARNED_OPT_OFFSET);
  spec.set_tied_lm_head(true);
  spec.set_linear_bias(true);
  spec.set_final_norm(true);
  spec.set_weight_dtype(FP32);
  return spec;
}

}  // namespace zosched
