#include "sim/roofline_floor.h"

#include <string>

#include "absl/status/status.h"

#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/compute_profile_fit.h"
#include "schedule/lowering.h"
#include "schedule/training_settings.h"
#include "sim/step_floor.h"

namespace zosched {
namespace {

Schedule Lower(const std::string& model, const std::string& cluster, StrategyKind strategy,
               int dp, ComputeProfile profile) {
  LowerOptions options;
  options.strategy = strategy;
  options.dp = dp;
  options.training = DefaultTrainingSettings();
  options.training.set_seq_len(512);
  absl::StatusOr<Schedule> s =
      LowerSchedule(*LoadModelSpec(model), *LoadCluster(cluster), options);
  EXPECT_TRUE(s.ok()) << s.status();
  s->set_compute_profile(profile);
  return *s;
}

int64_t StepNs(const Schedule& schedule) {
  absl::StatusOr<SimResult> r = Simulate(schedule);
  EXPECT_TRUE(r.ok()) << r.status();
  absl::StatusOr<StepMetrics> m = ComputeStepMetrics(schedule, r->timeline, 0);
  EXPECT_TRUE(m.ok()) << m.status();
  return m->step_ns;
}

// CheckProfileRuns restates the kernel plans' refusals: it agrees with the
// simulator, which asks the plans, over every profile on small schedules of
// each kind of configuration.
TEST(RooflineFloorTest, CheckProfileRunsAgreesWithTheKernelPlans) {
  struct Case {
    std::string model;
    StrategyKind strategy;
    int pertp, dp;
    PrecisionRecipe precision;
    bool recompute;
  };
  const Case cases[] = {
      {"opt-125m", MEZO, 1, 1, AMP_FP32_MASTER, false},
      {"opt-125m", ZO2, 1, 1, AMP_FP32_MASTER, false},
      {"opt-125m", DISTZO2, 2, 1, AMP_FP32_MASTER, false},
      {"llama-tiny", ZO2, 1, 1, AMP_FP32_MASTER, false},
      {"opt-125m", DDP, 1, 2, AMP_FP32_MASTER, false},
      {"opt-125m", DDP, 1, 2, AMP_FP32_MASTER, true},
      {"opt-125m", ZERO_2, 1, 2, BF16_FP32_GRADS, false},
      {"llama-tiny", DDP, 1, 2, AMP_FP32_MASTER, false},
  };
  for (const Case& c : cases) {
    LowerOptions options;
    options.strategy = c.strategy;
    options.pertp = c.pertp;
    options.dp = c.dp;
    options.precision = c.precision;
    options.recompute = c.recompute;
    options.training = DefaultTrainingSettings();
    options.training.set_batch_size(4);
    options.training.set_seq_len(64);  // llama-tiny's positions
    const ModelSpec model = *LoadModelSpec(c.model);
    absl::StatusOr<Schedule> lowered =
        LowerSchedule(model, *LoadCluster("h100_sxm_x2"), options);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    ProfiledConfig config;
    config.strategy = c.strategy;
    config.precision = c.precision;
    config.recompute = c.recompute;
    config.family = model.family();
    for (ComputeProfile profile :
         {ROOFLINE, ZOSCHED_CUDA, PYTORCH_MEZO, PYTORCH_ZO2, PYTORCH_FIRST_ORDER,
          MEGATRON_FIRST_ORDER}) {
      Schedule s = *lowered;
      s.set_compute_profile(profile);
      const absl::StatusOr<SimResult> simulated = Simulate(s);
      EXPECT_EQ(CheckProfileRuns(profile, config).ok(), simulated.ok())
          << c.model << " " << StrategyKind_Name(c.strategy) << " "
          << PrecisionRecipe_Name(c.precision) << (c.recompute ? " recompute" : "") << " under "
          << ComputeProfile_Name(profile) << ": "
          << (simulated.ok() ? "simulates" : simulated.status().ToString());
    }
  }
}

// The floor is the step `simulate` gives the same schedule at the roofline;
// the prediction is the step under the schedule's own profile, and the
// schedule keeps its profile.
TEST(RooflineFloorTest, FloorIsTheSameScheduleAtTheRoofline) {
  for (Schedule s : {Lower("opt-1.3b", "h100_sxm_x1", ZO2, 1, ZOSCHED_CUDA),
                     Lower("opt-1.3b", "hgx_h100", DDP, 4, PYTORCH_FIRST_ORDER)}) {
    Schedule roofline = s;
    roofline.set_compute_profile(ROOFLINE);
    Simulator simulator;
    SimResult result;
    absl::StatusOr<StepWithFloor> step = SimulateWithFloor(&s, simulator, &result);
    ASSERT_TRUE(step.ok()) << step.status();
    EXPECT_NE(s.compute_profile(), ROOFLINE);
    EXPECT_EQ(step->floor_ns, StepNs(roofline));
    EXPECT_EQ(step->metrics.step_ns, StepNs(s));
    EXPECT_GT(step->metrics.step_ns, step->floor_ns) << s.name();
    // `result` holds the prediction, not the floor.
    absl::StatusOr<StepMetrics> m = ComputeStepMetrics(s, result.timeline, 0);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m->step_ns, step->metrics.step_ns);
    // The one-off form agrees.
    absl::StatusOr<StepWithFloor> again = SimulateWithFloor(s, &result);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->floor_ns, step->floor_ns);
    EXPECT_EQ(again->metrics.step_ns, step->metrics.step_ns);
  }
}

TEST(RooflineFloorTest, ARooflineScheduleIsItsOwnFloor) {
  const Schedule s = Lower("opt-1.3b", "dgx_a100", ZO2, 1, ROOFLINE);
  SimResult result;
  absl::StatusOr<StepWithFloor> step = SimulateWithFloor(s, &result);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->floor_ns, step->metrics.step_ns);
  EXPECT_EQ(step->floor_ns, StepNs(s));
}

// A profile that does not run the schedule fails the simulation (after the
// floor), and the schedule keeps its own profile.
TEST(RooflineFloorTest, AnErrorLeavesTheProfile) {
  Schedule s = Lower("opt-1.3b", "h100_sxm_x1", ZO2, 1, PYTORCH_FIRST_ORDER);
  Simulator simulator;
  SimResult result;
  absl::StatusOr<StepWithFloor> step = SimulateWithFloor(&s, simulator, &result);
  ASSERT_FALSE(step.ok());
  EXPECT_NE(step.status().message().find("ZO kind"), std::string::npos) << step.status();
  EXPECT_EQ(s.compute_profile(), PYTORCH_FIRST_ORDER);
}

// The explorer prunes with sim/step_floor.h under the schedule's own
// profile: a bound of the kernel-level step too.
TEST(RooflineFloorTest, TheStepFloorBoundsTheKernelLevelStep) {
  for (const Schedule& s : {Lower("opt-1.3b", "h100_sxm_x1", MEZO, 1, ZOSCHED_CUDA),
                            Lower("opt-13b", "dgx_a100", ZO2, 1, ZOSCHED_CUDA),
                            Lower("opt-1.3b", "hgx_h100", DDP, 8, PYTORCH_FIRST_ORDER),
                            Lower("opt-1.3b", "hgx_h100", ZERO_3, 8, PYTORCH_FIRST_ORDER)}) {
    absl::StatusOr<int64_t> floor = StepFloorNs(s);
    ASSERT_TRUE(floor.ok()) << floor.status();
    EXPECT_GT(*floor, 0);
    EXPECT_LE(*floor, StepNs(s)) << s.name();
  }
}

}  // namespace
}  // namespace zosched
