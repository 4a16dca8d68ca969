// The flat parameter layout of a model "part": the contract between the
// parameter store / executor (which move parts around as flat arrays) and the
// math (runtime/nn/decoder_forward.h, which reads tensors out of them by
// their TensorSlot, whatever the family calls them).
//
// A part is ONE flat fp32 array: the concatenation, in the order listed by
// models/model_tensors.h, of its tensors, each row-major in its checkpoint
// shape (nn.Linear weights [out, in]). The parts are
//
//   embedding part: EmbeddingTensors(spec)
//                   (the token table [V, e]; a learned position table;
//                    OPT's project_in [h, e] when word_embed_proj_dim != 0)
//   block part b:   BlockTensors(spec, b)   (all blocks have one layout)
//   head part:      FinalNormTensors(spec) then HeadTensors(spec)
//                   (the final norm, OPT's project_out [e, h], an untied
//                    LM head [V, e] last)
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
  TensorSlot slot = TensorSlot::kUnspecified;  // what it is (models/model_tensors.h)
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
  // The tensor in `slot`, or nullptr when the model has none there.
  const TensorSlice* Find(TensorSlot slot) const;
  // As Find, but CHECK-fails when the tensor is missing.
  const TensorSlice& Get(TensorSlot slot) const;
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

// Typed views of the embedding and head parts of any family, made from the
// part's base pointer; a tensor the model does not have is nullptr. Shapes
// (h = hidden_size, e = EmbedDim, V = vocab, P = max_positions):
struct EmbeddingView {
  const float* tokens = nullptr;      // [V, e]
  const float* positions = nullptr;   // learned positions [P (+2 for OPT), h]
  const float* project_in = nullptr;  // [h, e] (OPT-350m)
};

struct HeadView {
  const float* norm_weight = nullptr;  // the final norm [h] (final_norm)
  const float* norm_bias = nullptr;    // [h] (LAYER_NORM)
  const float* project_out = nullptr;  // [e, h] (OPT-350m)
  const float* lm_head = nullptr;      // an untied head [V, e]
};

EmbeddingView MakeEmbeddingView(const ModelSpec& spec, const float* part);
HeadView MakeHeadView(const ModelSpec& spec, const float* part);

}  // namespace zosched
