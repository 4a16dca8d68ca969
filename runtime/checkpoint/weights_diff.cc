#include "runtime/checkpoint/weights_diff.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/dtype/half_convert.h"

namespace zosched {
namespace {

absl::StatusOr<double> Value(const SafetensorsTensor& t, int64_t i) {
  const char* p = t.bytes.data();
  switch (t.dtype) {
    case FP32: {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      return f;
    }
    case FP16:
    case BF16: {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      return t.dtype == FP16 ? Fp16ToFloat(h) : Bf16ToFloat(h);
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("tensor '%s' has dtype %s; expected F32, F16 or BF16", t.name,
                          t.dtype_name));
  }
}

}  // namespace

absl::StatusOr<std::vector<TensorDiff>> WeightsDiff(const SafetensorsFile& a,
                                                    const SafetensorsFile& b, double floor) {
  if (a.tensors().size() != b.tensors().size()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s has %d tensors but %s has %d",
                                                      a.path(), a.tensors().size(), b.path(),
                                                      b.tensors().size()));
  }
  std::vector<TensorDiff> diffs;
  for (const SafetensorsTensor& ta : a.tensors()) {
    const SafetensorsTensor* tb = b.Find(ta.name);
    if (tb == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("tensor '%s' of %s is not in %s", ta.name, a.path(), b.path()));
    }
    if (ta.shape != tb->shape) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "tensor '%s' has shape [%s] in %s but [%s] in %s", ta.name,
          absl::StrJoin(ta.shape, ", "), a.path(), absl::StrJoin(tb->shape, ", "), b.path()));
    }
    TensorDiff d;
    d.name = ta.name;
    d.elements = 1;
    for (int64_t n : ta.shape) d.elements *= n;
    for (int64_t i = 0; i < d.elements; ++i) {
      absl::StatusOr<double> x = Value(ta, i), y = Value(*tb, i);
      if (!x.ok()) return x.status();
      if (!y.ok()) return y.status();
      double abs = std::fabs(*x - *y);
      if (std::isnan(abs)) abs = std::numeric_limits<double>::infinity();
      d.max_abs = std::max(d.max_abs, abs);
      d.max_rel = std::max(d.max_rel, abs / std::max({std::fabs(*x), std::fabs(*y), floor}));
    }
    diffs.push_back(d);
  }
  return diffs;
}

}  // namespace zosched
