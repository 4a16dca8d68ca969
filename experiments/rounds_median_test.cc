#include "experiments/rounds_median.h"

#include <cmath>

#include "gtest/gtest.h"

namespace zosched {
namespace {

// One round of one schedule: predicted and measured step (ms), the
// prediction's one device with `comm_ms` of communication of which
// `overlap_ms` inside compute and `exposed_ms` exposed, the measured
// breakdown, and the predictions again (ms; 0: none).
struct Round {
  double predicted_ms, measured_ms, min_ms, max_ms;
  double comm_ms, overlap_ms, exposed_ms;
  double measured_overlap, measured_exposed_ms;
  double probed_ms, run_costs_ms;
  int attempts;
};

int64_t Ns(double ms) { return std::llround(ms * 1e6); }

CycleResult Make(const Round& round) {
  CycleResult r;
  r.comparison.predicted_step_ns = Ns(round.predicted_ms);
  r.comparison.measured_step_ns = Ns(round.measured_ms);
  r.comparison.measured_min_step_ns = Ns(round.min_ms);
  r.comparison.measured_max_step_ns = Ns(round.max_ms);
  r.comparison.step_error = round.predicted_ms / round.measured_ms - 1;
  DeviceMetrics device;
  device.comm_ns = Ns(round.comm_ms);
  device.overlap_ns = Ns(round.overlap_ms);
  device.exposed_comm_ns = Ns(round.exposed_ms);
  r.predicted.devices.push_back(device);
  r.measured_breakdown.overlap = round.measured_overlap;
  r.measured_breakdown.exposed_ns = Ns(round.measured_exposed_ms);
  r.probed_predicted_step_ns = Ns(round.probed_ms);
  r.run_costs_predicted_step_ns = Ns(round.run_costs_ms);
  r.attempts = round.attempts;
  r.speed_drifts = {1.0 + 0.01 * round.attempts};
  return r;
}

// Three rounds of a drifting machine: each figure is its own median, the
// step error the median of the three errors (-20 %, +0 %, -5 %: -5 %), not
// the error of the median times; the fastest and slowest steps are those of
// any round; the runs add up.
TEST(MedianOverRounds, TakesEachFiguresMedianOverTheRounds) {
  const std::vector<CycleResult> rounds = {
      Make({8, 10, 9, 14, 4, 1, 3, 0.30, 3.5, 9.5, 9.9, 3}),
      Make({10, 10, 9.5, 11, 4, 2, 2, 0.40, 2.2, 10.1, 10.0, 1}),
      Make({9.5, 10, 8, 12, 4, 3, 1, 0.35, 1.0, 0, 10.2, 2}),
  };
  const RoundsMedian m = MedianOverRounds(rounds);
  EXPECT_EQ(m.rounds, 3);
  EXPECT_DOUBLE_EQ(m.predicted_ms, 9.5);
  EXPECT_DOUBLE_EQ(m.measured_ms, 10);
  EXPECT_NEAR(m.error, -0.05, 1e-12);
  EXPECT_DOUBLE_EQ(m.measured_min_ms, 8);
  EXPECT_DOUBLE_EQ(m.measured_max_ms, 14);
  EXPECT_NEAR(m.predicted.overlap, 0.5, 1e-12);  // 1/4, 2/4, 3/4
  EXPECT_EQ(m.predicted.exposed_ns, Ns(2));
  EXPECT_NEAR(m.measured.overlap, 0.35, 1e-12);
  EXPECT_EQ(m.measured.exposed_ns, Ns(2.2));
  // The third round made no probed prediction: the median of the other two
  // (the upper middle value of an even count).
  EXPECT_TRUE(m.has_probed);
  EXPECT_DOUBLE_EQ(m.probed_ms, 10.1);
  EXPECT_NEAR(m.probed_error, 0.01, 1e-12);
  EXPECT_TRUE(m.has_run_costs);
  EXPECT_DOUBLE_EQ(m.run_costs_ms, 10.0);
  EXPECT_NEAR(m.run_costs_error, 0.0, 1e-12);
  EXPECT_EQ(m.runs, 6);
  EXPECT_NEAR(m.largest_drift, 0.03, 1e-12);
  // Measured overlaps 30, 40, 35 % all lie within 5 points of their median;
  // exposed 3.5 and 1.0 ms lie 1.3 and 1.2 ms from theirs, 2.2 ms, whose
  // target is 0.22 ms.
  EXPECT_TRUE(m.rounds_agree.overlap_ok);
  EXPECT_FALSE(m.rounds_agree.exposed_ok);
}

// Rounds agree when each one's measured breakdown would meet the targets as
// a prediction of their median: 0.1 ms or 10 %, whichever is larger.
TEST(MedianOverRounds, SaysWhetherTheRoundsMeasurementsAgreeWithinTheTargets) {
  const RoundsMedian agree = MedianOverRounds({
      Make({8, 10, 9, 11, 4, 1, 3, 0.30, 2.0, 0, 0, 1}),
      Make({8, 10, 9, 11, 4, 1, 3, 0.34, 2.2, 0, 0, 1}),
      Make({8, 10, 9, 11, 4, 1, 3, 0.38, 2.4, 0, 0, 1}),
  });
  EXPECT_TRUE(agree.rounds_agree.overlap_ok);
  EXPECT_TRUE(agree.rounds_agree.exposed_ok);
  const RoundsMedian apart = MedianOverRounds({
      Make({8, 10, 9, 11, 4, 1, 3, 0.30, 0.05, 0, 0, 1}),
      Make({8, 10, 9, 11, 4, 1, 3, 0.40, 0.12, 0, 0, 1}),
      Make({8, 10, 9, 11, 4, 1, 3, 0.41, 0.20, 0, 0, 1}),
  });
  EXPECT_FALSE(apart.rounds_agree.overlap_ok);  // 30 % is 10 points from 40 %
  EXPECT_TRUE(apart.rounds_agree.exposed_ok);   // within 0.1 ms of 0.12 ms
}

// The predictions again from the runs: their breakdowns' medians over the
// rounds that made them, a round without one left out.
TEST(MedianOverRounds, TakesThePredictionsAgainBreakdownsOverTheRoundsThatMadeThem) {
  std::vector<CycleResult> rounds = {
      Make({8, 10, 9, 14, 4, 1, 3, 0.30, 3.5, 9.5, 9.9, 1}),
      Make({10, 10, 9.5, 11, 4, 2, 2, 0.40, 2.2, 10.1, 10.0, 1}),
      Make({9.5, 10, 8, 12, 4, 3, 1, 0.35, 1.0, 0, 10.2, 1}),
  };
  const double probed_overlaps[] = {0.2, 0.6, 0.99};  // the third made no probed prediction
  const double run_costs_overlaps[] = {0.5, 0.3, 0.4};
  for (int i = 0; i < 3; ++i) {
    rounds[i].probed_breakdown = {probed_overlaps[i], Ns(1 + i)};
    rounds[i].run_costs_breakdown = {run_costs_overlaps[i], Ns(3 - i)};
  }
  const RoundsMedian m = MedianOverRounds(rounds);
  EXPECT_NEAR(m.probed.overlap, 0.6, 1e-12);  // of 0.2 and 0.6, the upper
  EXPECT_EQ(m.probed.exposed_ns, Ns(2));
  EXPECT_NEAR(m.run_costs.overlap, 0.4, 1e-12);
  EXPECT_EQ(m.run_costs.exposed_ns, Ns(2));
}

// One round reports that round's figures as they are.
TEST(MedianOverRounds, OfOneRoundIsThatRound) {
  const RoundsMedian m = MedianOverRounds({Make({7, 8, 7.5, 9, 2, 1, 1, 0.6, 0.9, 0, 0, 1})});
  EXPECT_EQ(m.rounds, 1);
  EXPECT_DOUBLE_EQ(m.predicted_ms, 7);
  EXPECT_DOUBLE_EQ(m.measured_ms, 8);
  EXPECT_NEAR(m.error, -0.125, 1e-12);
  EXPECT_DOUBLE_EQ(m.measured_min_ms, 7.5);
  EXPECT_DOUBLE_EQ(m.measured_max_ms, 9);
  EXPECT_NEAR(m.predicted.overlap, 0.5, 1e-12);
  EXPECT_NEAR(m.measured.overlap, 0.6, 1e-12);
  EXPECT_FALSE(m.has_probed);  // a GPU run: no probe, no CPU times
  EXPECT_FALSE(m.has_run_costs);
  EXPECT_EQ(m.runs, 1);
  EXPECT_TRUE(m.rounds_agree.overlap_ok);
  EXPECT_TRUE(m.rounds_agree.exposed_ok);
}

TEST(RoundLabel, KeepsTheFirstRoundWhereASingleRunPutsIt) {
  EXPECT_EQ(RoundLabel("zo2_balanced", 1), "zo2_balanced");
  EXPECT_EQ(RoundLabel("zo2_balanced", 3), "zo2_balanced/round3");
}

}  // namespace
}  // namespace zosched
