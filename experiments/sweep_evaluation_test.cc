#include "experiments/sweep_evaluation.h"

#include <string>
#include <vector>

#include "base/textproto.h"
#include "gtest/gtest.h"
#include "schedule/lowering.h"
#include "sim/simulator.h"

namespace zosched {
namespace {

SweepSpace Space(Objective objective) {
  Sweep sweep;
  const absl::Status parsed = ParseTextProto(R"pb(
    name: "test"
    models: [ "opt-125m", "opt-1.3b" ]
    batch: 8
    seq_len: 256
    clusters { base: "h100_sxm_x2" price_per_gpu_hour: 3 device_memory_gib: [ 80, 4 ] }
    strategies { kind: MEZO }
    strategies { kind: ZO2 block_slots: [ 2, 3 ] }
    strategies { kind: DISTZO2 slicing: [ true, false ] }
    strategies { kind: DDP }
    best: 3
  )pb",
                                             "test.pbtxt", &sweep);
  EXPECT_TRUE(parsed.ok()) << parsed;
  sweep.set_objective(objective);
  absl::StatusOr<SweepSpace> space = ExpandSweep(sweep, "test.pbtxt");
  EXPECT_TRUE(space.ok()) << space.status();
  return *space;
}

std::vector<ConfigResult> Evaluate(const SweepSpace& space, int threads, bool prune) {
  EvaluationOptions options;
  options.threads = threads;
  options.prune = prune;
  return EvaluateSweep(space, options);
}

// Threads change how fast, never what: the same results in the same order.
TEST(SweepEvaluationTest, ThreadsGiveTheSameResults) {
  const SweepSpace space = Space(TOKENS_PER_S);
  const std::vector<ConfigResult> one = Evaluate(space, 1, false);
  const std::vector<ConfigResult> four = Evaluate(space, 4, false);
  ASSERT_EQ(one.size(), space.configs.size());
  ASSERT_EQ(four.size(), one.size());
  int fits = 0, too_big = 0;
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].state, four[i].state) << i;
    EXPECT_EQ(one[i].step_ms, four[i].step_ms) << i;
    EXPECT_EQ(one[i].reason, four[i].reason) << i;
    fits += one[i].state == ConfigState::kFits;
    too_big += one[i].state == ConfigState::kDoesNotFit;
  }
  EXPECT_GT(fits, 10);
  EXPECT_GT(too_big, 0);  // OPT-1.3B MeZO on 4 GiB
}

// The step of `schedule` simulated by hand, in ms.
double StepMs(const Schedule& schedule) {
  absl::StatusOr<SimResult> sim = Simulate(schedule);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return (sim->timeline.steps(0).end_ns() - sim->timeline.steps(0).start_ns()) / 1e6;
}

// A row agrees with lowering and simulating the configuration by hand:
// under its kernel-level profile (ZO: zosched_cuda; DDP: pytorch_first_order)
// for the step, at the roofline for its floor; the pruning bound is below
// both.
TEST(SweepEvaluationTest, ResultIsTheSimulatedStepAndItsFloor) {
  const SweepSpace space = Space(TOKENS_PER_S);
  const std::vector<ConfigResult> results = Evaluate(space, 2, false);
  int checked = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].state != ConfigState::kFits) continue;
    const SweepConfig& c = space.configs[i];
    EXPECT_EQ(c.profile, c.options.strategy == DDP ? PYTORCH_FIRST_ORDER : ZOSCHED_CUDA);
    absl::StatusOr<Schedule> s =
        LowerSchedule(space.models[c.model], space.members[c.member].cluster, c.options);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_DOUBLE_EQ(results[i].roofline_step_ms, StepMs(*s)) << StrategyLabel(c);
    s->set_compute_profile(c.profile);
    EXPECT_DOUBLE_EQ(results[i].step_ms, StepMs(*s)) << StrategyLabel(c);
    EXPECT_GT(results[i].step_ms, results[i].roofline_step_ms) << StrategyLabel(c);
    EXPECT_LE(results[i].floor_ms, results[i].step_ms) << StrategyLabel(c);
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

// Under a sweep's roofline profile the step is its own floor.
TEST(SweepEvaluationTest, AtTheRooflineTheStepIsItsFloor) {
  SweepSpace space = Space(TOKENS_PER_S);
  for (SweepConfig& c : space.configs) c.profile = ROOFLINE;
  const std::vector<ConfigResult> results = Evaluate(space, 2, false);
  for (const ConfigResult& r : results) {
    if (r.state != ConfigState::kFits) continue;
    EXPECT_EQ(r.step_ms, r.roofline_step_ms);
    EXPECT_LE(r.floor_ms, r.step_ms);
  }
}

// Pruning skips simulations but never changes the best, for every objective.
TEST(SweepEvaluationTest, PruningKeepsTheBest) {
  for (Objective objective : {STEP_TIME, TOKENS_PER_S, TOKENS_PER_DOLLAR, MEMORY_HEADROOM}) {
    SCOPED_TRACE(Objective_Name(objective));
    const SweepSpace space = Space(objective);
    const std::vector<ConfigResult> full = Evaluate(space, 2, false);
    const std::vector<ConfigResult> pruned = Evaluate(space, 2, true);
    EXPECT_EQ(RankConfigs(full, 3), RankConfigs(pruned, 3));
    int skipped = 0;
    for (const ConfigResult& r : pruned) skipped += r.state == ConfigState::kPruned;
    if (objective != MEMORY_HEADROOM) {
      EXPECT_GT(skipped, 0);
    }
  }
}

// A configuration that fits but misses the constraints says which, with
// the figures, in its reason (configurations.csv and best.md show it);
// pruned, it says the same.
TEST(SweepEvaluationTest, ReasonsNameTheConstraintsMissed) {
  SweepSpace space = Space(TOKENS_PER_S);
  space.sweep.mutable_constraints()->set_max_gpus(1);
  space.sweep.mutable_constraints()->set_min_tokens_per_s(1e12);
  for (bool prune : {false, true}) {
    SCOPED_TRACE(prune ? "pruned" : "simulated");
    const std::vector<ConfigResult> results = Evaluate(space, 2, prune);
    int two_gpus = 0;
    for (size_t i = 0; i < results.size(); ++i) {
      const ConfigResult& r = results[i];
      if (r.state != ConfigState::kFits && r.state != ConfigState::kPruned) continue;
      EXPECT_FALSE(r.meets_constraints) << i;
      const std::string expected_start =
          prune ? "pruned: misses the constraints: " : "misses the constraints: ";
      EXPECT_EQ(r.reason.rfind(expected_start, 0), 0u) << r.reason;
      if (space.configs[i].gpus == 2) {
        ++two_gpus;
        EXPECT_NE(r.reason.find("2 GPUs above max_gpus 1"), std::string::npos) << r.reason;
      }
      EXPECT_NE(r.reason.find("below min_tokens_per_s 1e+12"), std::string::npos) << r.reason;
    }
    EXPECT_GT(two_gpus, 0);
    EXPECT_TRUE(RankConfigs(results, 3).empty());
  }
}

// Ranking: best score first, ties in configuration order, only what fits.
TEST(SweepEvaluationTest, RankingOrdersByScoreThenIndex) {
  std::vector<ConfigResult> results(5);
  const double scores[] = {2, 5, 5, 9, 7};
  for (int i = 0; i < 5; ++i) {
    results[i].state = ConfigState::kFits;
    results[i].meets_constraints = true;
    results[i].score = scores[i];
  }
  results[3].meets_constraints = false;
  results[4].state = ConfigState::kPruned;
  EXPECT_EQ(RankConfigs(results, 10), (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(RankConfigs(results, 1), (std::vector<int>{1}));
}

}  // namespace
}  // namespace zosched
