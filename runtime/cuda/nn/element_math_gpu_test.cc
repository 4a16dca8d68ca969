// The per-element math of the forward kernels (runtime/nn/element_math.h,
// row_math.h) compiled by nvcc against the same functions compiled for the
// host, with tolerance zero: the norms' rstd and elements, the QK-norm +
// rotary pair, SwiGLU and GELU (hd.h's correctly rounded primitives and
// hd_exp.h's e^x, where the libraries' expf and tanhf differ between host
// and device in the last bits). row_math_test.cc holds
// the host functions to runtime/nn bitwise, so on the GPU the kernels'
// elements are the CPU forward's for the same row statistics.
// Built only under --config=cuda; skips when no GPU is visible.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/device_test_util.h"
#include "runtime/cuda/nn/element_math_gpu_test_kernel.h"
#include "runtime/dtype/float_bits.h"

namespace zosched {
namespace {

TEST(ElementMathGpu, DeviceGivesTheHostsBits) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const int64_t n = int64_t{1} << 18;
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  // Every 8th x1 wide, so that e^x's overflow and subnormal ranges are met.
  std::uniform_real_distribution<float> angle(-100.0f, 100.0f), stat(0.0f, 50.0f),
      wide(-120.0f, 120.0f);
  std::vector<ElementMathInputs> in(n);
  for (int64_t i = 0; i < n; ++i) {
    ElementMathInputs& x = in[i];
    x.x1 = i % 8 == 0 ? wide(rng) : normal(rng);
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
  for (int64_t i = 0; i < n; ++i) {
    float host[kElementMathOutputs];
    ElementMathOnHost(in[i], host);
    for (int k = 0; k < kElementMathOutputs; ++k) {
      differ[k] += Bits(host[k]) != Bits(gpu[i * kElementMathOutputs + k]);
    }
  }
  for (int k = 0; k < kElementMathOutputs; ++k) EXPECT_EQ(differ[k], 0) << "output " << k;
}

}  // namespace
}  // namespace zosched
