#include "schedule/cluster_lookup.h"

#include "gtest/gtest.h"
#include "schedule/cluster_catalog.h"

namespace zosched {
namespace {

TEST(ClusterLookup, FindDeviceAndFindHost) {
  absl::StatusOr<Cluster> loaded = LoadCluster("dgx_a100");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Cluster& cluster = *loaded;
  const Device* gpu3 = FindDevice(cluster, "gpu3");
  ASSERT_NE(gpu3, nullptr);
  EXPECT_EQ(gpu3->pcie_switch(), "pcie_sw1");
  EXPECT_EQ(FindDevice(cluster, "gpu8"), nullptr);
  EXPECT_EQ(DeviceIndex(cluster, "gpu3"), 3);
  EXPECT_EQ(DeviceIndex(cluster, "gpu8"), -1);
  const Host* host = FindHost(cluster, gpu3->host());
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->cores(), 128);
  EXPECT_EQ(FindHost(cluster, "nope"), nullptr);
}

}  // namespace
}  // namespace zosched
