// The flat parameter layout of a model "part": the contract between the
// parameter store / executor (which move parts around as flat arrays) and the
// math (runtime/nn/opt_forward.h, which reads tensors out of them).
//
// A part is ONE flat fp32 array: the concatenation, in the order listed by
// models/model_tensors.h, of its tensors, each row-major in its checkpoint
// shape (nn.Linear weights [out, in]). The parts are
//
//   embedding part: EmbeddingTensors(spec)
//                   (OPT: embed_tokens [V, e], embed_positions [P+2, h],
//                    project_in [h, e] when word_embed_proj_dim != 0)
//   block part b:   BlockTensors(spec, b)   (all blocks have one layout)
//   head part:      FinalNormTensors(spec) then HeadTensors(spec)
//                   (OPT: final_layer_norm.{weight,bias}, project_out [e, h])
//
// model_tensors.h is the single source of truth for the order and shapes;
// this file only adds offsets and typed views.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model.pb.h"
#include "models/model_tensors.h"

namespace zosched {

// One tensor inside a part.
struct TensorSlice {
  // The checkpoint name without the part's common prefix
  // ("model.decoder.layers.<b>." for a block, "model.decoder." for the
  // embedding and head parts), e.g. "fc1.weight", "embed_tokens.weight".
  std::string suffix;
  std::string name;            // full checkpoint name
  int64_t offset = 0;          // in floats from the start of the part
  std::vector<int64_t> shape;  // checkpoint shape, row-major

  int64_t elements() const;
};

// The offsets of every tensor of one part.
struct PartLayout {
  std::vector<TensorSlice> tensors;  // in storage order
  int64_t total_floats = 0;          // size of the flat array

  // The tensor whose suffix is `suffix` or ends with "." + `suffix`, or
  // nullptr when there is none. CHECK-fails when several match (a bug in the
  // caller's suffix).
  const TensorSlice* Find(const std::string& suffix) const;
  // As Find, but CHECK-fails when the tensor is missing.
  const TensorSlice& Get(const std::string& suffix) const;
};

// Lays out `tensors` back to back in the given order; `prefix` is stripped
// from each name to give its suffix (names not starting with it keep their
// full name as suffix).
PartLayout LayoutOf(const std::vector<TensorSpec>& tensors,
                    const std::string& prefix);

// The three kinds of part of `spec` (any family). total_floats equals
// EmbeddingParams, BlockParams and FinalNormParams + HeadParams of
// models/accounting.h.
PartLayout EmbeddingPartLayout(const ModelSpec& spec);
PartLayout BlockPartLayout(const ModelSpec& spec, int64_t layer = 0);
PartLayout HeadPartLayout(const ModelSpec& spec);

// Typed views of OPT parts, made from the part's base pointer. Shapes (h =
// hidden_size, f = ffn_size, e = EmbedDim, V = vocab, P = max_positions):
struct OptEmbeddingView {
  const float* embed_tokens = nullptr;     // [V, e]
  const float* embed_positions = nullptr;  // [P + 2, h]
  const float* project_in = nullptr;       // [h, e], nullptr when e == h
};

struct OptBlockView {
  const float *ln1_w, *ln1_b;  // self_attn_layer_norm [h]
  const float *q_w, *q_b;      // self_attn.q_proj [h, h], [h]
  const float *k_w, *k_b;      // self_attn.k_proj [h, h], [h]
  const float *v_w, *v_b;      // self_attn.v_proj [h, h], [h]
  const float *o_w, *o_b;      // self_attn.out_proj [h, h], [h]
  const float *ln2_w, *ln2_b;  // final_layer_norm (the FFN's norm) [h]
  const float *fc1_w, *fc1_b;  // fc1 [f, h], [f]
  const float *fc2_w, *fc2_b;  // fc2 [h, f], [h]
};

struct OptHeadView {
  const float* ln_w = nullptr;         // final_layer_norm [h], nullptr if none
  const float* ln_b = nullptr;         // [h], nullptr if none
  const float* project_out = nullptr;  // [e, h], nullptr when e == h
};

// Each CHECK-fails unless spec.family() is OPT with LAYER_NORM, linear biases
// and (for the views that need them) the tensors they point at; call
// CheckRuntimeSupports (opt_forward.h) on outside input first.
OptEmbeddingView MakeOptEmbeddingView(const ModelSpec& spec, const float* part);
OptBlockView MakeOptBlockView(const ModelSpec& spec, const float* part);
OptHeadView MakeOptHeadView(const ModelSpec& spec, const float* part);

}  // namespace zosched
