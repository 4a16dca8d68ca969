#include "runtime/checkpoint/non_finite.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/dtype/half_convert.h"

namespace zosched {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// `values` stored as `dtype`, one byte into the buffer (so unaligned).
std::vector<unsigned char> Stored(DType dtype, const std::vector<float>& values) {
  const size_t size = dtype == FP32 ? 4 : 2;
  std::vector<unsigned char> out(1 + values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    unsigned char* at = out.data() + 1 + i * size;
    if (dtype == FP32) {
      std::memcpy(at, &values[i], 4);
    } else {
      const uint16_t h = dtype == FP16 ? FloatToFp16(values[i]) : FloatToBf16(values[i]);
      std::memcpy(at, &h, 2);
    }
  }
  return out;
}

int64_t First(DType dtype, const std::vector<float>& values) {
  const std::vector<unsigned char> stored = Stored(dtype, values);
  return FirstNonFinite(dtype, stored.data() + 1, values.size());
}

// Finite values of every kind: zeros, subnormals, the largest finite value
// of each dtype (fp16's is 65504).
std::vector<float> Finite(int64_t n) {
  const float special[] = {0.0f, -0.0f, 1e-40f, -3e-8f, 65504.0f, -65504.0f, 1.0f, -2.5f};
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = special[i % 8] * (i % 3 == 0 ? 1 : 0.5f);
  return v;
}

TEST(FirstNonFinite, FindsNothingAmongFiniteValues) {
  for (DType dtype : {FP32, FP16, BF16}) {
    EXPECT_EQ(First(dtype, Finite(5000)), -1) << DType_Name(dtype);
    EXPECT_EQ(First(dtype, {}), -1) << DType_Name(dtype);
  }
  const float largest = std::numeric_limits<float>::max();
  EXPECT_EQ(First(FP32, {largest, -largest}), -1);
  EXPECT_EQ(First(BF16, {3.3e38f, -3.3e38f}), -1);  // bf16's largest: 3.39e38
}

// NaN, +Inf and -Inf in each dtype, in every lane of a word, at the edges
// of the 2048-byte blocks (512 fp32 or 1024 16-bit elements), after clean
// blocks, in the tail after the last whole block, at the very end: the
// first one's index.
TEST(FirstNonFinite, FindsTheFirstNanOrInfWhereverItIs) {
  const int64_t n = 5000;
  for (DType dtype : {FP32, FP16, BF16}) {
    for (float bad : {kNan, -kNan, kInf, -kInf}) {
      for (int64_t at : {0, 1, 2, 3, 511, 512, 1023, 1024, 3001, 4095, 4096, 4999}) {
        std::vector<float> v = Finite(n);
        v[at] = bad;
        if (at + 3 < n) v[at + 3] = kNan;  // a later one does not hide it
        EXPECT_EQ(First(dtype, v), at) << DType_Name(dtype) << " " << bad << " at " << at;
      }
    }
  }
}

// Narrowing to fp16 overflows above 65520: the stored value is Inf.
TEST(FirstNonFinite, SeesTheStoredValueNotTheIntended) {
  EXPECT_EQ(First(FP16, {1.0f, 70000.0f}), 1);
  EXPECT_EQ(First(FP32, {1.0f, 70000.0f}), -1);
}

}  // namespace
}  // namespace zosched
