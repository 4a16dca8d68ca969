#include "runtime/speed_probe.h"

#include <algorithm>

#include "runtime/nn/gemm.h"
#include "runtime/threaded_backend.h"
#include "runtime/zo/normal.h"

namespace zosched {
namespace {

// The GEMM of a block's projection on 256 tokens of hidden 64 into 256
// outputs (the testbed's models are that small), and as many normals as a
// block of about 32 K parameters needs.
constexpr int64_t kTokens = 256, kIn = 64, kOut = 256;
constexpr int64_t kNormals = 32768;

}  // namespace

SpeedProbe::SpeedProbe()
    : a_(kTokens * kIn), b_(kOut * kIn), c_(kTokens * kOut), z_(kNormals) {
  for (size_t i = 0; i < a_.size(); ++i) a_[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
  for (size_t i = 0; i < b_.size(); ++i) b_[i] = static_cast<float>(i % 5) * 0.125f - 0.25f;
}

void SpeedProbe::Work() {
  std::fill(c_.begin(), c_.end(), 0.0f);
  GemmAcc(kRhsTransposed, kTokens, kOut, kIn, a_.data(), kIn, b_.data(), kIn, c_.data(), kOut);
  FillNormals(/*seed=*/7, /*stream=*/1, /*first=*/0, kNormals, z_.data());
}

int64_t SpeedProbe::CpuNs() {
  Work();
  const int64_t start = ThreadCpuNs();
  Work();
  return std::max<int64_t>(1, ThreadCpuNs() - start);
}

}  // namespace zosched
