#include "experiments/steady_machine.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "schedule/cluster_lookup.h"

namespace zosched {

namespace {

absl::Status CheckLimit(const char* name, double limit) {
  if (!std::isfinite(limit) || limit < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "steady machine: %s is %g; expected a fraction >= 0 (0.05 is 5 %%)", name, limit));
  }
  return absl::OkStatus();
}

// How far `measure` exceeds `limit`, as a multiple of it (<= 1: within);
// 0 for an unchecked limit of 0.
double OverLimit(double measure, double limit) { return limit > 0 ? measure / limit : 0; }

}  // namespace

double LargestSpeedDrift(const CycleResult& result) {
  double largest = 0;
  for (double drift : result.speed_drifts) {
    if (drift > 0) largest = std::max(largest, std::fabs(drift - 1));
  }
  return largest;
}

double LargestCalibrationSpread(const CycleResult& result) {
  double largest = 0;
  for (const ScheduleDevice& d : result.schedule.devices()) {
    const Device* device = FindDevice(result.schedule.cluster(), d.cluster_device());
    if (device != nullptr) largest = std::max(largest, device->compute_spread());
  }
  return largest;
}

absl::StatusOr<CycleResult> MeasureOnSteadyMachine(
    const SteadyMachine& policy, const std::function<absl::StatusOr<CycleResult>(int)>& attempt) {
  if (policy.max_attempts < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "steady machine: max_attempts is %d; at least 1 run is needed", policy.max_attempts));
  }
  RETURN_IF_ERROR(CheckLimit("max_speed_drift", policy.max_speed_drift));
  RETURN_IF_ERROR(CheckLimit("max_calibration_spread", policy.max_calibration_spread));
  std::vector<double> drifts, spreads;
  CycleResult kept;
  double kept_excess = 0;
  for (int n = 1; n <= policy.max_attempts; ++n) {
    ASSIGN_OR_RETURN(CycleResult result, attempt(n));
    drifts.push_back(LargestSpeedDrift(result));
    spreads.push_back(LargestCalibrationSpread(result));
    const double excess = std::max(OverLimit(drifts.back(), policy.max_speed_drift),
                                   OverLimit(spreads.back(), policy.max_calibration_spread));
    if (n == 1 || excess < kept_excess) {
      kept = std::move(result);
      kept_excess = excess;
    }
    if (excess <= 1) break;
  }
  kept.attempts = drifts.size();
  kept.attempt_drifts = drifts;
  kept.attempt_spreads = spreads;
  return kept;
}

std::string AttemptsSummary(const CycleResult& result) {
  std::string summary;
  for (size_t n = 0; n < result.attempt_drifts.size(); ++n) {
    const double spread = n < result.attempt_spreads.size() ? result.attempt_spreads[n] : 0;
    absl::StrAppendFormat(&summary, "%s%.0f%%/%.0f%%", n == 0 ? "" : " ",
                          100 * result.attempt_drifts[n], 100 * spread);
  }
  return summary;
}

std::string AttemptLabel(const std::string& label, int n) {
  return n <= 1 ? label : absl::StrFormat("%s/attempt%d", label, n);
}

}  // namespace zosched
