// WeightsDiff on files written with the real safetensors writer.
#include "runtime/checkpoint/weights_diff.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "runtime/dtype/half_convert.h"

namespace zosched {
namespace {

std::string Write(const std::string& name, std::vector<SafetensorsTensor> tensors) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  const absl::Status s = WriteSafetensors(path, tensors, {});
  EXPECT_TRUE(s.ok()) << s;
  return path;
}

SafetensorsTensor F32(const std::string& name, const std::vector<float>& v,
                      std::vector<int64_t> shape) {
  SafetensorsTensor t;
  t.name = name;
  t.dtype = FP32;
  t.shape = std::move(shape);
  t.bytes = absl::string_view(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  return t;
}

TEST(WeightsDiff, ReportsTheLargestDifferencesPerTensor) {
  const std::vector<float> a = {1.0f, -2.0f, 0.0f, 4.0f}, b = {1.0f, -2.5f, 0.001f, 4.0f};
  const std::vector<float> c = {3.0f, 3.0f};
  SafetensorsFile fa = *ReadSafetensors(Write("a", {F32("w", a, {2, 2}), F32("bias", c, {2})}));
  SafetensorsFile fb = *ReadSafetensors(Write("b", {F32("w", b, {2, 2}), F32("bias", c, {2})}));
  absl::StatusOr<std::vector<TensorDiff>> d = WeightsDiff(fa, fb, /*floor=*/0.01);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->size(), 2u);  // ordered by name
  EXPECT_EQ((*d)[0].name, "bias");
  EXPECT_EQ((*d)[0].max_abs, 0.0);
  EXPECT_EQ((*d)[1].name, "w");
  EXPECT_EQ((*d)[1].elements, 4);
  EXPECT_NEAR((*d)[1].max_abs, 0.5, 1e-7);
  // 0.5 / 2.5 = 0.2; the near-zero element gives 0.001 / 0.01 = 0.1.
  EXPECT_NEAR((*d)[1].max_rel, 0.2, 1e-7);
}

TEST(WeightsDiff, ComparesAcrossDtypes) {
  const std::vector<float> a = {1.5f, 2.0f};
  const std::vector<uint16_t> half = {FloatToFp16(1.5f), FloatToFp16(2.0f)};
  SafetensorsTensor h;
  h.name = "w";
  h.dtype = FP16;
  h.shape = {2};
  h.bytes = absl::string_view(reinterpret_cast<const char*>(half.data()), 4);
  SafetensorsFile fa = *ReadSafetensors(Write("c", {F32("w", a, {2})}));
  SafetensorsFile fb = *ReadSafetensors(Write("d", {h}));
  absl::StatusOr<std::vector<TensorDiff>> d = WeightsDiff(fa, fb, 0.01);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)[0].max_abs, 0.0);
  EXPECT_EQ((*d)[0].non_finite, 0);
  EXPECT_EQ((*d)[0].first_non_finite, -1);
}

// A NaN or Inf on either side, or on both at the same place, is counted
// and its first place and values kept; the finite elements' differences
// are still measured, and stay finite (a NaN used to make the largest
// relative difference 0).
TEST(WeightsDiff, CountsNanAndInfApartFromTheDifferences) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> a = {1.0f, nan, 2.0f, 4.0f, nan, -inf};
  const std::vector<float> b = {1.5f, 0.5f, inf, 4.0f, nan, -inf};
  SafetensorsFile fa = *ReadSafetensors(Write("nan_a", {F32("w", a, {2, 3})}));
  SafetensorsFile fb = *ReadSafetensors(Write("nan_b", {F32("w", b, {2, 3})}));
  absl::StatusOr<std::vector<TensorDiff>> d = WeightsDiff(fa, fb, 0.01);
  ASSERT_TRUE(d.ok()) << d.status();
  const TensorDiff& w = (*d)[0];
  EXPECT_EQ(w.non_finite, 4);
  EXPECT_EQ(w.first_non_finite, 1);
  EXPECT_TRUE(std::isnan(w.first_non_finite_a));
  EXPECT_EQ(w.first_non_finite_b, 0.5);
  EXPECT_EQ(w.max_abs, 0.5);
  EXPECT_NEAR(w.max_rel, 0.5 / 1.5, 1e-12);
  // The same file on both sides: its NaNs are still not a match.
  d = WeightsDiff(fa, fa, 0.01);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)[0].non_finite, 3);
  EXPECT_EQ((*d)[0].max_abs, 0.0);
  // Inf against a finite value, with nothing else different.
  const std::vector<float> c = {1.0f, 2.0f}, e = {1.0f, inf};
  SafetensorsFile fc = *ReadSafetensors(Write("inf_c", {F32("v", c, {2})}));
  SafetensorsFile fe = *ReadSafetensors(Write("inf_e", {F32("v", e, {2})}));
  d = WeightsDiff(fc, fe, 0.01);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)[0].non_finite, 1);
  EXPECT_EQ((*d)[0].first_non_finite, 1);
  EXPECT_EQ((*d)[0].first_non_finite_a, 2.0);
  EXPECT_TRUE(std::isinf((*d)[0].first_non_finite_b));
  EXPECT_EQ((*d)[0].max_rel, 0.0);
}

TEST(WeightsDiff, RefusesAFloorThatIsNotAPositiveNumber) {
  const std::vector<float> a = {1.0f};
  SafetensorsFile fa = *ReadSafetensors(Write("floor", {F32("w", a, {1})}));
  for (double floor : {0.0, -1.0, std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::quiet_NaN()}) {
    absl::StatusOr<std::vector<TensorDiff>> d = WeightsDiff(fa, fa, floor);
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << floor;
  }
}

TEST(WeightsDiff, RefusesFilesThatHoldDifferentTensors) {
  const std::vector<float> a = {1, 2, 3, 4};
  SafetensorsFile fa = *ReadSafetensors(Write("e", {F32("w", a, {2, 2})}));
  SafetensorsFile fb = *ReadSafetensors(Write("f", {F32("w", a, {4})}));
  SafetensorsFile fc = *ReadSafetensors(Write("g", {F32("v", a, {2, 2})}));
  absl::StatusOr<std::vector<TensorDiff>> shape = WeightsDiff(fa, fb, 0.01);
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.status().message().find("has shape [2, 2] in"), std::string::npos)
      << shape.status();
  absl::StatusOr<std::vector<TensorDiff>> name = WeightsDiff(fa, fc, 0.01);
  ASSERT_FALSE(name.ok());
  EXPECT_NE(name.status().message().find("tensor 'w' of"), std::string::npos) << name.status();
}

}  // namespace
}  // namespace zosched
