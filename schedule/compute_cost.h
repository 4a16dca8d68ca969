// What one compute op of the IR costs: the figures ComputeOp.flops and
// ComputeOp.bytes_accessed hold. The ZO op model (schedule/compute_op_model.h)
// and the first-order one (schedule/first_order_model.h) both give their
// costs in it.
#pragma once

#include <cstdint>

namespace zosched {

struct ComputeCost {
  int64_t flops = 0;           // floating-point operations
  int64_t bytes_accessed = 0;  // bytes read and written
};

}  // namespace zosched
