// Models for the tests of runtime/ops: OPT as the runtime runs it, with and
// without project_in / project_out.
#pragma once

#include "models/model.pb.h"

namespace zosched {

// h = 8, 2 layers, vocab 32, 16 positions; e = `embed_dim` (0: e = h).
inline ModelSpec TestOpt(int embed_dim = 0) {
  ModelSpec spec;
  spec.set_name("ops-test-opt");
  spec.set_family(OPT);
  spec.set_hidden_size(8);
  spec.set_num_layers(2);
  spec.set_num_heads(2);
  spec.set_ffn_size(32);
  spec.set_vocab_size(32);
  spec.set_max_positions(16);
  spec.set_activation(RELU);
  spec.set_norm(LAYER_NORM);
  spec.set_norm_placement(PRE_NORM);
  spec.set_positional(LEARNED_OPT_OFFSET);
  spec.set_tied_lm_head(true);
  spec.set_linear_bias(true);
  spec.set_final_norm(true);
  spec.set_weight_dtype(FP32);
  spec.set_word_embed_proj_dim(embed_dim);
  return spec;
}

}  // namespace zosched
