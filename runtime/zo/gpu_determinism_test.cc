// Differential test of the per-element ZO math: GPU (nvcc) against CPU, with
// tolerance zero: every float must have the same bits (docs/ARCHITECTURE.md,
// 'Determinism contract').
// Built only under --config=cuda; skips when no GPU is visible.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/device_test_util.h"
#include "runtime/dtype/float_bits.h"
#include "runtime/zo/gpu_determinism_test_kernel.h"
#include "runtime/zo/normal.h"
#include "runtime/zo/zo_math.h"

namespace zosched {
namespace {

TEST(GpuDeterminism, LogAndSinCosMatchCpuOnTheWholeDomain) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const int64_t n = int64_t{1} << 24;
  std::vector<float> log_gpu(n), sin_gpu(n), cos_gpu(n);
  ASSERT_EQ(LogAndSinCosOnGpuForTest(log_gpu.data(), sin_gpu.data(), cos_gpu.data()), cudaSuccess);
  int64_t mismatches = 0;
  for (int64_t k = 0; k < n; ++k) {
    float s, c;
    SinCos2Pi(static_cast<float>(k) * 0x1p-24f, &s, &c);
    const float l = LogF(static_cast<float>(k + 1) * 0x1p-24f);
    const bool same =
        Bits(l) == Bits(log_gpu[k]) && Bits(s) == Bits(sin_gpu[k]) && Bits(c) == Bits(cos_gpu[k]);
    if (!same && mismatches++ < 5) ADD_FAILURE() << "k = " << k;
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(GpuDeterminism, NormalsPerturbationAndUpdateMatchCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = StepSeed(42, 7);
  const uint32_t stream = BlockStream(3);
  const uint64_t first = (uint64_t{1} << 33) + 5;  // unaligned, high counter word set
  const int64_t n = int64_t{1} << 20;
  std::vector<float> theta(n);
  for (int64_t i = 0; i < n; ++i) theta[i] = 0.02f * static_cast<float>((i * 7919) % 201 - 100);
  const float eps = 1e-3f, lr = 1e-6f, g = -3.75f, wd = 0.01f;
  std::vector<float> z(n), plus(n), minus(n), updated(n);
  ASSERT_EQ(ZoMathOnGpuForTest(seed, stream, first, n, theta.data(), eps, lr, g, wd, z.data(),
                               plus.data(), minus.data(), updated.data()),
            cudaSuccess);
  std::vector<float> z_cpu(n);
  FillNormals(seed, stream, first, n, z_cpu.data());
  int64_t mismatches = 0;
  for (int64_t i = 0; i < n; ++i) {
    const bool same =
        Bits(z[i]) == Bits(z_cpu[i]) &&
        Bits(plus[i]) == Bits(Perturbed(theta[i], z_cpu[i], eps, +1)) &&
        Bits(minus[i]) == Bits(Perturbed(theta[i], z_cpu[i], eps, -1)) &&
        Bits(updated[i]) == Bits(Updated(theta[i], z_cpu[i], lr, g, wd, (i & 1) != 0));
    if (!same && mismatches++ < 5) ADD_FAILURE() << "element " << i;
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(GpuDeterminism, ProjectedGradientMatchesCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  std::vector<float> plus(16), minus(16);
  for (int e = 0; e < 16; ++e) {
    plus[e] = 0.6931f + 1e-4f * static_cast<float>((e * 7919) % 13);
    minus[e] = 0.6931f - 1e-4f * static_cast<float>((e * 104729) % 11);
  }
  float g_gpu = 0.0f;
  ASSERT_EQ(ProjectedGradientOnGpuForTest(plus.data(), minus.data(), 16, 1e-3f, &g_gpu),
            cudaSuccess);
  EXPECT_EQ(Bits(g_gpu), Bits(ProjectedGradient(plus.data(), minus.data(), 16, 1e-3f)));
}

}  // namespace
}  // namespace zosched
