#include "tests/catalog_lowerings.h"

#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"

namespace zosched {

void ForEachCatalogLowering(absl::FunctionRef<void(const CatalogLowering&)> visit) {
  for (const std::string& cluster_name : CatalogClusterNames()) {
    absl::StatusOr<Cluster> cluster = LoadCluster(cluster_name);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    for (const std::string& model_name : ZooModelNames()) {
      absl::StatusOr<ModelSpec> model = LoadModelSpec(model_name);
      ASSERT_TRUE(model.ok()) << model.status();
      for (const SweepVariant& v : SweepVariants(cluster->devices_size(), *model)) {
        const absl::StatusOr<Schedule> s = LowerSchedule(*model, *cluster, v.options);
        visit({v.label + " " + model_name + " on " + cluster_name, v, s});
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

}  // namespace zosched
