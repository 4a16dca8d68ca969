#include "runtime/ops/part_spans.h"

namespace zosched {

PerPart<std::vector<DecaySpan>> PartDecaySpans(const ModelSpec& model, const Peft& peft) {
  PerPart<std::vector<DecaySpan>> spans;
  spans.embedding = DecaySpans(PartTensors(model, EMBEDDING_PART, 0, peft));
  spans.block = DecaySpans(PartTensors(model, DECODER_BLOCK, 0, peft));
  spans.head = DecaySpans(PartTensors(model, HEAD_PART, 0, peft));
  spans.adapters = DecaySpans(PartTensors(model, ADAPTER_PART, 0, peft));
  return spans;
}

}  // namespace zosched
