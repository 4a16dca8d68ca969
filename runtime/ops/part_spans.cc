#include "runtime/ops/part_spans.h"

namespace zosched {

PerPart<std::vector<DecaySpan>> PartDecaySpans(const ModelSpec& model) {
  PerPart<std::vector<DecaySpan>> spans;
  spans.embedding = DecaySpans(PartTensors(model, EMBEDDING_PART, 0));
  spans.block = DecaySpans(PartTensors(model, DECODER_BLOCK, 0));
  spans.head = DecaySpans(PartTensors(model, HEAD_PART, 0));
  return spans;
}

}  // namespace zosched
