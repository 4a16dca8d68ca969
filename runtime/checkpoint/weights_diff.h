// How far apart two checkpoints' weights are, tensor by tensor: the
// differential check between backends (the CPU testbed and a GPU agree to
// rounding, not bitwise) and a user's tool for comparing two runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/checkpoint/safetensors.h"

namespace zosched {

struct TensorDiff {
  std::string name;
  int64_t elements = 0;
  // Over the elements finite in both files (0 when there are none):
  double max_abs = 0;  // max |a - b|
  double max_rel = 0;  // max |a - b| / max(|a|, |b|, floor) (see WeightsDiff)
  // Elements that are NaN or ±Inf in either file, and the first of them:
  // its index (row-major; -1 when there is none) and its value in each.
  int64_t non_finite = 0;
  int64_t first_non_finite = -1;
  double first_non_finite_a = 0;
  double first_non_finite_b = 0;
};

// Compares every tensor of `a` with the tensor of the same name in `b`
// (values widened to double from F32/F16/BF16). Relative differences use
// max(|a|, |b|, `floor`) as the denominator, so that values near zero do
// not dominate.
//
// A NaN or ±Inf in either file is not a difference of some size: it is
// counted in `non_finite` (with the first one's place and values) and left
// out of max_abs and max_rel, which stay finite. Two files with the same
// NaN or Inf in the same place count it too: weights that are not finite
// are never a match (a diverged run is not reproduced by another).
//
// Errors: InvalidArgument when the files' tensor names or shapes differ, a
// dtype is not F32/F16/BF16, or `floor` is not a positive finite number.
absl::StatusOr<std::vector<TensorDiff>> WeightsDiff(const SafetensorsFile& a,
                                                    const SafetensorsFile& b, double floor);

}  // namespace zosched
