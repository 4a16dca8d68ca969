// The model's parts (schedule.proto Part) as the runtime works on them: the
// checkpoint tensors each part holds, in storage order (the element order of
// runtime/nn/param_layout.h), the Philox stream its z comes from
// (runtime/zo/zo_math.h), and which of its elements take weight decay.
#pragma once

#include <cstdint>
#include <vector>

#include "models/model.pb.h"
#include "models/model_tensors.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The tensors of `part` (block `block` for DECODER_BLOCK and ADAPTER_PART):
// EmbeddingTensors, BlockTensors, FinalNormTensors then HeadTensors, or
// `peft`'s AdapterTensors (models/adapters.h).
std::vector<TensorSpec> PartTensors(const ModelSpec& spec, Part part, int block,
                                    const Peft& peft);

// The z stream of `part`: BlockStream(block), EmbeddingStream, HeadStream
// or AdapterStream(block).
uint32_t PartStream(const ModelSpec& spec, Part part, int block);

// Elements [begin, end) of a part that do (or do not) take weight decay.
struct DecaySpan {
  int64_t begin = 0;
  int64_t end = 0;
  bool decays = false;
};

// One span per tensor of `tensors`, in order.
std::vector<DecaySpan> DecaySpans(const std::vector<TensorSpec>& tensors);

}  // namespace zosched
