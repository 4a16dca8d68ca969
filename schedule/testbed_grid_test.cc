#include "schedule/testbed_grid.h"

#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"

namespace zosched {
namespace {

TEST(TestbedGridTest, ZO2ThenEachDistZO2GridSlicedThenNaive) {
  std::vector<std::string> names;
  for (const StrategyGrid& g : TestbedGrids()) names.push_back(GridSchemeName(g));
  EXPECT_EQ(names, (std::vector<std::string>{"zo2", "distzo2_P2xD1_sliced", "distzo2_P2xD1_naive",
                                             "distzo2_P1xD2_sliced", "distzo2_P1xD2_naive",
                                             "distzo2_P2xD2_sliced", "distzo2_P2xD2_naive"}));
}

TEST(TestbedGridTest, EveryGridLowersOnTheTestbed) {
  const absl::StatusOr<ModelSpec> model = LoadModelSpec("opt-tiny");
  const absl::StatusOr<Cluster> cluster = LoadCluster("local_cpu");
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  for (const StrategyGrid& g : TestbedGrids()) {
    LowerOptions o = GridLowerOptions(g);
    o.training.set_batch_size(16);
    o.training.set_seq_len(32);
    o.training.set_compute_dtype(FP32);
    o.training.set_host_dtype(FP32);
    const absl::StatusOr<Schedule> s = LowerSchedule(*model, *cluster, o);
    ASSERT_TRUE(s.ok()) << GridSchemeName(g) << ": " << s.status();
    EXPECT_EQ(s->devices_size(), g.pertp * g.dp) << GridSchemeName(g);
  }
}

}  // namespace
}  // namespace zosched
