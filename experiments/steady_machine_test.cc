#include "experiments/steady_machine.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

CycleResult WithDrifts(std::vector<double> drifts) {
  CycleResult r;
  r.speed_drifts = std::move(drifts);
  return r;
}

// A run with `drifts` whose schedule runs on one cluster device per entry
// of `spreads`, calibrated with that compute spread.
CycleResult WithDriftsAndSpreads(std::vector<double> drifts, const std::vector<double>& spreads) {
  CycleResult r = WithDrifts(std::move(drifts));
  for (size_t i = 0; i < spreads.size(); ++i) {
    Device* device = r.schedule.mutable_cluster()->add_devices();
    device->set_name(absl::StrCat("cpu", i));
    device->set_compute_spread(spreads[i]);
    r.schedule.add_devices()->set_cluster_device(device->name());
  }
  return r;
}

TEST(LargestCalibrationSpread, IsTheLeastSteadyDeviceTheScheduleRunsOn) {
  EXPECT_DOUBLE_EQ(LargestCalibrationSpread(WithDriftsAndSpreads({}, {0.03, 0.26, 0.04})), 0.26);
  EXPECT_EQ(LargestCalibrationSpread(WithDriftsAndSpreads({}, {0, 0})), 0);  // GPUs: none
  EXPECT_EQ(LargestCalibrationSpread(WithDrifts({1.0})), 0);
  // A cluster device the schedule does not use (zo2 on one of two cores).
  CycleResult one = WithDriftsAndSpreads({}, {0.03});
  one.schedule.mutable_cluster()->add_devices()->set_compute_spread(0.3);
  EXPECT_DOUBLE_EQ(LargestCalibrationSpread(one), 0.03);
}

TEST(LargestSpeedDrift, IsTheFurthestCoreEitherWayIgnoringDevicesWithout) {
  EXPECT_DOUBLE_EQ(LargestSpeedDrift(WithDrifts({1.02, 0.7, 1.1})), 0.3);
  EXPECT_DOUBLE_EQ(LargestSpeedDrift(WithDrifts({1.04, 0, 1.35})), 0.35);
  EXPECT_EQ(LargestSpeedDrift(WithDrifts({0, 0})), 0);  // no probe: nothing to judge
  EXPECT_EQ(LargestSpeedDrift(WithDrifts({})), 0);
}

// The machine drifted 30 % in the first run and 8 % in the second; the third
// is steady: three attempts, the third kept, every drift reported.
TEST(MeasureOnSteadyMachine, RepeatsUntilTheCoresRanAsCalibrated) {
  const std::vector<std::vector<double>> runs = {{1.3, 1.0}, {1.0, 0.92}, {1.01, 0.98}};
  std::vector<int> called;
  absl::StatusOr<CycleResult> r = MeasureOnSteadyMachine({0.05, 5}, [&](int n) {
    called.push_back(n);
    CycleResult result = WithDrifts(runs[n - 1]);
    result.run_dir = absl::StrCat("attempt ", n);
    return absl::StatusOr<CycleResult>(result);
  });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(called, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(r->run_dir, "attempt 3");
  EXPECT_EQ(r->attempts, 3);
  ASSERT_EQ(r->attempt_drifts.size(), 3u);
  EXPECT_NEAR(r->attempt_drifts[0], 0.3, 1e-12);
  EXPECT_NEAR(r->attempt_drifts[1], 0.08, 1e-12);
  EXPECT_NEAR(r->attempt_drifts[2], 0.02, 1e-12);
}

// No run was steady (drifts 6 %, 6 %, 26 %): the first of the least drifted
// is kept, and the report says it still drifted.
TEST(MeasureOnSteadyMachine, KeepsTheLeastDriftedRunWhenTheAttemptsRunOut) {
  const std::vector<double> runs = {1.06, 0.94, 1.26};
  absl::StatusOr<CycleResult> r = MeasureOnSteadyMachine({0.05, 3}, [&](int n) {
    CycleResult result = WithDrifts({1.0, runs[n - 1]});
    result.run_dir = absl::StrCat("attempt ", n);
    return absl::StatusOr<CycleResult>(result);
  });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(r->run_dir, "attempt 1");
  EXPECT_NEAR(LargestSpeedDrift(*r), 0.06, 1e-12);
  ASSERT_EQ(r->attempt_drifts.size(), 3u);
  EXPECT_NEAR(r->attempt_drifts[2], 0.26, 1e-12);
}

// The first calibration was taken while core 1 changed speed (its shapes'
// times spread 25 %): its run met the probe's limit but is taken again; the
// second calibration held still and is kept, with both spreads reported.
TEST(MeasureOnSteadyMachine, CalibratesAgainWhenTheCalibrationsRoundsDisagreed) {
  const std::vector<std::vector<double>> spreads = {{0.03, 0.25}, {0.03, 0.04}};
  std::vector<int> called;
  absl::StatusOr<CycleResult> r = MeasureOnSteadyMachine({0.05, 3, 0.10}, [&](int n) {
    called.push_back(n);
    CycleResult result = WithDriftsAndSpreads({1.01, 0.98}, spreads[n - 1]);
    result.run_dir = absl::StrCat("attempt ", n);
    return absl::StatusOr<CycleResult>(result);
  });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(called, (std::vector<int>{1, 2}));
  EXPECT_EQ(r->run_dir, "attempt 2");
  EXPECT_EQ(r->attempts, 2);
  ASSERT_EQ(r->attempt_spreads.size(), 2u);
  EXPECT_DOUBLE_EQ(r->attempt_spreads[0], 0.25);
  EXPECT_DOUBLE_EQ(r->attempt_spreads[1], 0.04);
  EXPECT_NEAR(r->attempt_drifts[1], 0.02, 1e-12);
}

// None steady: drift 6 % (1.2 times its 5 % limit), spread 26 % (2.6 times
// its 10 %), drift 8 % with spread 9 % (1.6 times): the first missed least.
TEST(MeasureOnSteadyMachine, KeepsTheRunThatMissedEitherLimitLeast) {
  const std::vector<double> drifts = {1.06, 1.01, 0.92};
  const std::vector<double> spreads = {0.03, 0.26, 0.09};
  auto attempt = [&](int n) {
    CycleResult result = WithDriftsAndSpreads({drifts[n - 1]}, {spreads[n - 1]});
    result.run_dir = absl::StrCat("attempt ", n);
    return absl::StatusOr<CycleResult>(result);
  };
  absl::StatusOr<CycleResult> r = MeasureOnSteadyMachine({0.05, 3, 0.10}, attempt);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(r->run_dir, "attempt 1");
  // Without the spread's limit the second (drift 1 %) is steady.
  r = MeasureOnSteadyMachine({0.05, 3, 0}, attempt);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(r->run_dir, "attempt 2");
}

TEST(MeasureOnSteadyMachine, ZeroAcceptsAnyRunAndARunWithoutProbesIsSteady) {
  int calls = 0;
  auto drifted = [&](int) {
    ++calls;
    return absl::StatusOr<CycleResult>(WithDrifts({2.0}));
  };
  ASSERT_TRUE(MeasureOnSteadyMachine({0, 3}, drifted).ok());
  EXPECT_EQ(calls, 1);
  calls = 0;
  absl::StatusOr<CycleResult> r = MeasureOnSteadyMachine({0.05, 3}, [&](int) {
    ++calls;
    return absl::StatusOr<CycleResult>(WithDrifts({}));  // a GPU run: no probe
  });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(calls, 1);
}

TEST(MeasureOnSteadyMachine, AnAttemptsErrorEndsItAtOnce) {
  int calls = 0;
  absl::StatusOr<CycleResult> r = MeasureOnSteadyMachine({0.05, 3}, [&](int) {
    ++calls;
    return absl::StatusOr<CycleResult>(absl::InternalError("train exited 1; see LOG"));
  });
  EXPECT_EQ(calls, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "train exited 1; see LOG");
}

TEST(MeasureOnSteadyMachine, RefusesAPolicyThatCannotRun) {
  auto never = [](int) -> absl::StatusOr<CycleResult> {
    ADD_FAILURE() << "ran an attempt under a refused policy";
    return CycleResult{};
  };
  absl::StatusOr<CycleResult> r = MeasureOnSteadyMachine({0.05, 0}, never);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("max_attempts is 0"), std::string::npos);
  r = MeasureOnSteadyMachine({-0.1, 3}, never);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("max_speed_drift is -0.1"), std::string::npos);
  r = MeasureOnSteadyMachine({0.05, 3, -1}, never);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("max_calibration_spread is -1"), std::string::npos);
}

TEST(AttemptsSummary, GivesEachRunsDriftAndCalibrationSpreadInPercent) {
  CycleResult r;
  r.attempt_drifts = {0.052, 0.01};
  r.attempt_spreads = {0.257, 0.03};
  EXPECT_EQ(AttemptsSummary(r), "5%/26% 1%/3%");
  EXPECT_EQ(AttemptsSummary(CycleResult{}), "");
}

TEST(AttemptLabel, TheFirstRunKeepsTheLabelLaterOnesGetADirectoryInIt) {
  EXPECT_EQ(AttemptLabel("zo2_balanced", 1), "zo2_balanced");
  EXPECT_EQ(AttemptLabel("zo2_balanced", 3), "zo2_balanced/attempt3");
}

}  // namespace
}  // namespace zosched
