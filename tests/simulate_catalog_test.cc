// `simulate` works on every schedule `lower` produces for the catalog: every
// strategy, every zoo model, every catalog cluster where the plan fits.
#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/sweep_variants.h"
#include "sim/simulator.h"

namespace zosched {
namespace {

TEST(SimulateCatalog, EveryLoweredScheduleSimulates) {
  int simulated = 0;
  for (const std::string& cluster_name : CatalogClusterNames()) {
    absl::StatusOr<Cluster> cluster = LoadCluster(cluster_name);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    for (const std::string& model_name : ZooModelNames()) {
      absl::StatusOr<ModelSpec> model = LoadModelSpec(model_name);
      ASSERT_TRUE(model.ok()) << model.status();
      for (const SweepVariant& v : SweepVariants(cluster->devices_size(), *model)) {
        absl::StatusOr<Schedule> s = LowerSchedule(*model, *cluster, v.options);
        if (!s.ok()) continue;  // does not fit: lowering_sweep_test checks the error
        const std::string what = v.label + " " + model_name + " on " + cluster_name;
        absl::StatusOr<SimResult> r = Simulate(*s);
        ASSERT_TRUE(r.ok()) << what << ": " << r.status();
        ASSERT_EQ(r->timeline.ops_size(), s->ops_size()) << what;
        const int64_t step_ns = r->timeline.steps(0).end_ns();
        EXPECT_GT(step_ns, 0) << what;
        for (const OpInterval& o : r->timeline.ops()) {
          ASSERT_LE(0, o.start_ns()) << what;
          ASSERT_LE(o.start_ns(), o.end_ns()) << what;
          ASSERT_LE(o.end_ns(), step_ns) << what;
        }
        ++simulated;
      }
    }
  }
  EXPECT_GT(simulated, 100);
}

}  // namespace
}  // namespace zosched
