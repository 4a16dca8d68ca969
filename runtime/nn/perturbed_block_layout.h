// Where a block forward's perturbed weights go in its scratch
// (models/accounting.h: BlockPerturbedScratchElements): the block's vectors
// (1-D tensors: norms, biases) packed in block order, then one room that
// every matrix shares, perturbed into it just before the GEMM that reads it.
// Shared by the CPU and GPU backends; offsets in elements.
#pragma once

#include <cstdint>
#include <map>

#include "models/model.pb.h"
#include "runtime/nn/param_layout.h"

namespace zosched {

class PerturbedBlockLayout {
 public:
  explicit PerturbedBlockLayout(const ModelSpec& spec);

  // The scratch offset of the tensor that starts `block_offset` elements
  // into the block part: its own place for a vector, the shared room for a
  // matrix. CHECK-fails when no tensor starts there.
  int64_t ScratchOffset(int64_t block_offset) const;
  // Whether that tensor is a matrix (it shares the room).
  bool IsMatrix(int64_t block_offset) const;
  // The block's vectors, to perturb into their places at once.
  const std::vector<TensorSlice>& vectors() const { return vectors_; }
  int64_t elements() const { return elements_; }

 private:
  std::map<int64_t, int64_t> scratch_offset_;  // block offset -> scratch offset
  std::map<int64_t, bool> is_matrix_;
  std::vector<TensorSlice> vectors_;
  int64_t elements_ = 0;
};

}  // namespace zosched
