// The shape every kernel plan reads off a compute op: the compute dtype and
// its element size, the op's examples, sequence and tokens, and the model's
// hidden, FFN and head counts. Each plan's own dimensions extend it.
#pragma once

#include <cstdint>

#include "models/model.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

struct OpShape {
  DType dtype = DTYPE_UNSPECIFIED;
  int64_t c = 0;                              // bytes of a `dtype` element
  int64_t examples = 0, seq = 0, tokens = 0;  // tokens = examples · seq
  int64_t h = 0, f = 0, heads = 0;            // hidden, FFN, query heads
};

// `op`'s shape over `model` in `dtype`.
OpShape ShapeOf(const ModelSpec& model, const ComputeOp& op, DType dtype);

}  // namespace zosched
