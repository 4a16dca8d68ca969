// Timing statistics shared by the CPU and GPU calibrations: the min, median
// and max of timed runs, and timing a function so.
//
// Units: seconds.
#pragma once

#include <chrono>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "base/status_macros.h"

namespace zosched {

// Min, median and max of timed runs, in seconds.
struct Stats {
  double min = 0, median = 0, max = 0;
};

// The statistics of `seconds` (not empty). The median is the upper middle
// element for an even count (sorted[n / 2]).
Stats Summarize(std::vector<double> seconds);

// Runs `run` (returning absl::Status) once untimed, then `repeats` (>= 1)
// times, each timed on the steady clock. Errors: the first of `run`'s.
template <typename F>
absl::StatusOr<Stats> TimeRuns(int repeats, F&& run) {
  RETURN_IF_ERROR(run());  // warm-up
  std::vector<double> seconds;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(run());
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return Summarize(std::move(seconds));
}

}  // namespace zosched
