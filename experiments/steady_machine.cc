#include "experiments/steady_machine.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace zosched {

double LargestSpeedDrift(const CycleResult& result) {
  double largest = 0;
  for (double drift : result.speed_drifts) {
    if (drift > 0) largest = std::max(largest, std::fabs(drift - 1));
  }
  return largest;
}

absl::StatusOr<CycleResult> MeasureOnSteadyMachine(
    const SteadyMachine& policy, const std::function<absl::StatusOr<CycleResult>(int)>& attempt) {
  if (policy.max_attempts < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "steady machine: max_attempts is %d; at least 1 run is needed", policy.max_attempts));
  }
  if (!std::isfinite(policy.max_speed_drift) || policy.max_speed_drift < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "steady machine: max_speed_drift is %g; expected a fraction >= 0 (0.05 is 5 %%)",
        policy.max_speed_drift));
  }
  std::vector<double> drifts;
  CycleResult kept;
  for (int n = 1; n <= policy.max_attempts; ++n) {
    ASSIGN_OR_RETURN(CycleResult result, attempt(n));
    drifts.push_back(LargestSpeedDrift(result));
    const bool steady = policy.max_speed_drift == 0 || drifts.back() <= policy.max_speed_drift;
    if (n == 1 || drifts.back() < LargestSpeedDrift(kept)) kept = std::move(result);
    if (steady) break;
  }
  kept.attempts = drifts.size();
  kept.attempt_drifts = drifts;
  return kept;
}

std::string AttemptLabel(const std::string& label, int n) {
  return n <= 1 ? label : absl::StrFormat("%s/attempt%d", label, n);
}

}  // namespace zosched
