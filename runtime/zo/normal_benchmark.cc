// FillNormals' speed on this machine with each instruction set it supports
// (normal_simd.h), measured:
//
//   bazel run //runtime/zo:normal_benchmark
//
// Each repeat fills kElements normals of one stream (16 MiB of floats, more
// than the caches hold, as the runtime's chunks add up to) with every
// supported instruction set in turn, so that all of them see the same load
// from other processes; two warm-up repeats are not counted. Reported per
// instruction set, over kRepeats repeats:
//   ns per element     = median time of one fill / kElements
//   elements per s     = kElements / median time of one fill
//   speed-up           = scalar's median time / this one's
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "base/median.h"
#include "runtime/zo/normal_simd.h"

namespace zosched {
namespace {

constexpr int64_t kElements = int64_t{1} << 22;
constexpr int kWarmUps = 2;
constexpr int kRepeats = 11;

int Main() {
  std::vector<NormalIsa> isas;
  for (NormalIsa isa : {NormalIsa::kScalar, NormalIsa::kSse2, NormalIsa::kAvx2}) {
    if (NormalIsaSupported(isa)) {
      isas.push_back(isa);
    } else {
      std::printf("%s: not supported by this CPU or build, skipped\n", NormalIsaName(isa));
    }
  }
  std::vector<float> out(kElements);
  std::vector<std::vector<double>> seconds(isas.size());
  for (int repeat = 0; repeat < kWarmUps + kRepeats; ++repeat) {
    for (size_t i = 0; i < isas.size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      FillNormalsWithIsa(isas[i], /*seed=*/repeat, /*stream=*/7, /*first=*/0, kElements,
                         out.data());
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      if (repeat >= kWarmUps) seconds[i].push_back(elapsed.count());
    }
  }
  std::printf("FillNormals, %lld elements, median of %d repeats (after %d warm-ups)\n",
              static_cast<long long>(kElements), kRepeats, kWarmUps);
  std::printf("%-8s %14s %18s %10s\n", "isa", "ns/element", "elements/s", "speed-up");
  const double scalar_s = Median(seconds[0]);
  for (size_t i = 0; i < isas.size(); ++i) {
    const double median_s = Median(seconds[i]);
    std::printf("%-8s %14.3f %18.4g %9.2fx\n", NormalIsaName(isas[i]), median_s / kElements * 1e9,
                kElements / median_s, scalar_s / median_s);
  }
  return 0;
}

}  // namespace
}  // namespace zosched

int main() { return zosched::Main(); }
