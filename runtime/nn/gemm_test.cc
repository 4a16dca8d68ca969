#include "runtime/nn/gemm.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/nn/gemm_kernels.h"

namespace zosched {
namespace {

struct NamedKernel {
  std::string name;
  GemmKernel kernel;
};

// The kernels this machine can run.
std::vector<NamedKernel> Kernels() {
  std::vector<NamedKernel> kernels = {{"base", BaseGemmKernel()}};
  if (Avx512GemmKernel() != nullptr && Avx512Supported()) {
    kernels.push_back({"avx512", Avx512GemmKernel()});
  }
  return kernels;
}

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// Element (k, j) of B in `layout` with n columns and depth `depth`.
float B(RhsLayout layout, const std::vector<float>& b, int64_t k, int64_t j, int64_t n,
        int64_t depth) {
  return layout == kRhsRowMajor ? b[k * n + j] : b[j * depth + k];
}

TEST(GemmTest, DispatchNamesAKernelThisMachineRuns) {
  const std::string name = GemmKernelName();
  EXPECT_TRUE(name == "base" || (name == "avx512" && Avx512Supported())) << name;
}

// Every kernel computes C += A · B (against a double-precision reference),
// for both layouts and shapes around Eigen's register panels and depth
// block.
TEST(GemmTest, EveryKernelMultiplies) {
  for (const NamedKernel& k : Kernels()) {
    for (RhsLayout layout : {kRhsRowMajor, kRhsTransposed}) {
      for (const auto& [m, n, depth] : std::vector<std::array<int64_t, 3>>{
               {1, 1, 1}, {4, 24, 8}, {7, 50, 33}, {64, 200, 600}, {12, 97, 1030}}) {
        SCOPED_TRACE(k.name + " layout " + std::to_string(layout) + " " + std::to_string(m) +
                     "x" + std::to_string(n) + "x" + std::to_string(depth));
        const std::vector<float> a = Random(m * depth, 1), b = Random(depth * n, 2);
        std::vector<float> c = Random(m * n, 3);
        const std::vector<float> c0 = c;
        const int64_t ldb = layout == kRhsRowMajor ? n : depth;
        k.kernel(layout, m, n, depth, a.data(), depth, b.data(), ldb, c.data(), n);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double want = c0[i * n + j];
            for (int64_t d = 0; d < depth; ++d) {
              want += static_cast<double>(a[i * depth + d]) * B(layout, b, d, j, n, depth);
            }
            ASSERT_NEAR(c[i * n + j], want, 1e-4 * std::sqrt(static_cast<double>(depth)))
                << "C(" << i << ", " << j << ")";
          }
        }
      }
    }
  }
}

// The contract runtime/nn relies on: a row of A (a token) in whole panels
// of 4 gets the same bits of C whichever other rows come with it, for
// every kernel.
TEST(GemmTest, EveryKernelGivesARowTheSameBitsInAnyPanelAlignedBatch) {
  const int64_t n = 200, depth = 600, m = 64;
  const std::vector<float> a = Random(m * depth, 4), w = Random(n * depth, 5);
  for (const NamedKernel& k : Kernels()) {
    std::vector<float> all(m * n, 0.0f);
    k.kernel(kRhsTransposed, m, n, depth, a.data(), depth, w.data(), depth, all.data(), n);
    for (int64_t first : {0, 4, 20}) {
      for (int64_t rows : {4, 8, 44}) {
        if (first + rows > m) continue;
        std::vector<float> part(rows * n, 0.0f);
        k.kernel(kRhsTransposed, rows, n, depth, a.data() + first * depth, depth, w.data(), depth,
                 part.data(), n);
        EXPECT_EQ(std::memcmp(part.data(), all.data() + first * n, part.size() * sizeof(float)),
                  0)
            << k.name << ": rows " << first << " .. " << first + rows;
      }
    }
  }
}

}  // namespace
}  // namespace zosched
