// Benchmark of BlockForward: its GFLOP/s against the peak of Eigen's own
// GEMM on this machine (same compiler flags), single-threaded.
//
//   bazel run -c opt //runtime/nn:opt_forward_benchmark -- [model] [examples]
//   [seq]
//
// Defaults: opt-125m, 16 examples, seq 128 (MeZO's SST-2 shapes).
// Formulas:
//   block GFLOP/s = BlockForwardFlopsPerToken(spec, seq) · examples · seq
//                   / median time of one BlockForward / 1e9
//   GEMM GFLOP/s  = 2 · T · h · f / median time of Y[T, f] = X[T, h] · W[f, h]ᵀ
//                   (the block's fc1 shape, T = examples · seq), via
//                   Eigen's `noalias() =` on row-major maps
// Each is timed over `kRepeats` runs after `kWarmup` runs; the median is
// reported. Attention's FLOPs are counted over the full seq × seq score
// matrix (accounting.h), although BlockForward computes only the real
// lengths' L × L part.
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "models/accounting.h"
#include "models/model_zoo.h"
#include "runtime/nn/opt_forward.h"

namespace zosched {
namespace {

constexpr int kWarmup = 2;
constexpr int kRepeats = 7;

template <typename F>
double MedianSeconds(F&& f) {
  for (int i = 0; i < kWarmup; ++i) f();
  std::vector<double> times;
  for (int i = 0; i < kRepeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int Main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "opt-125m";
  const int examples = argc > 2 ? std::atoi(argv[2]) : 16;
  const int seq = argc > 3 ? std::atoi(argv[3]) : 128;
  absl::StatusOr<ModelSpec> spec = LoadModelSpec(name);
  if (!spec.ok()) {
    std::fprintf(stderr, "%s\n", std::string(spec.status().message()).c_str());
    return 1;
  }
  if (absl::Status s = CheckRuntimeSupports(*spec); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  const int64_t h = spec->hidden_size(), f = spec->ffn_size();
  const int64_t T = static_cast<int64_t>(examples) * seq;

  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> block(BlockParams(*spec));
  for (float& x : block) x = normal(rng);
  std::vector<float> hidden(T * h),
      workspace(BlockWorkspaceFloats(*spec, examples, seq));
  for (float& x : hidden) x = normal(rng);
  std::vector<int32_t> lengths(examples, seq);

  const double block_s = MedianSeconds([&] {
    BlockForward(*spec, block.data(), lengths.data(), examples, seq,
                 hidden.data(), workspace.data());
  });
  const double block_flops =
      static_cast<double>(BlockForwardFlopsPerToken(*spec, seq)) * T;

  using RowMajor =
      Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  std::vector<float> w(f * h), y(T * f);
  for (float& x : w) x = normal(rng);
  Eigen::Map<const RowMajor> X(hidden.data(), T, h), W(w.data(), f, h);
  Eigen::Map<RowMajor> Y(y.data(), T, f);
  const double gemm_s = MedianSeconds([&] { Y.noalias() = X * W.transpose(); });
  const double gemm_flops = 2.0 * T * h * f;

  const double block_gflops = block_flops / block_s / 1e9;
  const double gemm_gflops = gemm_flops / gemm_s / 1e9;
  std::printf("model %s, %d examples x seq %d (%lld tokens), SIMD %s\n",
              name.c_str(), examples, seq, static_cast<long long>(T),
              Eigen::SimdInstructionSetsInUse());
  std::printf("BlockForward: %.3f ms, %.1f GFLOP/s\n", block_s * 1e3,
              block_gflops);
  std::printf(
      "Eigen GEMM [%lld x %lld] x [%lld x %lld]: %.3f ms, %.1f GFLOP/s\n",
      static_cast<long long>(T), static_cast<long long>(h),
      static_cast<long long>(h), static_cast<long long>(f), gemm_s * 1e3,
      gemm_gflops);
  std::printf("ratio: %.0f%%\n", 100.0 * block_gflops / gemm_gflops);
  return 0;
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) { return zosched::Main(argc, argv); }
