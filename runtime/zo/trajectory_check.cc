#include "runtime/zo/trajectory_check.h"

#include "absl/strings/str_format.h"
#include "runtime/zo/zo_math.h"

namespace zosched {

absl::Status CheckTrajectoryIsThisRuns(const std::vector<TrajectoryEntry>& entries,
                                       uint64_t base_seed, float learning_rate,
                                       const std::string& path) {
  constexpr const char* kWayOut =
      "resume with the flags (or --schedule) the run was started with, or start a fresh run "
      "with --overwrite";
  for (const TrajectoryEntry& e : entries) {
    if (e.directions.empty()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s: step %d has no directions, but every step has at least one (seed, g): the log "
          "was edited; %s",
          path, e.step, kWayOut));
    }
    const uint64_t step_seed = StepSeed(base_seed, e.step);
    for (size_t i = 0; i < e.directions.size(); ++i) {
      const uint64_t seed = DirectionSeed(step_seed, static_cast<int>(i));
      if (e.directions[i].seed == seed) continue;
      if (i == 0) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "%s: step %d has seed %u, but this run (base seed %u) draws %u at that step: the "
            "log is another run's or was edited; %s",
            path, e.step, e.directions[i].seed, base_seed, seed, kWayOut));
      }
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s: step %d direction %d has seed %u, but this run (base seed %u) draws %u for that "
          "direction at that step: the log is another run's or was edited; %s",
          path, e.step, i, e.directions[i].seed, base_seed, seed, kWayOut));
    }
    if (e.lr != learning_rate) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s: step %d has learning rate %.9g, but this run uses %.9g: the log is another "
          "run's or was edited; %s",
          path, e.step, e.lr, learning_rate, kWayOut));
    }
  }
  return absl::OkStatus();
}

}  // namespace zosched
