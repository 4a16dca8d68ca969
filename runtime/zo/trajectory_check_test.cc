#include "runtime/zo/trajectory_check.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/zo/zo_math.h"

namespace zosched {
namespace {

// The entries of steps [first, first + count) of a run with `directions`
// directions a step, its own seeds.
std::vector<TrajectoryEntry> RunOf(uint64_t base_seed, float lr, int64_t first, int count,
                                   int directions = 1) {
  std::vector<TrajectoryEntry> entries;
  for (int64_t step = first; step < first + count; ++step) {
    TrajectoryEntry entry;
    entry.step = step;
    for (int i = 0; i < directions; ++i) {
      entry.directions.push_back({DirectionSeed(StepSeed(base_seed, step), i), 0.25f * step + i});
    }
    entry.lr = lr;
    entries.push_back(entry);
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
  entries[13].directions[0].seed ^= 1;  // one entry past a checkpoint, edited
  const absl::Status status = CheckTrajectoryIsThisRuns(entries, 5, 2e-4f, "out/trajectory.log");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(status.message(), "out/trajectory.log: step 13 has seed"))
      << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "this run (base seed 5) draws")) << status;
  // Another run's log (another --seed) from its first entry.
  EXPECT_FALSE(CheckTrajectoryIsThisRuns(RunOf(6, 2e-4f, 0, 3), 5, 2e-4f, "t.log").ok());
}

TEST(CheckTrajectoryIsThisRuns, AcceptsTheRunsOwnMultiDirectionLog) {
  EXPECT_TRUE(CheckTrajectoryIsThisRuns(RunOf(5, 2e-4f, 0, 20, 3), 5, 2e-4f, "t.log").ok());
  EXPECT_TRUE(CheckTrajectoryIsThisRuns(RunOf(5, 2e-4f, 7, 4, 16), 5, 2e-4f, "t.log").ok());
  // Direction 0 is the step seed itself: a q = 1 run's seeds.
  EXPECT_EQ(RunOf(5, 2e-4f, 3, 1, 3)[0].directions[0].seed,
            RunOf(5, 2e-4f, 3, 1)[0].directions[0].seed);
}

TEST(CheckTrajectoryIsThisRuns, RefusesAnotherSeedInALaterDirection) {
  std::vector<TrajectoryEntry> entries = RunOf(5, 2e-4f, 0, 20, 3);
  const uint64_t right = entries[13].directions[2].seed;
  entries[13].directions[2].seed ^= 1;
  const absl::Status status = CheckTrajectoryIsThisRuns(entries, 5, 2e-4f, "out/trajectory.log");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(
      status.message(),
      absl::StrCat("out/trajectory.log: step 13 direction 2 has seed ", right ^ 1)))
      << status;
  EXPECT_TRUE(
      absl::StrContains(status.message(), absl::StrCat("this run (base seed 5) draws ", right)))
      << status;
  // Directions swapped: each seed is a right one, at the wrong place.
  entries = RunOf(5, 2e-4f, 0, 3, 3);
  std::swap(entries[1].directions[1], entries[1].directions[2]);
  const absl::Status swapped = CheckTrajectoryIsThisRuns(entries, 5, 2e-4f, "t.log");
  EXPECT_TRUE(absl::StrContains(swapped.message(), "t.log: step 1 direction 1 has seed"))
      << swapped;
  // Every direction the step seed (a q = 1 run's seed repeated): caught at direction 1.
  entries = RunOf(5, 2e-4f, 0, 3, 3);
  for (DirectionGradient& d : entries[0].directions) d.seed = entries[0].directions[0].seed;
  EXPECT_EQ(CheckTrajectoryIsThisRuns(entries, 5, 2e-4f, "t.log").code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(CheckTrajectoryIsThisRuns, RefusesAnEntryWithoutDirections) {
  std::vector<TrajectoryEntry> entries = RunOf(5, 2e-4f, 0, 3);
  entries[2].directions.clear();
  const absl::Status status = CheckTrajectoryIsThisRuns(entries, 5, 2e-4f, "t.log");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(status.message(), "t.log: step 2 has no directions")) << status;
}

TEST(CheckTrajectoryIsThisRuns, RefusesAnotherLearningRate) {
  const absl::Status status = CheckTrajectoryIsThisRuns(RunOf(5, 1e-3f, 0, 2), 5, 2e-4f, "t.log");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(status.message(), "step 0 has learning rate 0.00100000005"))
      << status;
}

}  // namespace
}  // namespace zosched
