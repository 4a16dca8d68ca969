#include "train/wait_limit.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "sim/simulator.h"

namespace zosched {

absl::StatusOr<std::chrono::seconds> AutoWaitTimeout(const Schedule& schedule) {
  absl::StatusOr<SimResult> predicted = Simulate(schedule);
  if (!predicted.ok()) {
    return absl::Status(predicted.status().code(),
                        absl::StrCat("predicting the step to set the wait limit: ",
                                     predicted.status().message(),
                                     " (or give one with --collective_timeout_s)"));
  }
  double step_s = 0;
  for (const StepInterval& s : predicted->timeline.steps()) {
    step_s = std::max(step_s, (s.end_ns() - s.start_ns()) * 1e-9);
  }
  return std::chrono::seconds(std::max<int64_t>(60, static_cast<int64_t>(std::ceil(10 * step_s))));
}

absl::StatusOr<std::chrono::seconds> WaitLimit(const TrainOptions& o, const Schedule& schedule) {
  if (o.collective_timeout_s > 0) return std::chrono::seconds(o.collective_timeout_s);
  return AutoWaitTimeout(schedule);
}

}  // namespace zosched
