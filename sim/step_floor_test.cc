#include "sim/step_floor.h"

#include <string>

#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"
#include "sim/simulator.h"

namespace zosched {
namespace {

struct Case {
  std::string model, cluster;
  StrategyKind strategy;
  int pertp, dp;
};

Schedule Lower(const Case& c) {
  LowerOptions options;
  options.strategy = c.strategy;
  options.pertp = c.pertp;
  options.dp = c.dp;
  options.training = DefaultTrainingSettings();
  options.training.set_seq_len(1024);
  absl::StatusOr<Schedule> s =
      LowerSchedule(*LoadModelSpec(c.model), *LoadCluster(c.cluster), options);
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

// The floor is a bound: no strategy's simulated step beats it.
TEST(StepFloorTest, NoSimulatedStepBeatsTheFloor) {
  for (const Case& c : {Case{"opt-1.3b", "h100_sxm_x1", MEZO, 1, 1},
                        Case{"opt-13b", "dgx_a100", ZO2, 1, 1},
                        Case{"opt-13b", "dgx_a100", DISTZO2, 2, 4},
                        Case{"opt-13b", "rtx4090_x8", DISTZO2, 1, 8},
                        Case{"opt-1.3b", "hgx_h100", DDP, 1, 8},
                        Case{"opt-13b", "hgx_h100", ZERO_3, 1, 8},
                        Case{"opt-125m", "local_cpu", DISTZO2, 2, 2}}) {
    SCOPED_TRACE(c.model + " on " + c.cluster + ", " + StrategyKind_Name(c.strategy));
    const Schedule schedule = Lower(c);
    absl::StatusOr<int64_t> floor = StepFloorNs(schedule);
    ASSERT_TRUE(floor.ok()) << floor.status();
    absl::StatusOr<SimResult> sim = Simulate(schedule);
    ASSERT_TRUE(sim.ok()) << sim.status();
    const int64_t step = sim->timeline.steps(0).end_ns() - sim->timeline.steps(0).start_ns();
    EXPECT_GT(*floor, 0);
    EXPECT_LE(*floor, step);
  }
}

// ZO2 of a large model over PCIe is bound by its host link: the floor comes
// within a few percent of the simulated step, so pruning has teeth.
TEST(StepFloorTest, HostLinkBoundZo2IsTight) {
  const Schedule schedule = Lower({"opt-66b", "h100_pcie_x4", ZO2, 1, 1});
  const int64_t floor = *StepFloorNs(schedule);
  const SimResult sim = *Simulate(schedule);
  const int64_t step = sim.timeline.steps(0).end_ns() - sim.timeline.steps(0).start_ns();
  EXPECT_GT(static_cast<double>(floor), 0.9 * static_cast<double>(step));
}

// A figure the cost model needs and the cluster lacks is an error, not 0.
TEST(StepFloorTest, MissingFigureIsAnError) {
  Schedule schedule = Lower({"opt-1.3b", "h100_sxm_x1", MEZO, 1, 1});
  for (Device& d : *schedule.mutable_cluster()->mutable_devices()) d.clear_peaks();
  EXPECT_FALSE(StepFloorNs(schedule).ok());
}

}  // namespace
}  // namespace zosched
