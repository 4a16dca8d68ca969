// A range of a part's elements that an op perturbs into one of its operands.
// Units: elements of the compute dtype (a backend multiplies by the element
// width for bytes).
#pragma once

#include <cstdint>

namespace zosched {

struct PerturbedRange {
  int64_t first = 0;  // first element in the part: θ's offset and z's index in the part's stream
  int64_t count = 0;  // elements
  int64_t into = 0;   // where θ ± εz of element `first` goes, in elements from the operand's start
};

}  // namespace zosched
