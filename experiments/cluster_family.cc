#include "experiments/cluster_family.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "schedule/cluster_catalog.h"
#include "schedule/cluster_validate.h"

namespace zosched {
namespace {

constexpr int64_t kMaxDevices = 4096;
constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;
// Far above any machine and well inside int64 bytes (2^63 bytes = 2^33 GiB).
constexpr double kMaxMemoryGib = 1e9;

// The family's axes, in the order of the Cartesian product (the last varies
// fastest) and of the labels.
enum Axis {
  kGpuType,
  kNodes,
  kGpusPerNode,
  kGpusPerPcieSwitch,
  kHostLinkGbps,
  kHostLinkDuplexGbps,
  kNvlinkGbps,
  kHostMemoryGib,
  kDeviceMemoryGib,
  kAxisCount,
};

// Each axis's ClusterFamily field.
constexpr const char* kAxisFields[kAxisCount] = {
    "gpu_types",         "nodes",
    "gpus_per_node",     "gpus_per_pcie_switch",
    "host_link_gbps",    "host_link_duplex_gbps",
    "nvlink_gbps",       "host_memory_gib",
    "device_memory_gib",
};

// One member: for each axis, the index of its value, or -1 where the family
// leaves the axis empty.
using Choice = std::array<int, kAxisCount>;

// What the numeric axes accept: values from `lowest` (itself included when
// `lowest_allowed`) to `highest`.
struct NumericAxisRule {
  Axis axis;
  double lowest;
  bool lowest_allowed;
  double highest;
  const char* expected;
};

constexpr double kUnbounded = std::numeric_limits<double>::max();

constexpr NumericAxisRule kNumericAxisRules[] = {
    {kNodes, 1, true, kUnbounded, "expected a host count >= 1"},
    {kGpusPerNode, 1, true, kUnbounded, "expected devices per host >= 1"},
    {kGpusPerPcieSwitch, 0, true, kUnbounded,
     "expected devices per PCIe switch >= 0 (0: no switches)"},
    {kHostLinkGbps, 0, false, kUnbounded, "expected a positive GB/s per direction"},
    {kHostLinkDuplexGbps, 0, true, kUnbounded,
     "expected a GB/s cap on both directions together >= 0 (0: full duplex)"},
    {kNvlinkGbps, 0, true, kUnbounded,
     "expected GB/s per device per direction >= 0 (0: no NVLink)"},
    {kHostMemoryGib, 0, false, kMaxMemoryGib, "expected a positive GiB per host, at most 1e9"},
    {kDeviceMemoryGib, 0, false, kMaxMemoryGib, "expected a positive GiB per device, at most 1e9"},
};

int AxisSize(const ClusterFamily& family, Axis axis) {
  switch (axis) {
    case kGpuType:
      return family.gpu_types_size();
    case kNodes:
      return family.nodes_size();
    case kGpusPerNode:
      return family.gpus_per_node_size();
    case kGpusPerPcieSwitch:
      return family.gpus_per_pcie_switch_size();
    case kHostLinkGbps:
      return family.host_link_gbps_size();
    case kHostLinkDuplexGbps:
      return family.host_link_duplex_gbps_size();
    case kNvlinkGbps:
      return family.nvlink_gbps_size();
    case kHostMemoryGib:
      return family.host_memory_gib_size();
    case kDeviceMemoryGib:
      return family.device_memory_gib_size();
    case kAxisCount:
      break;
  }
  CHECK(false) << "not an axis: " << axis;
  return 0;
}

bool IsCountAxis(Axis axis) {
  return axis == kNodes || axis == kGpusPerNode || axis == kGpusPerPcieSwitch;
}

// Value `i` of a numeric axis (every axis but kGpuType).
double NumericValue(const ClusterFamily& family, Axis axis, int i) {
  switch (axis) {
    case kNodes:
      return family.nodes(i);
    case kGpusPerNode:
      return family.gpus_per_node(i);
    case kGpusPerPcieSwitch:
      return family.gpus_per_pcie_switch(i);
    case kHostLinkGbps:
      return family.host_link_gbps(i);
    case kHostLinkDuplexGbps:
      return family.host_link_duplex_gbps(i);
    case kNvlinkGbps:
      return family.nvlink_gbps(i);
    case kHostMemoryGib:
      return family.host_memory_gib(i);
    case kDeviceMemoryGib:
      return family.device_memory_gib(i);
    case kGpuType:
    case kAxisCount:
      break;
  }
  CHECK(false) << "not a numeric axis: " << axis;
  return 0;
}

// Value `i` of a numeric axis as labels and errors print it: counts in full,
// the others with %g.
std::string NumericText(const ClusterFamily& family, Axis axis, int i) {
  const double value = NumericValue(family, axis, i);
  if (IsCountAxis(axis)) return absl::StrCat(static_cast<int>(value));
  return absl::StrFormat("%g", value);
}

int64_t GibToBytes(double gib) { return std::llround(gib * kBytesPerGib); }

template <typename Element>
const Element* FindByName(const google::protobuf::RepeatedPtrField<Element>& elements,
                          const std::string& name) {
  if (name.empty()) return nullptr;
  for (const Element& element : elements) {
    if (element.name() == name) return &element;
  }
  return nullptr;
}

// A validated cluster's first device, the parts a topology rebuild copies,
// and the topology figures.
struct FirstDevice {
  const Device* device = nullptr;
  const Host* host = nullptr;
  const PcieSwitch* pcie_switch = nullptr;  // nullptr without one
  const PeerDomain* peer_domain = nullptr;  // nullptr without one
  const Nic* nic = nullptr;                 // nullptr without one
  int nodes = 0;                            // hosts with devices
  int gpus_per_node = 0;                    // devices on `host`
  int gpus_per_pcie_switch = 0;             // devices behind `pcie_switch`, 0 without one
};

FirstDevice FindFirstDevice(const Cluster& cluster) {
  FirstDevice first;
  first.device = &cluster.devices(0);
  first.host = FindByName(cluster.hosts(), first.device->host());
  CHECK(first.host != nullptr) << "validated cluster '" << cluster.name() << "' lacks host '"
                               << first.device->host() << "'";
  first.pcie_switch = FindByName(cluster.pcie_switches(), first.device->pcie_switch());
  first.peer_domain = FindByName(cluster.peer_domains(), first.device->peer_domain());
  first.nic = FindByName(cluster.nics(), first.device->nic());
  std::map<std::string, int> devices_per_host;
  for (const Device& device : cluster.devices()) {
    ++devices_per_host[device.host()];
    if (first.pcie_switch != nullptr && device.pcie_switch() == first.pcie_switch->name()) {
      ++first.gpus_per_pcie_switch;
    }
  }
  first.nodes = devices_per_host.size();
  first.gpus_per_node = devices_per_host[first.host->name()];
  return first;
}

// The figures of a built member (a validated cluster).
void DescribeMember(ClusterMember* member) {
  const FirstDevice first = FindFirstDevice(member->cluster);
  member->nodes = first.nodes;
  member->gpus_per_node = first.gpus_per_node;
  member->gpus_per_pcie_switch = first.gpus_per_pcie_switch;
  member->gpu_model = first.device->model();
  member->host_link_gbps = first.device->host_link().down_gbps();
  member->host_link_duplex_gbps = first.device->host_link().duplex_gbps();
  member->nvlink_gbps = first.peer_domain == nullptr ? 0 : first.peer_domain->gbps_per_device();
  member->host_memory_gib = first.host->memory_bytes() / kBytesPerGib;
  member->device_memory_gib = first.device->memory_bytes() / kBytesPerGib;
}

// `status` with "PREFIX: " before its message, its code kept.
absl::Status Prefixed(const absl::Status& status, const std::string& prefix) {
  return absl::Status(status.code(), absl::StrCat(prefix, ": ", status.message()));
}

// The GPU of `gpu_type` (its first device) in place of `device`'s.
void LendGpu(const Device& gpu, Device* device) {
  device->set_model(gpu.model());
  *device->mutable_peaks() = gpu.peaks();
  device->set_memory_bytes(gpu.memory_bytes());
  device->set_memory_bandwidth_gbps(gpu.memory_bandwidth_gbps());
  device->set_memory_efficiency(gpu.memory_efficiency());
  device->set_copy_engines(gpu.copy_engines());
  device->set_compute_slowdown_under_comm(gpu.compute_slowdown_under_comm());
  device->set_stream_wake_latency_s(gpu.stream_wake_latency_s());
  device->set_stream_signal_cost_s(gpu.stream_signal_cost_s());
  device->set_transfer_cpu_s(gpu.transfer_cpu_s());
  device->set_transfer_cpu_gbps(gpu.transfer_cpu_gbps());
  device->set_collective_cpu_gbps(gpu.collective_cpu_gbps());
  device->set_interrupt_cpu_s(gpu.interrupt_cpu_s());
  *device->mutable_kernel_model() = gpu.kernel_model();
}

// `gbps` per direction on `link`, whose duplex cap keeps its ratio to the
// down rate.
void SetLinkRate(double gbps, LinkSpec* link) {
  link->set_duplex_gbps(link->duplex_gbps() / link->down_gbps() * gbps);
  link->set_down_gbps(gbps);
  link->set_up_gbps(gbps);
}

// Expands one family; see ExpandClusterFamily.
class FamilyExpander {
 public:
  FamilyExpander(const ClusterFamily& family, const std::string& where)
      : family_(family), where_(where) {}

  absl::StatusOr<std::vector<ClusterMember>> Expand() {
    RETURN_IF_ERROR(CheckFields());
    RETURN_IF_ERROR(LoadClusters());
    Choice choice;
    for (int axis = 0; axis < kAxisCount; ++axis) {
      choice[axis] = AxisSize(family_, Axis(axis)) > 0 ? 0 : -1;
    }
    std::vector<ClusterMember> members;
    std::map<std::string, Choice> choice_of_label;
    while (true) {
      ASSIGN_OR_RETURN(ClusterMember member, BuildMember(choice));
      auto [it, inserted] = choice_of_label.emplace(member.label, choice);
      if (!inserted) return SameLabelError(it->second, choice, member.label);
      members.push_back(std::move(member));
      // Next choice, the last axis fastest.
      int axis = kAxisCount - 1;
      for (; axis >= 0; --axis) {
        if (choice[axis] < 0) continue;
        if (++choice[axis] < AxisSize(family_, Axis(axis))) break;
        choice[axis] = 0;
      }
      if (axis < 0) return members;
    }
  }

 private:
  // InvalidArgument "WHERE.FIELD: WHAT".
  absl::Status Fail(const std::string& field, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(where_, ".", field, ": ", what));
  }

  // The field `choice` takes `axis` from: "nodes[2]", or "nodes (empty: the
  // base's)" when the family leaves the axis empty.
  std::string Field(Axis axis, const Choice& choice) const {
    if (choice[axis] < 0) return absl::StrCat(kAxisFields[axis], " (empty: the base's)");
    return absl::StrCat(kAxisFields[axis], "[", choice[axis], "]");
  }

  // The value of count axis `axis` for `choice`, or `base_figure` where the
  // family leaves it empty.
  int CountOrBase(Axis axis, const Choice& choice, int base_figure) const {
    if (choice[axis] < 0) return base_figure;
    return static_cast<int>(NumericValue(family_, axis, choice[axis]));
  }

  // The checks that need no cluster: the base, prices and each axis value.
  absl::Status CheckFields() const {
    if (family_.base().empty()) {
      return Fail("base", "empty (expected a catalog name, e.g. \"dgx_a100\", or a Cluster file)");
    }
    const double price = family_.price_per_gpu_hour();
    if (!(price >= 0 && std::isfinite(price))) {
      return Fail("price_per_gpu_hour",
                  absl::StrFormat("%g: expected dollars per GPU-hour >= 0 (0: unpriced)", price));
    }
    for (int i = 0; i < family_.gpu_types_size(); ++i) {
      const GpuType& gpu_type = family_.gpu_types(i);
      const std::string field = absl::StrCat("gpu_types[", i, "]");
      if (gpu_type.cluster().empty()) {
        return Fail(field + ".cluster",
                    "empty (expected a catalog name, e.g. \"hgx_h100\", or a Cluster file)");
      }
      const double gpu_price = gpu_type.price_per_gpu_hour();
      if (!(gpu_price >= 0 && std::isfinite(gpu_price))) {
        return Fail(
            field + ".price_per_gpu_hour",
            absl::StrFormat("%g: expected dollars per GPU-hour >= 0 (0: the family's)", gpu_price));
      }
    }
    for (const NumericAxisRule& rule : kNumericAxisRules) {
      for (int i = 0; i < AxisSize(family_, rule.axis); ++i) {
        const double value = NumericValue(family_, rule.axis, i);
        const bool above_lowest =
            value > rule.lowest || (rule.lowest_allowed && value == rule.lowest);
        if (above_lowest && value <= rule.highest) continue;
        return Fail(absl::StrCat(kAxisFields[rule.axis], "[", i, "]"),
                    absl::StrCat(NumericText(family_, rule.axis, i), ": ", rule.expected));
      }
    }
    return absl::OkStatus();
  }

  absl::Status LoadClusters() {
    absl::StatusOr<Cluster> base = LoadCluster(family_.base());
    if (!base.ok()) return Prefixed(base.status(), where_ + ".base");
    base_ = *std::move(base);
    base_first_ = FindFirstDevice(base_);
    for (int i = 0; i < family_.gpu_types_size(); ++i) {
      absl::StatusOr<Cluster> gpu_type = LoadCluster(family_.gpu_types(i).cluster());
      if (!gpu_type.ok()) {
        return Prefixed(gpu_type.status(), absl::StrCat(where_, ".gpu_types[", i, "].cluster"));
      }
      gpu_types_.push_back(*std::move(gpu_type));
    }
    return absl::OkStatus();
  }

  bool FamilySets(Axis axis) const { return AxisSize(family_, axis) > 0; }

  // "k=v" for each axis the family sets, in axis order.
  std::vector<std::string> AxisSettings(const Choice& choice) const {
    std::vector<std::string> settings;
    for (int axis = 0; axis < kAxisCount; ++axis) {
      const int i = choice[axis];
      if (i < 0) continue;
      if (axis == kGpuType) {
        settings.push_back(absl::StrCat("gpu=", gpu_types_[i].name()));
      } else {
        settings.push_back(
            absl::StrCat(kAxisFields[axis], "=", NumericText(family_, Axis(axis), i)));
      }
    }
    return settings;
  }

  absl::Status SameLabelError(const Choice& first, const Choice& second,
                              const std::string& label) const {
    int axis = 0;
    while (first[axis] == second[axis]) ++axis;
    return Fail(Field(Axis(axis), first),
                absl::StrFormat("gives member '%s' as %s does (expected values that differ as "
                                "labels print them: numbers with %%g, a gpu type by its "
                                "cluster's name)",
                                label, Field(Axis(axis), second)));
  }

  // The base's topology rebuilt as the family's topology axes say.
  absl::Status RebuildTopology(const Choice& choice, Cluster* cluster) const {
    const FirstDevice& base = base_first_;
    const int nodes = CountOrBase(kNodes, choice, base.nodes);
    const int gpus_per_node = CountOrBase(kGpusPerNode, choice, base.gpus_per_node);
    const int gpus_per_switch = CountOrBase(kGpusPerPcieSwitch, choice, base.gpus_per_pcie_switch);
    if (gpus_per_switch > 0 && base.pcie_switch == nullptr) {
      return Fail(Field(kGpusPerPcieSwitch, choice),
                  absl::StrFormat("%d: base '%s' has no PCIe switch to copy; start from one "
                                  "that has, e.g. dgx_a100, or use 0",
                                  gpus_per_switch, base_.name()));
    }
    if (gpus_per_switch > 0 && gpus_per_node % gpus_per_switch != 0) {
      if (choice[kGpusPerPcieSwitch] >= 0) {
        return Fail(Field(kGpusPerPcieSwitch, choice),
                    absl::StrFormat("%d: does not divide gpus_per_node %d (expected a divisor "
                                    "of %d, or 0 for no switches)",
                                    gpus_per_switch, gpus_per_node, gpus_per_node));
      }
      return Fail(Field(kGpusPerNode, choice),
                  absl::StrFormat("%d: not a multiple of the %d devices behind each PCIe switch "
                                  "of base '%s' (expected a multiple of %d, or set "
                                  "gpus_per_pcie_switch)",
                                  gpus_per_node, gpus_per_switch, base_.name(), gpus_per_switch));
    }
    if (nodes > 1 && base.nic == nullptr) {
      return Fail(Field(kNodes, choice),
                  absl::StrFormat("%d: base '%s' has no NIC on device '%s' to join hosts; "
                                  "start from one that has, e.g. dgx_a100, or use 1",
                                  nodes, base_.name(), base.device->name()));
    }
    const int64_t devices = int64_t{nodes} * gpus_per_node;
    if (devices > kMaxDevices) {
      return Fail(Field(kNodes, choice) + " × " + Field(kGpusPerNode, choice),
                  absl::StrFormat("%d × %d = %d devices (expected at most %d)", nodes,
                                  gpus_per_node, devices, kMaxDevices));
    }

    cluster->clear_hosts();
    cluster->clear_devices();
    cluster->clear_pcie_switches();
    cluster->clear_peer_domains();
    cluster->clear_nics();
    for (int h = 0; h < nodes; ++h) {
      Host* host = cluster->add_hosts();
      *host = *base.host;
      host->set_name(absl::StrCat("host", h));
      PeerDomain* domain = nullptr;
      if (base.peer_domain != nullptr) {
        domain = cluster->add_peer_domains();
        *domain = *base.peer_domain;
        domain->set_name(absl::StrCat(host->name(), "_nvlink"));
      }
      for (int g = 0; g < gpus_per_node; ++g) {
        const int k = h * gpus_per_node + g;
        Device* device = cluster->add_devices();
        *device = *base.device;
        device->set_name(absl::StrCat("gpu", k));
        device->set_host(host->name());
        device->clear_pcie_switch();
        if (gpus_per_switch > 0) {
          const std::string switch_name = absl::StrCat("pcie_sw", k / gpus_per_switch);
          if (g % gpus_per_switch == 0) {
            PcieSwitch* pcie_switch = cluster->add_pcie_switches();
            *pcie_switch = *base.pcie_switch;
            pcie_switch->set_name(switch_name);
            pcie_switch->set_host(host->name());
          }
          device->set_pcie_switch(switch_name);
        }
        device->clear_peer_domain();
        if (domain != nullptr) device->set_peer_domain(domain->name());
        device->clear_nic();
        if (base.nic != nullptr) {
          Nic* nic = cluster->add_nics();
          *nic = *base.nic;
          nic->set_name(absl::StrCat("nic", k));
          nic->set_host(host->name());
          device->set_nic(nic->name());
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status SetNvlink(const Choice& choice, Cluster* cluster) const {
    const double gbps = family_.nvlink_gbps(choice[kNvlinkGbps]);
    if (gbps == 0) {
      cluster->clear_peer_domains();
      for (Device& device : *cluster->mutable_devices()) device.clear_peer_domain();
      return absl::OkStatus();
    }
    if (cluster->peer_domains().empty()) {
      return Fail(Field(kNvlinkGbps, choice),
                  absl::StrFormat("%g: base '%s' has no NVLink domain to set; start from one "
                                  "that has, e.g. hgx_h100, or use 0",
                                  gbps, base_.name()));
    }
    for (PeerDomain& domain : *cluster->mutable_peer_domains()) {
      domain.set_gbps_per_device(gbps);
    }
    return absl::OkStatus();
  }

  // Drops the measured tables that the axes the family sets make stale.
  void DropStaleMeasurements(Cluster* cluster) const {
    const bool links_change = FamilySets(kNodes) || FamilySets(kGpusPerNode) ||
                              FamilySets(kGpusPerPcieSwitch) || FamilySets(kHostLinkGbps) ||
                              FamilySets(kHostLinkDuplexGbps) || FamilySets(kNvlinkGbps);
    if (links_change) {
      cluster->clear_measured_transfers();
      cluster->clear_measured_collectives();
    }
    if (FamilySets(kGpuType)) cluster->clear_measured_compute();
  }

  absl::StatusOr<ClusterMember> BuildMember(const Choice& choice) const {
    ClusterMember member;
    member.cluster = base_;
    member.price_per_gpu_hour = family_.price_per_gpu_hour();
    const std::vector<std::string> settings = AxisSettings(choice);
    if (settings.empty()) {
      member.label = base_.name();
      DescribeMember(&member);
      return member;
    }
    member.label = absl::StrCat(base_.name(), "[", absl::StrJoin(settings, ","), "]");
    Cluster& cluster = member.cluster;
    cluster.set_name(member.label);
    cluster.set_description(
        absl::StrCat(base_.name(), " rewritten by a sweep: ", absl::StrJoin(settings, ", ")));
    DropStaleMeasurements(&cluster);

    if (FamilySets(kNodes) || FamilySets(kGpusPerNode) || FamilySets(kGpusPerPcieSwitch)) {
      RETURN_IF_ERROR(RebuildTopology(choice, &cluster));
    }
    if (choice[kGpuType] >= 0) {
      const Device& gpu = gpu_types_[choice[kGpuType]].devices(0);
      for (Device& device : *cluster.mutable_devices()) LendGpu(gpu, &device);
      const double gpu_price = family_.gpu_types(choice[kGpuType]).price_per_gpu_hour();
      if (gpu_price > 0) member.price_per_gpu_hour = gpu_price;
    }
    if (choice[kHostLinkGbps] >= 0) {
      const double gbps = family_.host_link_gbps(choice[kHostLinkGbps]);
      for (Device& device : *cluster.mutable_devices()) {
        SetLinkRate(gbps, device.mutable_host_link());
      }
      for (PcieSwitch& pcie_switch : *cluster.mutable_pcie_switches()) {
        SetLinkRate(gbps, pcie_switch.mutable_uplink());
      }
    }
    if (choice[kHostLinkDuplexGbps] >= 0) {
      const double gbps = family_.host_link_duplex_gbps(choice[kHostLinkDuplexGbps]);
      for (Device& device : *cluster.mutable_devices()) {
        device.mutable_host_link()->set_duplex_gbps(gbps);
      }
      for (PcieSwitch& pcie_switch : *cluster.mutable_pcie_switches()) {
        pcie_switch.mutable_uplink()->set_duplex_gbps(gbps);
      }
    }
    if (choice[kNvlinkGbps] >= 0) RETURN_IF_ERROR(SetNvlink(choice, &cluster));
    if (choice[kHostMemoryGib] >= 0) {
      const int64_t bytes = GibToBytes(family_.host_memory_gib(choice[kHostMemoryGib]));
      for (Host& host : *cluster.mutable_hosts()) host.set_memory_bytes(bytes);
    }
    if (choice[kDeviceMemoryGib] >= 0) {
      const int64_t bytes = GibToBytes(family_.device_memory_gib(choice[kDeviceMemoryGib]));
      for (Device& device : *cluster.mutable_devices()) device.set_memory_bytes(bytes);
    }

    const absl::Status valid = ValidateCluster(cluster, member.label);
    if (!valid.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where_, ": member ", valid.message()));
    }
    DescribeMember(&member);
    return member;
  }

  const ClusterFamily& family_;
  const std::string& where_;
  Cluster base_;
  FirstDevice base_first_;          // points into base_
  std::vector<Cluster> gpu_types_;  // family_.gpu_types(i) loaded
};

}  // namespace

absl::StatusOr<std::vector<ClusterMember>> ExpandClusterFamily(const ClusterFamily& family,
                                                               const std::string& where) {
  return FamilyExpander(family, where).Expand();
}

}  // namespace zosched
