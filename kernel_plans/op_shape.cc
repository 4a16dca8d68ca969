#include "kernel_plans/op_shape.h"

#include "models/model_spec.h"

namespace zosched {

OpShape ShapeOf(const ModelSpec& model, const ComputeOp& op, DType dtype) {
  OpShape s;
  s.dtype = dtype;
  s.c = DTypeBytes(dtype);
  s.examples = op.examples();
  s.seq = op.seq_len();
  s.tokens = s.examples * s.seq;
  s.h = model.hidden_size();
  s.f = model.ffn_size();
  s.heads = model.num_heads();
  return s;
}

}  // namespace zosched
