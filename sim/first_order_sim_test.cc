// The simulator on first-order schedules (GPT-2 Large on 2x H100 SXM with
// NVLink): communication overlaps the backward pass as DDP's buckets and
// FSDP's prefetch make it, and the step metrics add up.
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"
#include "schedule/timeline_metrics.h"
#include "schedule/training_settings.h"
#include "sim/simulator.h"

namespace zosched {
namespace {

struct Simulation {
  Schedule schedule;
  SimResult result;
  // Device 0's op intervals by op name.
  std::map<std::string, OpInterval> by_name;
};

Simulation Simulated(StrategyKind kind, int micro) {
  LowerOptions o;
  o.strategy = kind;
  o.dp = kind == SINGLE_DEVICE ? 1 : 2;
  o.training = DefaultTrainingSettings();
  o.training.set_batch_size(32);
  o.training.set_micro_batch_size(micro);
  o.training.set_seq_len(1024);
  Simulation run;
  absl::StatusOr<Schedule> s =
      LowerSchedule(*LoadModelSpec("gpt2-large"), *LoadCluster("h100_sxm_x2"), o);
  EXPECT_TRUE(s.ok()) << s.status();
  run.schedule = *s;
  absl::StatusOr<SimResult> r = Simulate(run.schedule);
  EXPECT_TRUE(r.ok()) << r.status();
  run.result = *r;
  std::map<int64_t, const Op*> ops;
  for (const Op& op : run.schedule.ops()) ops[op.id()] = &op;
  for (const OpInterval& i : run.result.timeline.ops()) {
    if (i.device() == 0) run.by_name[ops[i.op_id()]->name()] = i;
  }
  return run;
}

// DDP with 2 micro-batches: nothing is reduced before the last micro-batch's
// backward starts (no_sync), and the buckets' all-reduces run under it:
// all but two end before it does: block 0's and the embedding's, whose
// gradients come last, with only the short embedding backward after them.
TEST(FirstOrderSimTest, DdpAllReducesOverlapTheLastBackward) {
  const Simulation run = Simulated(DDP, 8);
  const int64_t backward_start = run.by_name.at("head backward mb 1").start_ns();
  const int64_t backward_end = run.by_name.at("embed backward mb 1").end_ns();
  int under_backward = 0, all_reduces = 0;
  for (const auto& [name, interval] : run.by_name) {
    if (!absl::StartsWith(name, "all-reduce")) continue;
    ++all_reduces;
    EXPECT_GE(interval.start_ns(), backward_start) << name;
    under_backward += interval.end_ns() <= backward_end;
  }
  EXPECT_EQ(all_reduces, 37);
  EXPECT_EQ(under_backward, 35);
  const StepMetrics m = *ComputeStepMetrics(run.schedule, run.result.timeline, 0);
  EXPECT_GT(m.devices[0].overlap, 0.8);
  EXPECT_GT(m.devices[0].exposed_comm_ns, 0);  // the embedding's bucket
}

// FSDP FULL_SHARD prefetches: each block's all-gather for its forward starts
// before the previous block's forward ends, and for its backward before the
// next block's backward ends.
TEST(FirstOrderSimTest, ZeroThreePrefetchesTheNextBlock) {
  const Simulation run = Simulated(ZERO_3, 16);
  for (int b = 1; b < 36; ++b) {
    EXPECT_LT(run.by_name.at("all-gather block " + std::to_string(b) + " fwd").start_ns(),
              run.by_name.at("fwd block " + std::to_string(b - 1)).end_ns())
        << b;
  }
  for (int b = 0; b < 35; ++b) {
    EXPECT_LT(run.by_name.at("all-gather block " + std::to_string(b) + " bwd").start_ns(),
              run.by_name.at("bwd block " + std::to_string(b + 1)).end_ns())
        << b;
  }
}

// One device with 4 accumulation steps: nothing to communicate, so the step
// is its compute ops back to back, each its roofline time alone.
TEST(FirstOrderSimTest, OneDeviceStepIsItsComputeBackToBack) {
  const Simulation run = Simulated(SINGLE_DEVICE, 8);
  const StepMetrics m = *ComputeStepMetrics(run.schedule, run.result.timeline, 0);
  EXPECT_EQ(m.devices[0].comm_ns, 0);
  EXPECT_EQ(m.devices[0].idle_ns, 0);
  EXPECT_DOUBLE_EQ(m.devices[0].compute_efficiency, 1.0);
  int64_t sum = 0;
  for (const OpInterval& i : run.result.timeline.ops()) sum += i.end_ns() - i.start_ns();
  EXPECT_EQ(sum, m.step_ns);
  EXPECT_EQ(run.by_name.count("bwd block 0 mb 3"), 1u);  // 32 examples in micro-batches of 8
}

// Per device: the step is compute, exposed communication and idle time;
// compute efficiency is compute over the step.
TEST(FirstOrderSimTest, StepIsComputeExposedAndIdle) {
  for (StrategyKind kind : {DDP, ZERO_1, ZERO_2, ZERO_3}) {
    const Simulation run = Simulated(kind, 8);
    const StepMetrics m = *ComputeStepMetrics(run.schedule, run.result.timeline, 0);
    for (const DeviceMetrics& d : m.devices) {
      EXPECT_EQ(d.compute_ns + d.exposed_comm_ns + d.idle_ns, m.step_ns) << StrategyKind_Name(kind);
      EXPECT_DOUBLE_EQ(d.compute_efficiency, static_cast<double>(d.compute_ns) / m.step_ns);
      EXPECT_GT(d.comm_ns, 0);
    }
  }
}

}  // namespace
}  // namespace zosched
