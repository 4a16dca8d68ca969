// How many kernels one multi-tensor pass launches: the fused optimizers
// and foreach ops (PyTorch's _foreach_* and fused AdamW, apex's and
// Transformer Engine's amp_C kernels) hand a list of tensors to
// multi_tensor_apply, which cuts each tensor into chunks, one thread block
// a chunk, and launches whenever the kernel's argument struct is full: its
// table of chunks (max_blocks) or of tensors (max_tensors, counted when a
// tensor's last chunk is listed; a tensor cut across launches is listed
// again in the next).
//
// Sources (the same loop in both; only the limits differ):
//   PyTorch  aten/src/ATen/native/cuda/MultiTensorApply.cuh: chunks of
//            65,536 elements, 2,240 chunks a launch; tensors a launch by
//            depth (lists) 770, 448, 336, 252, 210, with a scalar per
//            tensor 672, 448, 336, 252, 210 (the 32 KB kernel arguments of
//            CUDA 12.1+)
//   apex, TE csrc/multi_tensor_apply.cuh (apex);
//            transformer_engine/common/multi_tensor/multi_tensor_apply.cuh
//            (NVIDIA/TransformerEngine @ d0067d0, lines 18-19 and 47-115):
//            320 chunks a launch, tensors by depth 110, 64, 48, 36, 30
//            (TE: and 24 at depth 6), the chunk the caller passes:
//            2048·32 = 65,536 elements from multi_tensor_applier
//            (transformer_engine/pytorch/optimizers/multi_tensor_apply.py)
#pragma once

#include <cstdint>
#include <vector>

namespace zosched {

struct MultiTensorLimits {
  int64_t chunk_elements = 65536;
  int64_t max_blocks = 0;   // chunks one launch takes
  int64_t max_tensors = 0;  // tensors one launch lists
};

// PyTorch's limits for a foreach op of `depth` tensor lists (1 to 5: the
// caller's constant, not checked), `scalar_list`: with a scalar per tensor.
MultiTensorLimits TorchMultiTensorLimits(int depth, bool scalar_list);

// apex's and Transformer Engine's limits for `depth` tensor lists (1 to 5,
// likewise), chunks of 65,536 elements.
MultiTensorLimits ApexMultiTensorLimits(int depth);

// Launches of one pass over tensors of `elements` each, in list order
// (empty tensors are skipped, as the callers drop them).
int64_t MultiTensorLaunches(const std::vector<int64_t>& elements, const MultiTensorLimits& limits);

}  // namespace zosched
