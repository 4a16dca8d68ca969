// How far apart two checkpoints' weights are, tensor by tensor: the
// differential check between backends (the CPU testbed and a GPU agree to
// rounding, not bitwise) and a user's tool for comparing two runs.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/checkpoint/safetensors.h"

namespace zosched {

struct TensorDiff {
  std::string name;
  int64_t elements = 0;
  double max_abs = 0;  // max |a - b| over the tensor's elements
  double max_rel = 0;  // max |a - b| / max(|a|, |b|, floor) (see WeightsDiff)
};

// Compares every tensor of `a` with the tensor of the same name in `b`
// (values widened to double from F32/F16/BF16). Relative differences use
// max(|a|, |b|, `floor`) as the denominator, so that values near zero do
// not dominate. Errors: InvalidArgument when the files' tensor names,
// shapes differ, or a dtype is not F32/F16/BF16; a NaN in either file
// counts as an infinite difference.
absl::StatusOr<std::vector<TensorDiff>> WeightsDiff(const SafetensorsFile& a,
                                                    const SafetensorsFile& b, double floor);

}  // namespace zosched
