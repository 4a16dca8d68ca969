// A schedule of a tiny OPT (2 blocks, h = 8, vocab 32, tied head), in text,
// for the checkpoint tests: only its model, its name and its training
// settings matter there.
#pragma once

namespace zosched {

inline constexpr char kTinyScheduleText[] = R"pb(
  name: "tiny-zo2"
  model {
    name: "tiny-opt" family: OPT hidden_size: 8 num_layers: 2 num_heads: 2
    ffn_size: 16 vocab_size: 32 max_positions: 16 activation: RELU
    norm: LAYER_NORM norm_placement: PRE_NORM positional: LEARNED_OPT_OFFSET
    tied_lm_head: true linear_bias: true final_norm: true weight_dtype: FP16
  }
  training { learning_rate: 1e-4 epsilon: 1e-3 base_seed: 7 batch_size: 2 seq_len: 8 }
)pb";

}  // namespace zosched
