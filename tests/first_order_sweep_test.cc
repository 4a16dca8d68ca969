// Every first-order strategy lowers for every zoo model on every catalog
// cluster where it fits, and simulates; where it does not fit, the error is
// a memory shortfall naming the device and by how much. One example per
// device per step, activations recomputed: the most frugal configuration.
#include <map>

#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"
#include "schedule/training_settings.h"
#include "sim/simulator.h"

namespace zosched {
namespace {

TEST(FirstOrderSweep, EveryStrategyModelAndClusterLowersOrNamesTheShortfall) {
  std::map<StrategyKind, int> simulated, too_big;
  for (const std::string& cluster_name : CatalogClusterNames()) {
    absl::StatusOr<Cluster> cluster = LoadCluster(cluster_name);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    const int n = cluster->devices_size();
    for (const std::string& model_name : ZooModelNames()) {
      absl::StatusOr<ModelSpec> model = LoadModelSpec(model_name);
      ASSERT_TRUE(model.ok()) << model.status();
      for (StrategyKind kind : {SINGLE_DEVICE, DDP, ZERO_1, ZERO_2, ZERO_3}) {
        LowerOptions o;
        o.strategy = kind;
        o.dp = kind == SINGLE_DEVICE ? 1 : n;
        o.recompute = true;
        o.precision = kind == ZERO_3 ? BF16_FP32_GRADS : AMP_FP32_MASTER;
        o.training = DefaultTrainingSettings();
        o.training.set_batch_size(o.dp);
        o.training.set_micro_batch_size(1);
        o.training.set_seq_len(std::min<int64_t>(1024, model->max_positions()));
        const std::string what = StrategyKind_Name(kind) + " " + model_name + " on " + cluster_name;
        absl::StatusOr<Schedule> s = LowerSchedule(*model, *cluster, o);
        if (!s.ok()) {
          ASSERT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted)
              << what << ": " << s.status();
          EXPECT_NE(s.status().message().find("over by"), std::string::npos) << what;
          ++too_big[kind];
          continue;
        }
        absl::StatusOr<SimResult> r = Simulate(*s);
        ASSERT_TRUE(r.ok()) << what << ": " << r.status();
        ++simulated[kind];
      }
    }
  }
  for (StrategyKind kind : {SINGLE_DEVICE, DDP, ZERO_1, ZERO_2, ZERO_3}) {
    EXPECT_GT(simulated[kind], 0) << StrategyKind_Name(kind);
  }
  EXPECT_GT(too_big[DDP], 0);  // OPT-175B's 2.8 TB of model state fits no GPU
}

}  // namespace
}  // namespace zosched
