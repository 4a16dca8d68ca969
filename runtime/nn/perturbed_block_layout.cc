#include "runtime/nn/perturbed_block_layout.h"

#include <algorithm>

#include "base/check.h"

namespace zosched {

PerturbedBlockLayout::PerturbedBlockLayout(const ModelSpec& spec) {
  const PartLayout block = BlockPartLayout(spec);
  int64_t vectors = 0, room = 0;
  for (const TensorSlice& t : block.tensors) {
    if (t.shape.size() == 1) {
      scratch_offset_[t.offset] = vectors;
      vectors_.push_back(t);
      vectors += t.elements();
    } else {
      room = std::max(room, t.elements());
    }
    is_matrix_[t.offset] = t.shape.size() != 1;
  }
  for (const TensorSlice& t : block.tensors) {
    if (t.shape.size() != 1) scratch_offset_[t.offset] = vectors;
  }
  elements_ = vectors + room;
}

int64_t PerturbedBlockLayout::ScratchOffset(int64_t block_offset) const {
  const auto it = scratch_offset_.find(block_offset);
  CHECK(it != scratch_offset_.end()) << "no block tensor starts at element " << block_offset;
  return it->second;
}

bool PerturbedBlockLayout::IsMatrix(int64_t block_offset) const {
  const auto it = is_matrix_.find(block_offset);
  CHECK(it != is_matrix_.end()) << "no block tensor starts at element " << block_offset;
  return it->second;
}

}  // namespace zosched
