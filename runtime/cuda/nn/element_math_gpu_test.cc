// The per-element math of the forward kernels (runtime/nn/element_math.h,
// row_math.h) compiled by nvcc against the same functions compiled for the
// host: the norms' rstd and elements and the QK-norm + rotary pair with
// tolerance zero (hd.h's correctly rounded primitives); SwiGLU and GELU,
// which call expf and tanhf, within 2 ulp (their last bits may differ
// between the host's and the device's libraries). row_math_test.cc holds
// the host functions to runtime/nn bitwise, so on the GPU the kernels'
// elements are the CPU forward's for the same row statistics.
// Built only under --config=cuda; skips when no GPU is visible.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/device_test_util.h"
#include "runtime/cuda/nn/element_math_gpu_test_kernel.h"
#include "runtime/dtype/float_bits.h"

namespace zosched {
namespace {

// The distance in representable floats between two finite floats of the
// same sign (0 for the same bits).
int64_t UlpDistance(float a, float b) {
  return std::llabs(static_cast<int64_t>(Bits(a)) - static_cast<int64_t>(Bits(b)));
}

TEST(ElementMathGpu, DeviceGivesTheHostsBits) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const int64_t n = int64_t{1} << 18;
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::uniform_real_distribution<float> angle(-100.0f, 100.0f), stat(0.0f, 50.0f);
  std::vector<ElementMathInputs> in(n);
  for (ElementMathInputs& x : in) {
    x.x1 = normal(rng);
    x.x2 = normal(rng);
    x.w1 = 1.0f + 0.1f * normal(rng);
    x.w2 = 1.0f + 0.1f * normal(rng);
    x.b = 0.1f * normal(rng);
    x.mean = 0.5f * normal(rng);
    x.stat = stat(rng);
    const float a = angle(rng);
    x.c = std::cos(a);
    x.s = std::sin(a);
  }
  std::vector<float> gpu(n * kElementMathOutputs);
  ASSERT_EQ(ElementMathOnGpuForTest(in.data(), n, gpu.data()), cudaSuccess);
  int64_t differ[kElementMathOutputs] = {};
  int64_t worst_ulps = 0;
  for (int64_t i = 0; i < n; ++i) {
    float host[kElementMathOutputs];
    ElementMathOnHost(in[i], host);
    for (int k = 0; k < kElementMathOutputs; ++k) {
      const float device = gpu[i * kElementMathOutputs + k];
      if (k == kSwiGlu || k == kGelu) {
        const int64_t ulps = std::signbit(host[k]) == std::signbit(device)
                                 ? UlpDistance(host[k], device)
                                 : (host[k] == 0.0f && device == 0.0f ? 0 : 1 << 30);
        worst_ulps = std::max(worst_ulps, ulps);
        differ[k] += ulps > 2;
      } else {
        differ[k] += Bits(host[k]) != Bits(device);
      }
    }
  }
  for (int k = 0; k < kElementMathOutputs; ++k) EXPECT_EQ(differ[k], 0) << "output " << k;
  RecordProperty("swiglu_gelu_worst_ulps", static_cast<int>(worst_ulps));
}

}  // namespace
}  // namespace zosched
