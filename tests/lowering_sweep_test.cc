// Every strategy lowers for every zoo model on every catalog cluster where it
// fits; where it does not, the error is a memory shortfall that names the
// device or host and by how much.
#include <map>

#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"
#include "schedule/sweep_variants.h"

namespace zosched {
namespace {

TEST(LoweringSweep, EveryStrategyModelAndClusterLowersOrNamesTheShortfall) {
  std::map<std::string, int> lowered, too_big;
  for (const std::string& cluster_name : CatalogClusterNames()) {
    absl::StatusOr<Cluster> cluster = LoadCluster(cluster_name);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    for (const std::string& model_name : ZooModelNames()) {
      absl::StatusOr<ModelSpec> model = LoadModelSpec(model_name);
      ASSERT_TRUE(model.ok()) << model.status();
      for (const SweepVariant& v : SweepVariants(cluster->devices_size(), *model)) {
        absl::StatusOr<Schedule> s = LowerSchedule(*model, *cluster, v.options);
        const std::string what = v.label + " " + model_name + " on " + cluster_name;
        if (s.ok()) {
          ++lowered[v.label];
          continue;
        }
        ASSERT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted)
            << what << ": " << s.status();
        EXPECT_NE(s.status().message().find("over by"), std::string::npos)
            << what << ": " << s.status();
        ++too_big[v.label];
      }
    }
  }
  // The sweep is not vacuous: every strategy lowered somewhere.
  for (const char* label : {"mezo", "zo2", "distzo2 P1 sliced", "distzo2 P2 sliced",
                            "distzo2 P2 naive"}) {
    EXPECT_GT(lowered[label], 0) << label;
  }
  EXPECT_GT(too_big["mezo"], 0);  // OPT-175B does not fit one GPU
}

}  // namespace
}  // namespace zosched
