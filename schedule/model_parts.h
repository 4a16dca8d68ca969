// The parameter parts of the IR (schedule.proto Part) measured in elements:
// what ParamOperand and ParamPlacement ranges lie inside, and what the op
// models of both families (schedule/compute_op_model.h,
// schedule/first_order_model.h) count parameters in.
#pragma once

#include <cstdint>

#include "models/accounting.h"
#include "models/model.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Parameters of `part`: EMBEDDING_PART EmbeddingParams (token table, position
// table, project_in), DECODER_BLOCK BlockParams, HEAD_PART FinalNormParams +
// HeadParams (models/accounting.h), ADAPTER_PART the LoRA adapters of one
// block (counts.adapter_params); 0 for PART_UNSPECIFIED. `counts` =
// CountModel(model, the training settings' peft).
int64_t PartElements(const ModelCounts& counts, Part part);

// Elements of the token table embed_tokens [V, e], which starts the
// embedding part and is the LM head when the head is tied. Saturates at
// INT64_MAX.
int64_t TokenTableElements(const ModelSpec& model);

}  // namespace zosched
