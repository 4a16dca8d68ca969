#include "schedule/model_parts.h"

#include "base/saturating.h"
#include "models/model_spec.h"

namespace zosched {

int64_t PartElements(const ModelCounts& counts, Part part) {
  switch (part) {
    case EMBEDDING_PART:
      return counts.embedding_params;
    case DECODER_BLOCK:
      return counts.block_params;
    case HEAD_PART:
      return counts.final_norm_params + counts.head_params;
    case ADAPTER_PART:
      return counts.adapter_params;
    default:
      return 0;
  }
}

int64_t TokenTableElements(const ModelSpec& model) {
  return SatMul(model.vocab_size(), EmbedDim(model));
}

}  // namespace zosched
