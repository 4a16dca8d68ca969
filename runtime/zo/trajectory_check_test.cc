#include "runtime/zo/trajectory_check.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "runtime/zo/zo_math.h"

namespace zosched {
namespace {

std::vector<TrajectoryEntry> RunOf(uint64_t base_seed, float lr, int64_t first, int count) {
  std::vector<TrajectoryEntry> entries;
  for (int64_t step = first; step < first + count; ++step) {
    entries.push_back({step, StepSeed(base_seed, step), 0.25f * step, lr});
  }
  return entries;
}

TEST(CheckTrajectoryIsThisRuns, AcceptsTheRunsOwnLog) {
  EXPECT_TRUE(CheckTrajectoryIsThisRuns(RunOf(5, 2e-4f, 0, 20), 5, 2e-4f, "t.log").ok());
  EXPECT_TRUE(CheckTrajectoryIsThisRuns(RunOf(5, 2e-4f, 40, 3), 5, 2e-4f, "t.log").ok());
  EXPECT_TRUE(CheckTrajectoryIsThisRuns({}, 5, 2e-4f, "t.log").ok());
}

TEST(CheckTrajectoryIsThisRuns, RefusesAnEntryWithAnotherSeed) {
  std::vector<TrajectoryEntry> entries = RunOf(5, 2e-4f, 0, 20);
  entries[13].seed ^= 1;  // one entry past a checkpoint, edited
  const absl::Status status = CheckTrajectoryIsThisRuns(entries, 5, 2e-4f, "out/trajectory.log");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(status.message(), "out/trajectory.log: step 13 has seed")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "this run (base seed 5) draws")) << status;
  // Another run's log (another --seed) from its first entry.
  EXPECT_FALSE(CheckTrajectoryIsThisRuns(RunOf(6, 2e-4f, 0, 3), 5, 2e-4f, "t.log").ok());
}

TEST(CheckTrajectoryIsThisRuns, RefusesAnotherLearningRate) {
  const absl::Status status = CheckTrajectoryIsThisRuns(RunOf(5, 1e-3f, 0, 2), 5, 2e-4f, "t.log");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(status.message(), "step 0 has learning rate 0.00100000005"))
      << status;
}

}  // namespace
}  // namespace zosched
