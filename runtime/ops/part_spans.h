// The weight-decay spans of each kind of part of a model, for UPDATE ops:
// an UPDATE of a part applies λ to the elements of its decaying spans
// (runtime/model_parts.h DecaySpan; element offsets in the part). All
// decoder blocks share one layout, so one table serves every block.
#pragma once

#include <vector>

#include "models/model.pb.h"
#include "runtime/model_parts.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// One T for each kind of part; a backend keeps its kernels' form of the
// spans in one (the CPU a vector of spans, CUDA a fixed table).
template <typename T>
struct PerPart {
  T embedding, block, head;
  T adapters;  // under LoRA or a prefix: every block's adapters share one layout too

  // The one of `part` (DECODER_BLOCK and ADAPTER_PART for any block).
  const T& Of(Part part) const {
    return part == EMBEDDING_PART ? embedding
           : part == HEAD_PART    ? head
           : part == ADAPTER_PART ? adapters
                                  : block;
  }
};

// DecaySpans of the tensors of each kind of part of `model`, with `peft`'s
// adapters (empty without LoRA). LoRA's A and B decay.
PerPart<std::vector<DecaySpan>> PartDecaySpans(const ModelSpec& model, const Peft& peft);

}  // namespace zosched
