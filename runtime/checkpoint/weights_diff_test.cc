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

TEST(WeightsDiff, ComparesAcrossDtypesAndCountsNanAsInfinite) {
  const std::vector<float> a = {1.5f, std::numeric_limits<float>::quiet_NaN()};
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
  EXPECT_TRUE(std::isinf((*d)[0].max_abs));
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
