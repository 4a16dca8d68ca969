#include "runtime/checkpoint/weights_diff.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/dtype/half_convert.h"

namespace zosched {
namespace {

absl::Status CheckFloatDType(const SafetensorsFile& file, const SafetensorsTensor& t) {
  if (t.dtype == FP32 || t.dtype == FP16 || t.dtype == BF16) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "tensor '%s' of %s has dtype %s; expected F32, F16 or BF16", t.name, file.path(),
      t.dtype_name));
}

// Element `i` of `t`, whose dtype CheckFloatDType accepted.
double Value(const SafetensorsTensor& t, int64_t i) {
  const char* p = t.bytes.data();
  if (t.dtype == FP32) {
    float f;
    std::memcpy(&f, p + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p + 2 * i, 2);
  return t.dtype == FP16 ? Fp16ToFloat(h) : Bf16ToFloat(h);
}

}  // namespace

absl::StatusOr<std::vector<TensorDiff>> WeightsDiff(const SafetensorsFile& a,
                                                    const SafetensorsFile& b, double floor) {
  if (!(floor > 0) || !std::isfinite(floor)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the floor of relative differences is %g; expected a positive finite "
                        "number",
                        floor));
  }
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
    if (absl::Status s = CheckFloatDType(a, ta); !s.ok()) return s;
    if (absl::Status s = CheckFloatDType(b, *tb); !s.ok()) return s;
    TensorDiff d;
    d.name = ta.name;
    d.elements = 1;
    for (int64_t n : ta.shape) d.elements *= n;
    for (int64_t i = 0; i < d.elements; ++i) {
      const double x = Value(ta, i), y = Value(*tb, i);
      if (!std::isfinite(x) || !std::isfinite(y)) {
        if (d.non_finite++ == 0) {
          d.first_non_finite = i;
          d.first_non_finite_a = x;
          d.first_non_finite_b = y;
        }
        continue;
      }
      // Both finite floats: |x - y| and the quotient are finite doubles.
      const double abs = std::fabs(x - y);
      d.max_abs = std::max(d.max_abs, abs);
      d.max_rel = std::max(d.max_rel, abs / std::max({std::fabs(x), std::fabs(y), floor}));
    }
    diffs.push_back(d);
  }
  return diffs;
}

}  // namespace zosched
