#include "schedule/cluster_catalog.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>

#include "gtest/gtest.h"
#include "schedule/tiny_cluster_testdata.h"

namespace zosched {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

Cluster MustLoad(const std::string& name) {
  absl::StatusOr<Cluster> cluster = LoadCluster(name);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return cluster.ok() ? *cluster : Cluster();
}

// ------------------------------------------------------------ the catalog

TEST(Catalog, ListsTheExpectedClustersSorted) {
  EXPECT_EQ(CatalogClusterNames(),
            (std::vector<std::string>{"dgx_a100", "gb200_nvl72", "gh200",
                                      "h100_pcie_x4", "h100_sxm_x1", "h100_sxm_x2", "h200_x1", "hgx_h100",
                                      "local_cpu", "rtx4090_x8", "two_node_cpu"}));
}

TEST(Catalog, EveryFileLoadsValidatesAndIsNamedAfterItsFile) {
  for (const std::string& name : CatalogClusterNames()) {
    absl::StatusOr<Cluster> cluster = LoadCluster(name);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    EXPECT_EQ(cluster->name(), name);
    EXPECT_FALSE(cluster->description().empty()) << name;
    EXPECT_EQ(CatalogClusterPath(name), "clusters/" + name + ".pbtxt");
    EXPECT_TRUE(cluster->has_collectives()) << name;
    EXPECT_FALSE(cluster->collectives().source().empty()) << name;
  }
  EXPECT_EQ(CatalogClusterPath("dgx_h100"), "");
}

// Every GPU cluster carries NCCL 2.30.7's Simple-protocol constants.
TEST(Catalog, GpuClustersUseTheNcclConstants) {
  for (const std::string& name : CatalogClusterNames()) {
    const Cluster cluster = MustLoad(name);
    if (cluster.devices(0).shares_host_cores()) continue;  // the CPU testbed's
    const CollectiveModel& model = cluster.collectives();
    EXPECT_NE(model.source().find("NCCL 2.30.7"), std::string::npos) << name;
    EXPECT_DOUBLE_EQ(model.ring_base_latency_s(), 8.4e-6) << name;
    EXPECT_DOUBLE_EQ(model.tree_base_latency_s(), 8.4e-6) << name;
    std::map<LinkClass, std::pair<double, double>> steps;
    for (const CollectiveModel::StepLatency& step : model.step_latencies()) {
      steps[step.link_class()] = {step.ring_s(), step.tree_s()};
    }
    EXPECT_DOUBLE_EQ(steps[NVLINK].first, 3.4e-6) << name;
    EXPECT_DOUBLE_EQ(steps[NVLINK].second, 4.0e-6) << name;
    EXPECT_DOUBLE_EQ(steps[PCIE].first, 5.7e-6) << name;
    EXPECT_DOUBLE_EQ(steps[PCIE].second, 4.0e-6) << name;
    EXPECT_DOUBLE_EQ(steps[NETWORK].first, 14.0e-6) << name;
  }
}

TEST(Catalog, TheMeasuredH100MachineHoldsItsMeasuredFigures) {
  // ../shared/reference/h100_measured.md: 54 GB/s each way alone, 45 + 45
  // together; block GEMMs at about 0.75 of the FP32 peak, 0.72-0.73 of FP16
  // and BF16.
  const Cluster cluster = MustLoad("h100_sxm_x1");
  ASSERT_EQ(cluster.devices_size(), 1);
  const Device& gpu = cluster.devices(0);
  EXPECT_NEAR(gpu.host_link().down_gbps(), 54.4, 0.5);
  EXPECT_NEAR(gpu.host_link().up_gbps(), 54.6, 0.5);
  EXPECT_DOUBLE_EQ(gpu.host_link().duplex_gbps(), 90);
  std::map<DType, double> achieved;
  for (const ComputePeak& peak : gpu.peaks()) {
    achieved[peak.dtype()] = peak.peak_tflops() * peak.efficiency();
  }
  EXPECT_NEAR(achieved[FP32], 50.3, 1.0);
  EXPECT_NEAR(achieved[FP16], 713, 10);
  EXPECT_NEAR(achieved[BF16], 720, 10);
  EXPECT_EQ(cluster.hosts(0).cores(), 16);
}

TEST(Catalog, DgxA100HasFourSwitchesOfTwoGpusAndDuplexCappedHostLinks) {
  const Cluster cluster = MustLoad("dgx_a100");
  ASSERT_EQ(cluster.devices_size(), 8);
  ASSERT_EQ(cluster.hosts_size(), 1);
  ASSERT_EQ(cluster.pcie_switches_size(), 4);
  std::map<std::string, int> per_switch;
  for (const Device& device : cluster.devices()) {
    ++per_switch[device.pcie_switch()];
    EXPECT_EQ(device.host_link().link_class(), PCIE);
    EXPECT_NEAR(device.host_link().down_gbps(), 25, 1) << device.name();
    EXPECT_NEAR(device.host_link().up_gbps(), 25, 1) << device.name();
    // Both directions together are capped well below twice one way.
    EXPECT_GT(device.host_link().duplex_gbps(), device.host_link().down_gbps());
    EXPECT_LT(device.host_link().duplex_gbps(), 2 * device.host_link().down_gbps());
    EXPECT_EQ(device.peer_domain(), "nvswitch");
    EXPECT_FALSE(device.nic().empty());
  }
  EXPECT_EQ(per_switch, (std::map<std::string, int>{
                            {"pcie_sw0", 2}, {"pcie_sw1", 2}, {"pcie_sw2", 2}, {"pcie_sw3", 2}}));
  ASSERT_EQ(cluster.peer_domains_size(), 1);
  // The NVSwitch domain lands on the measured ~232 GB/s ring bus bandwidth.
  EXPECT_NEAR(cluster.peer_domains(0).gbps_per_device() *
                  cluster.collectives().bus_bandwidth_efficiency(),
              232, 3);
  EXPECT_EQ(cluster.nics_size(), 8);
}

TEST(Catalog, HgxH100HasEightGpusInOnePeerDomain) {
  const Cluster cluster = MustLoad("hgx_h100");
  ASSERT_EQ(cluster.devices_size(), 8);
  ASSERT_EQ(cluster.peer_domains_size(), 1);
  for (const Device& device : cluster.devices()) {
    EXPECT_EQ(device.peer_domain(), cluster.peer_domains(0).name());
    EXPECT_NEAR(device.host_link().down_gbps(), 55, 2);
  }
  // The all-gather the sliced strategy relies on: measured 361 GB/s bus bandwidth.
  EXPECT_NEAR(cluster.peer_domains(0).gbps_per_device() *
                  cluster.collectives().bus_bandwidth_efficiency(),
              361, 3);
}

TEST(Catalog, H100SxmX2IsTwoGpusOnNvlink) {
  const Cluster cluster = MustLoad("h100_sxm_x2");
  ASSERT_EQ(cluster.devices_size(), 2);
  ASSERT_EQ(cluster.peer_domains_size(), 1);
  EXPECT_EQ(cluster.peer_domains(0).link_class(), NVLINK);
}

TEST(Catalog, H100PcieX4PeersOverPcie) {
  const Cluster cluster = MustLoad("h100_pcie_x4");
  ASSERT_EQ(cluster.devices_size(), 4);
  EXPECT_EQ(cluster.peer_domains_size(), 0);
  EXPECT_TRUE(cluster.pcie_peer_access());
}

TEST(Catalog, Rtx4090X8HasNoPeerDomainAndNoPeerAccess) {
  const Cluster cluster = MustLoad("rtx4090_x8");
  ASSERT_EQ(cluster.devices_size(), 8);
  EXPECT_EQ(cluster.peer_domains_size(), 0);
  EXPECT_FALSE(cluster.pcie_peer_access());
  for (const Device& device : cluster.devices()) {
    EXPECT_EQ(device.peer_domain(), "");
    EXPECT_EQ(device.memory_bytes(), int64_t{24} << 30);
  }
}

TEST(Catalog, Gb200Nvl72Is72GpusOn18HostsInOnePeerDomain) {
  const Cluster cluster = MustLoad("gb200_nvl72");
  ASSERT_EQ(cluster.devices_size(), 72);
  ASSERT_EQ(cluster.hosts_size(), 18);
  ASSERT_EQ(cluster.peer_domains_size(), 1);
  std::map<std::string, int> per_host;
  for (const Device& device : cluster.devices()) {
    ++per_host[device.host()];
    EXPECT_EQ(device.peer_domain(), "nvl72");
    EXPECT_EQ(device.host_link().link_class(), C2C);
  }
  EXPECT_EQ(per_host.size(), 18u);
  for (const auto& [host, devices] : per_host) EXPECT_EQ(devices, 4) << host;
}

TEST(Catalog, Gh200HostLinkIsC2c) {
  const Cluster cluster = MustLoad("gh200");
  ASSERT_EQ(cluster.devices_size(), 1);
  const LinkSpec& link = cluster.devices(0).host_link();
  EXPECT_EQ(link.link_class(), C2C);
  EXPECT_GT(link.down_gbps(), link.up_gbps());  // H2D 346-375 vs D2H ~297
  EXPECT_GT(link.duplex_gbps(), 0);             // LPDDR5X caps both together
}

TEST(Catalog, LocalCpuIsFourEmulatedDevices) {
  const Cluster cluster = MustLoad("local_cpu");
  ASSERT_EQ(cluster.devices_size(), 4);
  ASSERT_EQ(cluster.hosts_size(), 1);
  EXPECT_EQ(cluster.hosts(0).name(), "local");
  for (int i = 0; i < 4; ++i) {
    const Device& device = cluster.devices(i);
    EXPECT_EQ(device.name(), "cpu" + std::to_string(i));
    EXPECT_EQ(device.host_link().link_class(), EMULATED);
    ASSERT_EQ(device.peaks_size(), 1);
    EXPECT_EQ(device.peaks(0).dtype(), FP32);
  }
  ASSERT_EQ(cluster.peer_domains_size(), 1);
  EXPECT_EQ(cluster.peer_domains(0).link_class(), EMULATED);
}

// ------------------------------------------------------------ LoadCluster

TEST(LoadCluster, UnknownNameListsTheKnownOnes) {
  absl::StatusOr<Cluster> cluster = LoadCluster("dgx_h100");
  ASSERT_EQ(cluster.status().code(), absl::StatusCode::kNotFound);
  const std::string message(cluster.status().message());
  EXPECT_NE(message.find("unknown cluster 'dgx_h100'"), std::string::npos) << message;
  EXPECT_NE(message.find("dgx_a100, gb200_nvl72, gh200"), std::string::npos) << message;
  EXPECT_NE(message.find("path of a Cluster textproto"), std::string::npos) << message;
}

TEST(LoadCluster, ReadsAUserFile) {
  const std::string path = WriteTemp("mine.pbtxt", kTinyCluster);
  absl::StatusOr<Cluster> cluster = LoadCluster(path);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(cluster->name(), "tiny");
  EXPECT_EQ(cluster->devices_size(), 2);
}

TEST(LoadCluster, RelativePathsResolveWhereBazelRunWasTyped) {
  WriteTemp("relative_cluster.pbtxt", kTinyCluster);
  setenv("BUILD_WORKING_DIRECTORY", ::testing::TempDir().c_str(), 1);
  absl::StatusOr<Cluster> cluster = LoadCluster("relative_cluster.pbtxt");
  unsetenv("BUILD_WORKING_DIRECTORY");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(cluster->name(), "tiny");
}

TEST(LoadCluster, MalformedFileNamesFileLineAndColumn) {
  const std::string path =
      WriteTemp("broken.pbtxt", "name: \"broken\"\nhosts {\n  cores: many\n}\n");
  absl::StatusOr<Cluster> cluster = LoadCluster(path);
  ASSERT_EQ(cluster.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(cluster.status().message());
  EXPECT_EQ(message.rfind(path + ":3:10: ", 0), 0u) << message;
}

TEST(LoadCluster, InvalidFileNamesFileClusterAndField) {
  std::string text = kTinyCluster;
  text.replace(text.find("pcie_switch: \"sw1\""), 18, "pcie_switch: \"sw9\"");
  const std::string path = WriteTemp("invalid.pbtxt", text);
  absl::StatusOr<Cluster> cluster = LoadCluster(path);
  ASSERT_EQ(cluster.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cluster.status().message(),
            path + ": cluster 'tiny': device 'gpu1': pcie_switch 'sw9' is not "
                   "defined (defined: sw0, sw1)");
}

}  // namespace
}  // namespace zosched
