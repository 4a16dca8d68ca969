// Every strategy lowers for every zoo model on every catalog cluster where it
// fits; where it does not, the error is a memory shortfall that names the
// device or host and by how much.
#include <algorithm>
#include <map>

#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"

namespace zosched {
namespace {

struct Variant {
  std::string label;
  LowerOptions options;
};

// The strategies to try on a cluster with `n` devices.
std::vector<Variant> Variants(int n) {
  std::vector<Variant> variants;
  LowerOptions base;
  base.training = DefaultTrainingSettings();
  base.training.set_batch_size(2 * n);  // divisible by every D below
  base.strategy = MEZO;
  variants.push_back({"mezo", base});
  base.strategy = ZO2;
  variants.push_back({"zo2", base});
  if (n >= 2) {
    base.strategy = DISTZO2;
    base.pertp = 1;
    base.dp = n;
    variants.push_back({"distzo2 P1 sliced", base});
    if (n % 2 == 0) {
      base.pertp = 2;
      base.dp = n / 2;
      variants.push_back({"distzo2 P2 sliced", base});
      base.slicing = false;
      variants.push_back({"distzo2 P2 naive", base});
    }
  }
  return variants;
}

TEST(LoweringSweep, EveryStrategyModelAndClusterLowersOrNamesTheShortfall) {
  std::map<std::string, int> lowered, too_big;
  for (const std::string& cluster_name : CatalogClusterNames()) {
    absl::StatusOr<Cluster> cluster = LoadCluster(cluster_name);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    for (const std::string& model_name : ZooModelNames()) {
      absl::StatusOr<ModelSpec> model = LoadModelSpec(model_name);
      ASSERT_TRUE(model.ok()) << model.status();
      for (Variant& v : Variants(cluster->devices_size())) {
        v.options.training.set_seq_len(std::min<int64_t>(2048, model->max_positions()));
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
