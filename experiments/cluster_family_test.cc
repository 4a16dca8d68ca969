#include "experiments/cluster_family.h"

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "schedule/cluster_catalog.h"
#include "schedule/cluster_validate.h"

namespace zosched {
namespace {

constexpr char kWhere[] = "sweeps/x.pbtxt: clusters[1]";
constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

ClusterFamily ParseFamily(const std::string& text) {
  ClusterFamily family;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &family)) << text;
  return family;
}

std::vector<ClusterMember> MustExpand(const std::string& family_text) {
  absl::StatusOr<std::vector<ClusterMember>> members =
      ExpandClusterFamily(ParseFamily(family_text), kWhere);
  EXPECT_TRUE(members.ok()) << members.status();
  return members.ok() ? *std::move(members) : std::vector<ClusterMember>();
}

Cluster MustLoad(const std::string& name) {
  absl::StatusOr<Cluster> cluster = LoadCluster(name);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return cluster.ok() ? *cluster : Cluster();
}

std::vector<std::string> Labels(const std::vector<ClusterMember>& members) {
  std::vector<std::string> labels;
  for (const ClusterMember& member : members) labels.push_back(member.label);
  return labels;
}

double PeakTflops(const Device& device, DType dtype) {
  for (const ComputePeak& peak : device.peaks()) {
    if (peak.dtype() == dtype) return peak.peak_tflops();
  }
  return 0;
}

// ------------------------------------------------------------ no axes

TEST(ExpandClusterFamily, NoAxesGivesTheBaseUnchangedWithItsFigures) {
  const std::vector<ClusterMember> members =
      MustExpand(R"pb(base: "dgx_a100" price_per_gpu_hour: 1.5)pb");
  ASSERT_EQ(members.size(), 1);
  const ClusterMember& member = members[0];
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(member.cluster, MustLoad("dgx_a100")));
  EXPECT_EQ(member.label, "dgx_a100");
  EXPECT_DOUBLE_EQ(member.price_per_gpu_hour, 1.5);
  EXPECT_EQ(member.nodes, 1);
  EXPECT_EQ(member.gpus_per_node, 8);
  EXPECT_EQ(member.gpu_model, "A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(member.host_link_gbps, 25);
  EXPECT_DOUBLE_EQ(member.host_link_duplex_gbps, 37);
  EXPECT_DOUBLE_EQ(member.nvlink_gbps, 275);
  EXPECT_EQ(member.gpus_per_pcie_switch, 2);
  EXPECT_DOUBLE_EQ(member.host_memory_gib, 2048);
  EXPECT_DOUBLE_EQ(member.device_memory_gib, 80);
}

// ------------------------------------------------------------ link axes

TEST(ExpandClusterFamily, HostLinkAxisSetsEveryHostLinkAndUplinkKeepingTheDuplexRatio) {
  const std::vector<ClusterMember> members =
      MustExpand(R"pb(base: "dgx_a100" host_link_gbps: [ 16, 32, 12.5 ])pb");
  ASSERT_EQ(members.size(), 3);
  EXPECT_EQ(Labels(members), (std::vector<std::string>{"dgx_a100[host_link_gbps=16]",
                                                       "dgx_a100[host_link_gbps=32]",
                                                       "dgx_a100[host_link_gbps=12.5]"}));
  const double rates[] = {16, 32, 12.5};
  for (int m = 0; m < 3; ++m) {
    const ClusterMember& member = members[m];
    const double duplex = rates[m] * 37 / 25;  // dgx_a100: 37 GB/s duplex over 25 per direction
    EXPECT_EQ(member.cluster.name(), member.label);
    EXPECT_EQ(member.cluster.description(),
              absl::StrCat("dgx_a100 rewritten by a sweep: host_link_gbps=",
                           absl::StrFormat("%g", rates[m])));
    ASSERT_EQ(member.cluster.devices_size(), 8);
    for (const Device& device : member.cluster.devices()) {
      EXPECT_DOUBLE_EQ(device.host_link().down_gbps(), rates[m]) << device.name();
      EXPECT_DOUBLE_EQ(device.host_link().up_gbps(), rates[m]) << device.name();
      EXPECT_DOUBLE_EQ(device.host_link().duplex_gbps(), duplex) << device.name();
    }
    ASSERT_EQ(member.cluster.pcie_switches_size(), 4);
    for (const PcieSwitch& pcie_switch : member.cluster.pcie_switches()) {
      EXPECT_DOUBLE_EQ(pcie_switch.uplink().down_gbps(), rates[m]) << pcie_switch.name();
      EXPECT_DOUBLE_EQ(pcie_switch.uplink().up_gbps(), rates[m]) << pcie_switch.name();
      EXPECT_DOUBLE_EQ(pcie_switch.uplink().duplex_gbps(), duplex) << pcie_switch.name();
    }
    EXPECT_DOUBLE_EQ(member.host_link_gbps, rates[m]);
    EXPECT_DOUBLE_EQ(member.host_link_duplex_gbps, duplex);
  }
}

TEST(ExpandClusterFamily, FullDuplexStaysFullDuplexWhenTheRateChanges) {
  const std::vector<ClusterMember> members =
      MustExpand(R"pb(base: "hgx_h100" host_link_gbps: 100)pb");
  ASSERT_EQ(members.size(), 1);
  for (const Device& device : members[0].cluster.devices()) {
    EXPECT_DOUBLE_EQ(device.host_link().down_gbps(), 100);
    EXPECT_DOUBLE_EQ(device.host_link().duplex_gbps(), 0);
  }
}

TEST(ExpandClusterFamily, MembersFollowTheAxisProductWithTheLastAxisFastest) {
  const std::vector<ClusterMember> members = MustExpand(R"pb(
    base: "dgx_a100"
    host_link_gbps: [ 16, 32 ]
    host_link_duplex_gbps: [ 0, 20 ]
  )pb");
  EXPECT_EQ(Labels(members),
            (std::vector<std::string>{
                "dgx_a100[host_link_gbps=16,host_link_duplex_gbps=0]",
                "dgx_a100[host_link_gbps=16,host_link_duplex_gbps=20]",
                "dgx_a100[host_link_gbps=32,host_link_duplex_gbps=0]",
                "dgx_a100[host_link_gbps=32,host_link_duplex_gbps=20]",
            }));
  ASSERT_EQ(members.size(), 4);
  EXPECT_DOUBLE_EQ(members[1].cluster.devices(5).host_link().duplex_gbps(), 20);
  EXPECT_DOUBLE_EQ(members[1].cluster.pcie_switches(3).uplink().duplex_gbps(), 20);
  EXPECT_DOUBLE_EQ(members[2].cluster.devices(5).host_link().duplex_gbps(), 0);
  EXPECT_DOUBLE_EQ(members[2].cluster.pcie_switches(3).uplink().duplex_gbps(), 0);
  EXPECT_DOUBLE_EQ(members[2].host_link_duplex_gbps, 0);
}

TEST(ExpandClusterFamily, LabelsListTheAxesInProductOrder) {
  const std::vector<ClusterMember> members = MustExpand(R"pb(
    base: "dgx_a100"
    host_link_gbps: 16
    nodes: 2
    gpu_types { cluster: "hgx_h100" }
    device_memory_gib: 40
  )pb");
  ASSERT_EQ(members.size(), 1);
  EXPECT_EQ(members[0].label,
            "dgx_a100[gpu=hgx_h100,nodes=2,host_link_gbps=16,device_memory_gib=40]");
  EXPECT_EQ(members[0].cluster.description(),
            "dgx_a100 rewritten by a sweep: gpu=hgx_h100, nodes=2, host_link_gbps=16, "
            "device_memory_gib=40");
}

TEST(ExpandClusterFamily, NvlinkZeroRemovesTheDomainAndPositiveSetsIt) {
  const std::vector<ClusterMember> members =
      MustExpand(R"pb(base: "dgx_a100" nvlink_gbps: [ 0, 600 ])pb");
  ASSERT_EQ(members.size(), 2);
  EXPECT_TRUE(members[0].cluster.peer_domains().empty());
  for (const Device& device : members[0].cluster.devices()) {
    EXPECT_EQ(device.peer_domain(), "") << device.name();
  }
  EXPECT_DOUBLE_EQ(members[0].nvlink_gbps, 0);
  ASSERT_EQ(members[1].cluster.peer_domains_size(), 1);
  EXPECT_DOUBLE_EQ(members[1].cluster.peer_domains(0).gbps_per_device(), 600);
  EXPECT_DOUBLE_EQ(members[1].nvlink_gbps, 600);
}

// ------------------------------------------------------------ topology axes

TEST(ExpandClusterFamily, TwoNodesOfFourFromDgxA100) {
  const std::vector<ClusterMember> members =
      MustExpand(R"pb(base: "dgx_a100" nodes: 2 gpus_per_node: 4)pb");
  ASSERT_EQ(members.size(), 1);
  const ClusterMember& member = members[0];
  const Cluster& cluster = member.cluster;
  EXPECT_EQ(member.label, "dgx_a100[nodes=2,gpus_per_node=4]");
  EXPECT_TRUE(ValidateCluster(cluster, "test").ok()) << ValidateCluster(cluster, "test");

  ASSERT_EQ(cluster.hosts_size(), 2);
  EXPECT_EQ(cluster.hosts(0).name(), "host0");
  EXPECT_EQ(cluster.hosts(1).name(), "host1");
  EXPECT_EQ(cluster.hosts(1).memory_bytes(), cluster.hosts(0).memory_bytes());
  ASSERT_EQ(cluster.peer_domains_size(), 2);
  EXPECT_EQ(cluster.peer_domains(0).name(), "host0_nvlink");
  EXPECT_EQ(cluster.peer_domains(1).name(), "host1_nvlink");
  EXPECT_DOUBLE_EQ(cluster.peer_domains(1).gbps_per_device(), 275);
  ASSERT_EQ(cluster.devices_size(), 8);
  ASSERT_EQ(cluster.nics_size(), 8);
  // dgx_a100 shares each switch uplink between 2 GPUs: 2 switches per host.
  ASSERT_EQ(cluster.pcie_switches_size(), 4);
  for (int k = 0; k < 8; ++k) {
    const Device& device = cluster.devices(k);
    const std::string host = k < 4 ? "host0" : "host1";
    EXPECT_EQ(device.name(), absl::StrCat("gpu", k));
    EXPECT_EQ(device.host(), host);
    EXPECT_EQ(device.model(), "A100-SXM4-80GB");
    EXPECT_EQ(device.peer_domain(), host + "_nvlink");
    EXPECT_EQ(device.nic(), absl::StrCat("nic", k));
    EXPECT_EQ(cluster.nics(k).name(), absl::StrCat("nic", k));
    EXPECT_EQ(cluster.nics(k).host(), host);
    EXPECT_DOUBLE_EQ(cluster.nics(k).gbps(), 25);
    EXPECT_EQ(device.pcie_switch(), absl::StrCat("pcie_sw", k / 2));
  }
  for (int s = 0; s < 4; ++s) {
    EXPECT_EQ(cluster.pcie_switches(s).name(), absl::StrCat("pcie_sw", s));
    EXPECT_EQ(cluster.pcie_switches(s).host(), s < 2 ? "host0" : "host1");
    EXPECT_DOUBLE_EQ(cluster.pcie_switches(s).uplink().duplex_gbps(), 37);
  }
  EXPECT_EQ(member.nodes, 2);
  EXPECT_EQ(member.gpus_per_node, 4);
  EXPECT_EQ(member.gpus_per_pcie_switch, 2);
  EXPECT_DOUBLE_EQ(member.nvlink_gbps, 275);
}

TEST(ExpandClusterFamily, ZeroGpusPerPcieSwitchRemovesTheSwitches) {
  const std::vector<ClusterMember> members =
      MustExpand(R"pb(base: "dgx_a100" gpus_per_pcie_switch: [ 0, 4 ])pb");
  ASSERT_EQ(members.size(), 2);
  EXPECT_TRUE(members[0].cluster.pcie_switches().empty());
  for (const Device& device : members[0].cluster.devices()) {
    EXPECT_EQ(device.pcie_switch(), "") << device.name();
  }
  EXPECT_EQ(members[0].gpus_per_pcie_switch, 0);
  EXPECT_EQ(members[0].gpus_per_node, 8);  // the base's
  EXPECT_EQ(members[1].cluster.pcie_switches_size(), 2);
  EXPECT_EQ(members[1].gpus_per_pcie_switch, 4);
}

TEST(ExpandClusterFamily, GpusPerNodeAloneKeepsOneHost) {
  const std::vector<ClusterMember> members =
      MustExpand(R"pb(base: "h100_pcie_x4" gpus_per_node: [ 1, 2 ])pb");
  ASSERT_EQ(members.size(), 2);
  EXPECT_EQ(members[0].cluster.devices_size(), 1);
  EXPECT_EQ(members[1].cluster.devices_size(), 2);
  EXPECT_EQ(members[1].nodes, 1);
  EXPECT_TRUE(members[1].cluster.nics().empty());
}

// ------------------------------------------------------------ gpu types, memory

TEST(ExpandClusterFamily, GpuTypeLendsTheGpuAndKeepsThePlatform) {
  const std::vector<ClusterMember> members = MustExpand(R"pb(
    base: "dgx_a100"
    price_per_gpu_hour: 1.5
    gpu_types { cluster: "hgx_h100" price_per_gpu_hour: 3.25 }
    gpu_types { cluster: "dgx_a100" }
  )pb");
  ASSERT_EQ(members.size(), 2);
  const ClusterMember& h100 = members[0];
  EXPECT_EQ(h100.label, "dgx_a100[gpu=hgx_h100]");
  EXPECT_EQ(h100.gpu_model, "H100-SXM5-80GB");
  EXPECT_DOUBLE_EQ(h100.price_per_gpu_hour, 3.25);
  ASSERT_EQ(h100.cluster.devices_size(), 8);
  for (const Device& device : h100.cluster.devices()) {
    EXPECT_EQ(device.model(), "H100-SXM5-80GB");
    EXPECT_DOUBLE_EQ(PeakTflops(device, BF16), 989);
    EXPECT_DOUBLE_EQ(device.memory_bandwidth_gbps(), 3350);
    EXPECT_EQ(device.kernel_model().sms(), 132);  // the H100's kernels, not the A100's 108 SMs
    // The A100 platform: its PCIe Gen4 host link, switches and NVLink.
    EXPECT_DOUBLE_EQ(device.host_link().down_gbps(), 25);
    EXPECT_DOUBLE_EQ(device.host_link().duplex_gbps(), 37);
    EXPECT_FALSE(device.pcie_switch().empty());
  }
  EXPECT_EQ(h100.cluster.pcie_switches_size(), 4);
  EXPECT_DOUBLE_EQ(h100.nvlink_gbps, 275);
  EXPECT_DOUBLE_EQ(h100.host_memory_gib, 2048);

  EXPECT_EQ(members[1].label, "dgx_a100[gpu=dgx_a100]");
  EXPECT_DOUBLE_EQ(members[1].price_per_gpu_hour, 1.5);  // unpriced gpu type: the family's
}

TEST(ExpandClusterFamily, MemoryAxesSetEveryHostAndDeviceAfterTheGpuType) {
  const std::vector<ClusterMember> members = MustExpand(R"pb(
    base: "dgx_a100"
    nodes: 2
    gpu_types { cluster: "hgx_h100" }
    host_memory_gib: 1024
    device_memory_gib: 40.5
  )pb");
  ASSERT_EQ(members.size(), 1);
  for (const Host& host : members[0].cluster.hosts()) {
    EXPECT_EQ(host.memory_bytes(), int64_t{1} << 40) << host.name();
  }
  for (const Device& device : members[0].cluster.devices()) {
    EXPECT_EQ(device.memory_bytes(), static_cast<int64_t>(40.5 * kGib)) << device.name();
  }
  EXPECT_DOUBLE_EQ(members[0].host_memory_gib, 1024);
  EXPECT_DOUBLE_EQ(members[0].device_memory_gib, 40.5);
}

// ------------------------------------------------------------ measured tables

// dgx_a100 with one row in each measured table, as a Cluster file.
std::string WriteMeasuredDgxA100() {
  Cluster cluster = MustLoad("dgx_a100");
  cluster.set_name("measured_dgx");
  MeasuredCompute* compute = cluster.add_measured_compute();
  compute->set_op_class("BLOCK_FORWARD");
  compute->set_model("tiny");
  compute->set_seconds(0.01);
  MeasuredTransfer* transfer = cluster.add_measured_transfers();
  transfer->set_link("gpu0/host_link");
  transfer->set_bytes(1 << 20);
  transfer->set_seconds(5e-5);
  MeasuredCollective* collective = cluster.add_measured_collectives();
  collective->set_kind("ALL_REDUCE");
  collective->set_ranks(8);
  collective->set_bytes(1 << 20);
  collective->set_seconds(1e-4);
  std::string text;
  EXPECT_TRUE(google::protobuf::TextFormat::PrintToString(cluster, &text));
  const std::string path = ::testing::TempDir() + "/measured_dgx.pbtxt";
  std::ofstream(path) << text;
  return path;
}

TEST(ExpandClusterFamily, AxesDropTheMeasuredTablesTheyMakeStale) {
  const std::string base = WriteMeasuredDgxA100();
  const std::vector<ClusterMember> unchanged = MustExpand(absl::StrCat("base: \"", base, "\""));
  ASSERT_EQ(unchanged.size(), 1);
  EXPECT_EQ(unchanged[0].label, "measured_dgx");
  EXPECT_EQ(unchanged[0].cluster.measured_transfers_size(), 1);

  for (const char* axis : {"nodes: 1", "host_link_gbps: 16", "host_link_duplex_gbps: 0",
                           "nvlink_gbps: 100"}) {
    const std::vector<ClusterMember> links =
        MustExpand(absl::StrCat("base: \"", base, "\" ", axis));
    ASSERT_EQ(links.size(), 1) << axis;
    EXPECT_TRUE(links[0].cluster.measured_transfers().empty()) << axis;
    EXPECT_TRUE(links[0].cluster.measured_collectives().empty()) << axis;
    EXPECT_EQ(links[0].cluster.measured_compute_size(), 1) << axis;
  }

  const std::vector<ClusterMember> gpu =
      MustExpand(absl::StrCat("base: \"", base, "\" gpu_types { cluster: \"hgx_h100\" }"));
  ASSERT_EQ(gpu.size(), 1);
  EXPECT_TRUE(gpu[0].cluster.measured_compute().empty());
  EXPECT_EQ(gpu[0].cluster.measured_transfers_size(), 1);

  const std::vector<ClusterMember> memory =
      MustExpand(absl::StrCat("base: \"", base, "\" device_memory_gib: 40"));
  ASSERT_EQ(memory.size(), 1);
  EXPECT_EQ(memory[0].cluster.measured_compute_size(), 1);
  EXPECT_EQ(memory[0].cluster.measured_transfers_size(), 1);
  EXPECT_EQ(memory[0].cluster.measured_collectives_size(), 1);
}

// ------------------------------------------------------------ errors

struct ErrorCase {
  const char* family;
  std::vector<std::string> message_parts;  // each must appear in the message
};

TEST(ExpandClusterFamily, BadFamiliesAreInvalidArgumentNamingWhereAndTheField) {
  const ErrorCase cases[] = {
      {R"pb(base: "")pb", {".base:", "empty", "dgx_a100"}},
      {R"pb(base: "dgx_a100" price_per_gpu_hour: -1)pb", {".price_per_gpu_hour:", "-1"}},
      {R"pb(base: "dgx_a100" gpu_types { cluster: "" })pb", {".gpu_types[0].cluster:", "empty"}},
      {R"pb(base: "dgx_a100" gpu_types { cluster: "hgx_h100" price_per_gpu_hour: -2 })pb",
       {".gpu_types[0].price_per_gpu_hour:", "-2"}},
      {R"pb(base: "dgx_a100" host_link_gbps: [ 16, 32, -3 ])pb",
       {".host_link_gbps[2]: -3: expected a positive GB/s per direction"}},
      {R"pb(base: "dgx_a100" host_link_gbps: 0)pb", {".host_link_gbps[0]: 0:"}},
      {R"pb(base: "dgx_a100" host_link_gbps: inf)pb", {".host_link_gbps[0]: inf:"}},
      {R"pb(base: "dgx_a100" host_link_gbps: nan)pb", {".host_link_gbps[0]: nan:"}},
      {R"pb(base: "dgx_a100" host_link_duplex_gbps: -1)pb",
       {".host_link_duplex_gbps[0]: -1:", "0: full duplex"}},
      {R"pb(base: "dgx_a100" nvlink_gbps: -5)pb", {".nvlink_gbps[0]: -5:"}},
      {R"pb(base: "dgx_a100" nodes: 0)pb", {".nodes[0]: 0:", ">= 1"}},
      {R"pb(base: "dgx_a100" gpus_per_node: [ 8, -1 ])pb", {".gpus_per_node[1]: -1:"}},
      {R"pb(base: "dgx_a100" gpus_per_pcie_switch: -1)pb", {".gpus_per_pcie_switch[0]: -1:"}},
      {R"pb(base: "dgx_a100" host_memory_gib: 0)pb", {".host_memory_gib[0]: 0:"}},
      {R"pb(base: "dgx_a100" device_memory_gib: -80)pb", {".device_memory_gib[0]: -80:"}},
      {R"pb(base: "dgx_a100" device_memory_gib: 1e12)pb", {".device_memory_gib[0]: 1e+12:"}},
      {R"pb(base: "dgx_a100" gpus_per_node: 8 gpus_per_pcie_switch: 3)pb",
       {".gpus_per_pcie_switch[0]: 3:", "does not divide gpus_per_node 8"}},
      {R"pb(base: "dgx_a100" gpus_per_node: 3)pb",
       {".gpus_per_node[0]: 3:", "2 devices behind each PCIe switch", "dgx_a100"}},
      {R"pb(base: "hgx_h100" gpus_per_pcie_switch: 2)pb",
       {".gpus_per_pcie_switch[0]: 2:", "base 'hgx_h100' has no PCIe switch", "dgx_a100"}},
      {R"pb(base: "h100_pcie_x4" nodes: [ 1, 2 ])pb",
       {".nodes[1]: 2:", "base 'h100_pcie_x4' has no NIC", "dgx_a100"}},
      {R"pb(base: "dgx_a100" nodes: 1000 gpus_per_node: 8)pb",
       {".nodes[0] × gpus_per_node[0]:", "8000 devices", "at most 4096"}},
      {R"pb(base: "dgx_a100" nodes: 600)pb",
       {".nodes[0] × gpus_per_node (empty: the base's):", "4800 devices"}},
      {R"pb(base: "h100_pcie_x4" nvlink_gbps: [ 0, 100 ])pb",
       {".nvlink_gbps[1]: 100:", "base 'h100_pcie_x4' has no NVLink domain", "hgx_h100"}},
      {R"pb(base: "dgx_a100" host_link_gbps: [ 16, 32, 16 ])pb",
       {".host_link_gbps[0]:", "host_link_gbps[2]", "dgx_a100[host_link_gbps=16]"}},
      {R"pb(base: "dgx_a100"
            gpu_types { cluster: "hgx_h100" }
            gpu_types { cluster: "hgx_h100" price_per_gpu_hour: 2 })pb",
       {".gpu_types[0]:", "gpu_types[1]", "dgx_a100[gpu=hgx_h100]"}},
      // 1e-10 GiB rounds to 0 bytes, which ValidateCluster rejects.
      {R"pb(base: "dgx_a100" device_memory_gib: 1e-10)pb",
       {": member dgx_a100[device_memory_gib=1e-10]:", "memory_bytes is 0"}},
  };
  for (const ErrorCase& error_case : cases) {
    const absl::StatusOr<std::vector<ClusterMember>> members =
        ExpandClusterFamily(ParseFamily(error_case.family), kWhere);
    ASSERT_FALSE(members.ok()) << error_case.family;
    EXPECT_EQ(members.status().code(), absl::StatusCode::kInvalidArgument)
        << members.status();
    const std::string message(members.status().message());
    EXPECT_EQ(message.rfind(kWhere, 0), 0) << message;
    for (const std::string& part : error_case.message_parts) {
      EXPECT_NE(message.find(part), std::string::npos)
          << "expected '" << part << "' in: " << message;
    }
  }
}

TEST(ExpandClusterFamily, AClusterThatDoesNotLoadKeepsLoadClustersErrorAfterTheField) {
  const absl::StatusOr<std::vector<ClusterMember>> members =
      ExpandClusterFamily(ParseFamily(R"pb(base: "dgx_a200")pb"), kWhere);
  ASSERT_FALSE(members.ok());
  EXPECT_EQ(members.status().code(), absl::StatusCode::kNotFound);
  const std::string message(members.status().message());
  EXPECT_EQ(message.rfind(absl::StrCat(kWhere, ".base: "), 0), 0) << message;
  EXPECT_NE(message.find("dgx_a200"), std::string::npos) << message;

  const absl::StatusOr<std::vector<ClusterMember>> gpu = ExpandClusterFamily(
      ParseFamily(R"pb(base: "dgx_a100" gpu_types { cluster: "b300" })pb"), kWhere);
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(std::string(gpu.status().message()).rfind(
                absl::StrCat(kWhere, ".gpu_types[0].cluster: "), 0),
            0)
      << gpu.status();
}

}  // namespace
}  // namespace zosched
