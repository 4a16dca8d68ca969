#include "runtime/speed_probe.h"

#include <algorithm>

#include "base/check.h"
#include "models/accounting.h"
#include "models/model_zoo.h"
#include "runtime/nn/decoder_forward.h"
#include "runtime/threaded_backend.h"
#include "runtime/zo_ranges.h"

namespace zosched {
namespace {

constexpr int kExamples = 4, kSeq = 32;

// The zoo is compiled into the binary: failing to load it is a bug.
ModelSpec ProbeModel() {
  absl::StatusOr<ModelSpec> spec = LoadModelSpec("opt-tiny");
  CHECK(spec.ok()) << spec.status().message();
  return *spec;
}

}  // namespace

SpeedProbe::SpeedProbe()
    : spec_(ProbeModel()),
      block_(BlockParams(spec_)),
      perturbed_(block_.size()),
      hidden_(static_cast<int64_t>(kExamples) * kSeq * spec_.hidden_size()),
      workspace_(BlockWorkspaceFloats(spec_, kExamples, kSeq)),
      lengths_(kExamples, kSeq) {
  for (size_t i = 0; i < block_.size(); ++i) {
    block_[i] = static_cast<float>(i % 13) * 0.01f - 0.06f;
  }
}

void SpeedProbe::Work() {
  for (size_t i = 0; i < hidden_.size(); ++i) {
    hidden_[i] = static_cast<float>(i % 11) * 0.1f - 0.5f;
  }
  PerturbRange(/*seed=*/7, /*stream=*/1, /*first=*/0, block_.size(), block_.data(),
               /*eps=*/1e-3f, /*sign=*/1, perturbed_.data());
  BlockForward(spec_, perturbed_.data(), lengths_.data(), kExamples, kSeq, hidden_.data(),
               workspace_.data());
}

int64_t SpeedProbe::CpuNs() {
  Work();
  int64_t least = 0;
  for (int timed = 0; timed < 2; ++timed) {
    const int64_t start = ThreadCpuNs();
    Work();
    const int64_t ns = ThreadCpuNs() - start;
    if (timed == 0 || ns < least) least = ns;
  }
  return std::max<int64_t>(1, least);
}

}  // namespace zosched
