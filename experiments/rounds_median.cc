#include "experiments/rounds_median.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "base/median.h"
#include "experiments/steady_machine.h"

namespace zosched {

namespace {

// The median of `figure` over the rounds for which `has` holds (all when
// `has` is empty); 0 when none does.
double MedianOf(const std::vector<CycleResult>& rounds,
                const std::function<double(const CycleResult&)>& figure,
                const std::function<bool(const CycleResult&)>& has = {}) {
  std::vector<double> values;
  for (const CycleResult& r : rounds) {
    if (!has || has(r)) values.push_back(figure(r));
  }
  return values.empty() ? 0 : Median(values);
}

double Ms(int64_t ns) { return ns / 1e6; }

// The medians of the rounds' `breakdown`s, over the rounds for which `has`
// holds (all when it is empty).
Breakdown MedianOfBreakdowns(const std::vector<CycleResult>& rounds,
                             Breakdown CycleResult::*breakdown,
                             const std::function<bool(const CycleResult&)>& has = {}) {
  Breakdown median;
  median.overlap = MedianOf(
      rounds, [&](const CycleResult& r) { return (r.*breakdown).overlap; }, has);
  median.exposed_ns = static_cast<int64_t>(MedianOf(
      rounds, [&](const CycleResult& r) { return static_cast<double>((r.*breakdown).exposed_ns); },
      has));
  return median;
}

}  // namespace

RoundsMedian MedianOverRounds(const std::vector<CycleResult>& rounds) {
  RoundsMedian m;
  m.rounds = static_cast<int>(rounds.size());
  m.predicted_ms = MedianOf(rounds, [](const CycleResult& r) {
    return Ms(r.comparison.predicted_step_ns);
  });
  m.measured_ms = MedianOf(rounds, [](const CycleResult& r) {
    return Ms(r.comparison.measured_step_ns);
  });
  m.error = MedianOf(rounds, [](const CycleResult& r) { return r.comparison.step_error; });
  m.measured_min_ms = Ms(rounds.front().comparison.measured_min_step_ns);
  m.measured_max_ms = Ms(rounds.front().comparison.measured_max_step_ns);
  for (const CycleResult& r : rounds) {
    m.measured_min_ms = std::min(m.measured_min_ms, Ms(r.comparison.measured_min_step_ns));
    m.measured_max_ms = std::max(m.measured_max_ms, Ms(r.comparison.measured_max_step_ns));
    m.runs += r.attempts;
    m.largest_drift = std::max(m.largest_drift, LargestSpeedDrift(r));
    m.largest_spread = std::max(m.largest_spread, LargestCalibrationSpread(r));
  }
  m.predicted.overlap = MedianOf(rounds, [](const CycleResult& r) {
    return StepBreakdown(r.predicted).overlap;
  });
  m.predicted.exposed_ns = static_cast<int64_t>(MedianOf(rounds, [](const CycleResult& r) {
    return static_cast<double>(StepBreakdown(r.predicted).exposed_ns);
  }));
  m.measured = MedianOfBreakdowns(rounds, &CycleResult::measured_breakdown);
  m.rounds_agree = {true, true};
  for (const CycleResult& r : rounds) {
    const BreakdownCheck check =
        CheckBreakdown(r.measured_breakdown.overlap, m.measured.overlap,
                       r.measured_breakdown.exposed_ns, m.measured.exposed_ns);
    m.rounds_agree.overlap_ok = m.rounds_agree.overlap_ok && check.overlap_ok;
    m.rounds_agree.exposed_ok = m.rounds_agree.exposed_ok && check.exposed_ok;
  }
  auto error_of = [](int64_t predicted_ns, const CycleResult& r) {
    return static_cast<double>(predicted_ns) / r.comparison.measured_step_ns - 1;
  };
  auto probed = [](const CycleResult& r) { return r.probed_predicted_step_ns > 0; };
  auto run_costs = [](const CycleResult& r) { return r.run_costs_predicted_step_ns > 0; };
  m.has_probed = std::any_of(rounds.begin(), rounds.end(), probed);
  m.has_run_costs = std::any_of(rounds.begin(), rounds.end(), run_costs);
  m.probed_ms = MedianOf(
      rounds, [](const CycleResult& r) { return Ms(r.probed_predicted_step_ns); }, probed);
  m.probed_error = MedianOf(
      rounds, [&](const CycleResult& r) { return error_of(r.probed_predicted_step_ns, r); },
      probed);
  m.run_costs_ms = MedianOf(
      rounds, [](const CycleResult& r) { return Ms(r.run_costs_predicted_step_ns); }, run_costs);
  m.run_costs_error = MedianOf(
      rounds, [&](const CycleResult& r) { return error_of(r.run_costs_predicted_step_ns, r); },
      run_costs);
  m.probed = MedianOfBreakdowns(rounds, &CycleResult::probed_breakdown, probed);
  m.run_costs = MedianOfBreakdowns(rounds, &CycleResult::run_costs_breakdown, run_costs);
  return m;
}

std::string RoundLabel(const std::string& label, int round) {
  return round <= 1 ? label : absl::StrCat(label, "/round", round);
}

}  // namespace zosched
