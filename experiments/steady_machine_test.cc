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
}

TEST(AttemptLabel, TheFirstRunKeepsTheLabelLaterOnesGetADirectoryInIt) {
  EXPECT_EQ(AttemptLabel("zo2_balanced", 1), "zo2_balanced");
  EXPECT_EQ(AttemptLabel("zo2_balanced", 3), "zo2_balanced/attempt3");
}

}  // namespace
}  // namespace zosched
