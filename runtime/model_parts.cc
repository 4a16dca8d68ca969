#include "runtime/model_parts.h"

#include "base/check.h"
#include "models/adapters.h"
#include "runtime/zo/zo_math.h"

namespace zosched {

std::vector<TensorSpec> PartTensors(const ModelSpec& spec, Part part, int block,
                                    const Peft& peft) {
  switch (part) {
    case EMBEDDING_PART:
      return EmbeddingTensors(spec);
    case DECODER_BLOCK:
      return BlockTensors(spec, block);
    case HEAD_PART: {
      std::vector<TensorSpec> head = FinalNormTensors(spec);
      for (TensorSpec& t : HeadTensors(spec)) head.push_back(std::move(t));
      return head;
    }
    case ADAPTER_PART:
      return AdapterTensors(spec, peft, block);
    default:
      CHECK(false) << "no tensors for part " << part;
      return {};
  }
}

uint32_t PartStream(const ModelSpec& spec, Part part, int block) {
  const int layers = spec.num_layers();
  switch (part) {
    case EMBEDDING_PART:
      return EmbeddingStream(layers);
    case DECODER_BLOCK:
      return BlockStream(block);
    case HEAD_PART:
      return HeadStream(layers);
    case ADAPTER_PART:
      return AdapterStream(layers, block);
    default:
      CHECK(false) << "no z stream for part " << part;
      return 0;
  }
}

std::vector<DecaySpan> DecaySpans(const std::vector<TensorSpec>& tensors) {
  std::vector<DecaySpan> spans;
  int64_t offset = 0;
  for (const TensorSpec& t : tensors) {
    spans.push_back({offset, offset + t.elements(), t.weight_decay()});
    offset += t.elements();
  }
  return spans;
}

}  // namespace zosched
