#include "schedule/cluster_validate.h"

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "schedule/schedule.pb.h"

namespace zosched {
namespace {

// At most this many names are listed in "(defined: ...)".
constexpr size_t kMaxListedNames = 12;

// "(defined: a, b, c)", shortened for long lists, or "(the cluster defines no
// PLURAL)" for an empty one.
std::string Defined(const std::vector<std::string>& names, const char* plural) {
  if (names.empty()) return absl::StrCat("(the cluster defines no ", plural, ")");
  if (names.size() <= kMaxListedNames) {
    return absl::StrCat("(defined: ", absl::StrJoin(names, ", "), ")");
  }
  std::vector<std::string> head(names.begin(), names.begin() + kMaxListedNames);
  return absl::StrFormat("(defined: %s, ... and %d more)", absl::StrJoin(head, ", "),
                         names.size() - kMaxListedNames);
}

// "device 'gpu3'", or "devices[3]" when the name is empty.
std::string Where(const char* kind, const char* field, int index,
                  const std::string& name) {
  if (name.empty()) return absl::StrFormat("%s[%d]", field, index);
  return absl::StrFormat("%s '%s'", kind, name);
}

// What is wrong with an enum field that holds 0 or an undefined value: "not
// set" for 0 (every enum's *_UNSPECIFIED), else "N, not a value of its
// enum" (proto3 enums are open, so a file may hold any number).
std::string BadEnumText(int value) {
  return value == 0 ? "not set" : absl::StrCat(value, ", not a value of its enum");
}

bool IsPositive(double x) { return x > 0 && std::isfinite(x); }
bool IsNonNegative(double x) { return x >= 0 && std::isfinite(x); }
bool IsFraction(double x) { return x > 0 && x <= 1; }

// Names of the elements of one kind, in file order, and where each is.
struct NameTable {
  const char* kind;    // "device"
  const char* plural;  // "devices" (the Cluster field)
  std::vector<std::string> names;
  std::map<std::string, int> index;

  bool Has(const std::string& name) const { return index.count(name) > 0; }
};

// Checks one Cluster; each method returns the first violation it finds.
class ClusterChecker {
 public:
  ClusterChecker(const Cluster& cluster, const std::string& source)
      : cluster_(cluster), source_(source) {}

  absl::Status Check() {
    if (cluster_.name().empty()) {
      return Fail("", "name is empty (expected e.g. name: \"dgx_a100\")");
    }
    RETURN_IF_ERROR(CheckHosts());
    RETURN_IF_ERROR(CheckPcieSwitches());
    RETURN_IF_ERROR(CheckPeerDomains());
    RETURN_IF_ERROR(CheckNics());
    RETURN_IF_ERROR(CheckLinkNamesDistinct());
    RETURN_IF_ERROR(CheckDevices());
    RETURN_IF_ERROR(CheckCollectives());
    RETURN_IF_ERROR(CheckMeasuredTables());
    return absl::OkStatus();
  }

 private:
  absl::Status Fail(const std::string& where, const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ": cluster '", cluster_.name(), "': ", where,
                     where.empty() ? "" : ": ", what));
  }

  absl::Status Positive(const std::string& where, const std::string& field,
                        double value) const {
    if (IsPositive(value)) return absl::OkStatus();
    return Fail(where, absl::StrFormat("%s is %g (expected > 0)", field, value));
  }

  absl::Status NonNegative(const std::string& where, const std::string& field,
                           double value) const {
    if (IsNonNegative(value)) return absl::OkStatus();
    return Fail(where, absl::StrFormat("%s is %g (expected >= 0)", field, value));
  }

  absl::Status Fraction(const std::string& where, const std::string& field,
                        double value) const {
    if (IsFraction(value)) return absl::OkStatus();
    return Fail(where, absl::StrFormat(
                           "%s is %g (expected a fraction in (0, 1], e.g. 0.8)",
                           field, value));
  }

  // Adds `name` of element `i` to `table`: it must be non-empty and new.
  absl::Status AddName(NameTable* table, int i, const std::string& name) const {
    if (name.empty()) {
      return Fail(absl::StrFormat("%s[%d]", table->plural, i),
                  absl::StrFormat("name is empty (expected a name unique among "
                                  "the cluster's %s)",
                                  table->plural));
    }
    auto [it, inserted] = table->index.emplace(name, i);
    if (!inserted) {
      return Fail(absl::StrFormat("%s '%s'", table->kind, name),
                  absl::StrFormat("defined twice (%s[%d] and %s[%d]); names "
                                  "must be unique",
                                  table->plural, it->second, table->plural, i));
    }
    table->names.push_back(name);
    return absl::OkStatus();
  }

  // `field` (e.g. "pcie_switch") of element `where` names `name`, which must
  // be in `table`.
  absl::Status Resolves(const std::string& where, const char* field,
                        const std::string& name, const NameTable& table) const {
    if (table.Has(name)) return absl::OkStatus();
    if (name.empty()) {
      return Fail(where, absl::StrFormat("%s is empty (expected one of the "
                                         "cluster's %s) %s",
                                         field, table.plural,
                                         Defined(table.names, table.plural)));
    }
    return Fail(where, absl::StrFormat("%s '%s' is not defined %s", field, name,
                                       Defined(table.names, table.plural)));
  }

  absl::Status CheckLink(const std::string& where, const char* field,
                         bool present, const LinkSpec& link) const {
    if (!present) {
      return Fail(where, absl::StrFormat(
                             "%s is not set (expected e.g. %s { link_class: "
                             "PCIE down_gbps: 25 up_gbps: 25 })",
                             field, field));
    }
    if (link.link_class() == LINK_CLASS_UNSPECIFIED || !LinkClass_IsValid(link.link_class())) {
      return Fail(where, absl::StrFormat(
                             "%s.link_class is %s (expected PCIE, NVLINK, "
                             "C2C, NETWORK, HOST_MEMORY or EMULATED)",
                             field, BadEnumText(link.link_class())));
    }
    RETURN_IF_ERROR(Positive(where, absl::StrCat(field, ".down_gbps"), link.down_gbps()));
    RETURN_IF_ERROR(Positive(where, absl::StrCat(field, ".up_gbps"), link.up_gbps()));
    RETURN_IF_ERROR(NonNegative(where, absl::StrCat(field, ".duplex_gbps"),
                                link.duplex_gbps()));
    return NonNegative(where, absl::StrCat(field, ".latency_s"), link.latency_s());
  }

  absl::Status CheckHosts() {
    for (int i = 0; i < cluster_.hosts_size(); ++i) {
      const Host& host = cluster_.hosts(i);
      RETURN_IF_ERROR(AddName(&hosts_, i, host.name()));
      const std::string where = Where("host", "hosts", i, host.name());
      RETURN_IF_ERROR(Positive(where, "memory_bytes", host.memory_bytes()));
      RETURN_IF_ERROR(
          Positive(where, "memory_bandwidth_gbps", host.memory_bandwidth_gbps()));
      RETURN_IF_ERROR(NonNegative(where, "cores", host.cores()));
    }
    return absl::OkStatus();
  }

  absl::Status CheckPcieSwitches() {
    for (int i = 0; i < cluster_.pcie_switches_size(); ++i) {
      const PcieSwitch& sw = cluster_.pcie_switches(i);
      RETURN_IF_ERROR(AddName(&switches_, i, sw.name()));
      const std::string where = Where("pcie_switch", "pcie_switches", i, sw.name());
      RETURN_IF_ERROR(Resolves(where, "host", sw.host(), hosts_));
      RETURN_IF_ERROR(CheckLink(where, "uplink", sw.has_uplink(), sw.uplink()));
    }
    return absl::OkStatus();
  }

  absl::Status CheckPeerDomains() {
    for (int i = 0; i < cluster_.peer_domains_size(); ++i) {
      const PeerDomain& domain = cluster_.peer_domains(i);
      RETURN_IF_ERROR(AddName(&domains_, i, domain.name()));
      const std::string where =
          Where("peer_domain", "peer_domains", i, domain.name());
      if (domain.link_class() == LINK_CLASS_UNSPECIFIED ||
          !LinkClass_IsValid(domain.link_class())) {
        return Fail(where, absl::StrFormat("link_class is %s (expected NVLINK, or EMULATED on the "
                                           "CPU testbed)",
                                           BadEnumText(domain.link_class())));
      }
      RETURN_IF_ERROR(Positive(where, "gbps_per_device", domain.gbps_per_device()));
      RETURN_IF_ERROR(NonNegative(where, "latency_s", domain.latency_s()));
    }
    return absl::OkStatus();
  }

  absl::Status CheckNics() {
    for (int i = 0; i < cluster_.nics_size(); ++i) {
      const Nic& nic = cluster_.nics(i);
      RETURN_IF_ERROR(AddName(&nics_, i, nic.name()));
      const std::string where = Where("nic", "nics", i, nic.name());
      RETURN_IF_ERROR(Resolves(where, "host", nic.host(), hosts_));
      RETURN_IF_ERROR(Positive(where, "gbps", nic.gbps()));
      RETURN_IF_ERROR(NonNegative(where, "in_gbps", nic.in_gbps()));
      RETURN_IF_ERROR(NonNegative(where, "latency_s", nic.latency_s()));
    }
    return absl::OkStatus();
  }

  // MeasuredTransfer.link names a PCIe switch, peer domain or NIC by name
  // alone, so those names must not collide.
  absl::Status CheckLinkNamesDistinct() const {
    const NameTable* tables[] = {&switches_, &domains_, &nics_};
    for (int a = 0; a < 3; ++a) {
      for (int b = a + 1; b < 3; ++b) {
        for (const std::string& name : tables[b]->names) {
          if (!tables[a]->Has(name)) continue;
          return Fail(absl::StrFormat("%s '%s'", tables[b]->kind, name),
                      absl::StrFormat(
                          "has the name of a %s; pcie_switch, peer_domain and "
                          "nic names must differ (MeasuredTransfer.link names "
                          "any of them)",
                          tables[a]->kind));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckDevice(int i) {
    const Device& device = cluster_.devices(i);
    RETURN_IF_ERROR(AddName(&devices_, i, device.name()));
    const std::string where = Where("device", "devices", i, device.name());
    if (device.model().empty()) {
      return Fail(where, "model is empty (expected e.g. model: \"A100-SXM4-80GB\")");
    }
    RETURN_IF_ERROR(Resolves(where, "host", device.host(), hosts_));
    if (device.peaks().empty()) {
      return Fail(where,
                  "has no peaks (expected at least one, e.g. peaks { dtype: FP32 "
                  "peak_tflops: 19.5 efficiency: 0.9 })");
    }
    std::set<int> dtypes;
    for (int p = 0; p < device.peaks_size(); ++p) {
      const ComputePeak& peak = device.peaks(p);
      const std::string field = absl::StrFormat("peaks[%d]", p);
      if (peak.dtype() == DTYPE_UNSPECIFIED || !DType_IsValid(peak.dtype())) {
        return Fail(where, absl::StrFormat("%s.dtype is %s (expected FP32, FP16 or BF16)", field,
                                           BadEnumText(peak.dtype())));
      }
      if (!dtypes.insert(peak.dtype()).second) {
        return Fail(where, absl::StrFormat("%s: a second peak for dtype %s (expected "
                                           "one per dtype)",
                                           field, DType_Name(peak.dtype())));
      }
      RETURN_IF_ERROR(Positive(where, field + ".peak_tflops", peak.peak_tflops()));
      RETURN_IF_ERROR(Fraction(where, field + ".efficiency", peak.efficiency()));
    }
    RETURN_IF_ERROR(Positive(where, "memory_bytes", device.memory_bytes()));
    RETURN_IF_ERROR(
        Positive(where, "memory_bandwidth_gbps", device.memory_bandwidth_gbps()));
    RETURN_IF_ERROR(Fraction(where, "memory_efficiency", device.memory_efficiency()));
    if (device.copy_engines() < 1) {
      return Fail(where, absl::StrFormat("copy_engines is %d (expected >= 1)",
                                         device.copy_engines()));
    }
    RETURN_IF_ERROR(
        NonNegative(where, "stream_wake_latency_s", device.stream_wake_latency_s()));
    RETURN_IF_ERROR(NonNegative(where, "stream_signal_cost_s", device.stream_signal_cost_s()));
    RETURN_IF_ERROR(NonNegative(where, "same_core_wake_latency_s",
                                device.same_core_wake_latency_s()));
    RETURN_IF_ERROR(NonNegative(where, "transfer_cpu_s", device.transfer_cpu_s()));
    RETURN_IF_ERROR(NonNegative(where, "transfer_cpu_gbps", device.transfer_cpu_gbps()));
    RETURN_IF_ERROR(
        NonNegative(where, "collective_cpu_gbps", device.collective_cpu_gbps()));
    RETURN_IF_ERROR(NonNegative(where, "compute_time_scale", device.compute_time_scale()));
    RETURN_IF_ERROR(NonNegative(where, "speed_probe_s", device.speed_probe_s()));
    RETURN_IF_ERROR(NonNegative(where, "interrupt_cpu_s", device.interrupt_cpu_s()));
    if (!(IsNonNegative(device.compute_spread()) && device.compute_spread() < 1)) {
      return Fail(where, absl::StrFormat("compute_spread is %g (expected a fraction in [0, 1), "
                                         "e.g. 0.03)",
                                         device.compute_spread()));
    }
    if (device.has_kernel_model()) {
      const KernelModel& k = device.kernel_model();
      RETURN_IF_ERROR(Positive(where, "kernel_model.sms", k.sms()));
      RETURN_IF_ERROR(Positive(where, "kernel_model.gemm_tile_m", k.gemm_tile_m()));
      RETURN_IF_ERROR(Positive(where, "kernel_model.gemm_tile_n", k.gemm_tile_n()));
      RETURN_IF_ERROR(NonNegative(where, "kernel_model.launch_gap_s", k.launch_gap_s()));
      RETURN_IF_ERROR(
          NonNegative(where, "kernel_model.normal_elements_per_s", k.normal_elements_per_s()));
      RETURN_IF_ERROR(NonNegative(where, "kernel_model.torch_normal_elements_per_s",
                                  k.torch_normal_elements_per_s()));
      RETURN_IF_ERROR(CheckMeasuredGemms(where, k));
    }
    RETURN_IF_ERROR(
        CheckLink(where, "host_link", device.has_host_link(), device.host_link()));
    if (!device.pcie_switch().empty()) {
      RETURN_IF_ERROR(Resolves(where, "pcie_switch", device.pcie_switch(), switches_));
      const PcieSwitch& sw = cluster_.pcie_switches(switches_.index.at(device.pcie_switch()));
      if (sw.host() != device.host()) {
        return Fail(where, absl::StrFormat(
                               "is on host '%s' but its pcie_switch '%s' is on "
                               "host '%s' (expected a switch of host '%s')",
                               device.host(), sw.name(), sw.host(), device.host()));
      }
    }
    if (!device.peer_domain().empty()) {
      RETURN_IF_ERROR(Resolves(where, "peer_domain", device.peer_domain(), domains_));
    }
    if (!device.nic().empty()) {
      RETURN_IF_ERROR(Resolves(where, "nic", device.nic(), nics_));
      const Nic& nic = cluster_.nics(nics_.index.at(device.nic()));
      if (nic.host() != device.host()) {
        return Fail(where, absl::StrFormat(
                               "is on host '%s' but its nic '%s' is on host '%s' "
                               "(expected a NIC of host '%s')",
                               device.host(), nic.name(), nic.host(), device.host()));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckDevices() {
    if (cluster_.devices().empty()) {
      return Fail("", "has no devices (expected at least one devices { ... })");
    }
    for (int i = 0; i < cluster_.devices_size(); ++i) {
      RETURN_IF_ERROR(CheckDevice(i));
    }
    return absl::OkStatus();
  }

  // Link classes whose per-step latency the collective model must give, with
  // the reason, e.g. {NVLINK: "peer_domain 'nvswitch' uses it"}.
  std::map<LinkClass, std::string> NeededStepLatencies() const {
    std::map<LinkClass, std::string> needed;
    for (const PeerDomain& domain : cluster_.peer_domains()) {
      needed.emplace(domain.link_class(),
                     absl::StrFormat("peer_domain '%s' uses it", domain.name()));
    }
    // Devices of one host that share no single peer domain talk over PCIe.
    std::map<std::string, std::vector<const Device*>> by_host;
    for (const Device& device : cluster_.devices()) {
      by_host[device.host()].push_back(&device);
    }
    for (const auto& [host, devices] : by_host) {
      if (devices.size() < 2) continue;
      for (const Device* device : devices) {
        if (device->peer_domain().empty() ||
            device->peer_domain() != devices.front()->peer_domain()) {
          needed.emplace(PCIE, absl::StrFormat(
                                   "devices of host '%s' share no peer domain",
                                   host));
          break;
        }
      }
    }
    if (by_host.size() > 1) {
      needed.emplace(NETWORK, "the devices span more than one host");
    }
    return needed;
  }

  absl::Status CheckCollectives() const {
    const std::string where = "collectives";
    if (!cluster_.has_collectives()) {
      return Fail("", "collectives is not set (expected a CollectiveModel, e.g. "
                      "the NCCL figures of ../shared/reference/hardware.md)");
    }
    const CollectiveModel& model = cluster_.collectives();
    if (model.source().empty()) {
      return Fail(where,
                  "source is empty (expected where the figures come from, e.g. "
                  "\"NCCL 2.30.7 src/graph/tuning.cc\")");
    }
    RETURN_IF_ERROR(
        NonNegative(where, "ring_base_latency_s", model.ring_base_latency_s()));
    RETURN_IF_ERROR(
        NonNegative(where, "tree_base_latency_s", model.tree_base_latency_s()));
    std::set<LinkClass> given;
    for (int i = 0; i < model.step_latencies_size(); ++i) {
      const CollectiveModel::StepLatency& step = model.step_latencies(i);
      const std::string field = absl::StrFormat("step_latencies[%d]", i);
      if (step.link_class() == LINK_CLASS_UNSPECIFIED || !LinkClass_IsValid(step.link_class())) {
        return Fail(where, absl::StrFormat("%s.link_class is %s (expected e.g. NVLINK)", field,
                                           BadEnumText(step.link_class())));
      }
      if (!given.insert(step.link_class()).second) {
        return Fail(where, absl::StrFormat("%s: a second entry for %s (expected "
                                           "one per link class)",
                                           field, LinkClass_Name(step.link_class())));
      }
      RETURN_IF_ERROR(NonNegative(where, field + ".ring_s", step.ring_s()));
      RETURN_IF_ERROR(NonNegative(where, field + ".tree_s", step.tree_s()));
    }
    RETURN_IF_ERROR(Fraction(where, "bus_bandwidth_efficiency",
                             model.bus_bandwidth_efficiency()));
    for (const auto& [link_class, reason] : NeededStepLatencies()) {
      if (given.count(link_class) > 0) continue;
      return Fail(where, absl::StrFormat(
                             "no step_latencies entry for %s, which collectives "
                             "cross because %s (expected step_latencies { "
                             "link_class: %s ring_s: ... tree_s: ... })",
                             LinkClass_Name(link_class), reason,
                             LinkClass_Name(link_class)));
    }
    return absl::OkStatus();
  }

  // Each key of a measured table names one row: a second row for it is a
  // conflict the simulator could only settle by picking one silently.
  template <typename Key>
  absl::Status Unique(std::map<Key, int>* rows, const Key& key, const char* table, int i,
                      const std::string& key_text) const {
    auto [it, inserted] = rows->emplace(key, i);
    if (inserted) return absl::OkStatus();
    return Fail(absl::StrFormat("%s[%d]", table, i),
                absl::StrFormat("has the key of %s[%d] (%s); each key takes one row, so "
                                "remove one or merge them",
                                table, it->second, key_text));
  }

  // A device's measured GEMMs: a set dtype, a shape of positive sizes, a
  // positive time, no shape twice.
  absl::Status CheckMeasuredGemms(const std::string& device, const KernelModel& model) const {
    std::map<std::tuple<int, int64_t, int64_t, int64_t, int64_t>, int> rows;
    for (int i = 0; i < model.measured_gemms_size(); ++i) {
      const MeasuredGemm& g = model.measured_gemms(i);
      const std::string where = absl::StrFormat("%s: kernel_model.measured_gemms[%d]", device, i);
      if (g.dtype() == DTYPE_UNSPECIFIED || !DType_IsValid(g.dtype())) {
        return Fail(where, absl::StrFormat("dtype is %s (expected FP32, FP16 or BF16: the "
                                           "dtype the GEMM computes in)",
                                           DType_IsValid(g.dtype())
                                               ? "not set"
                                               : absl::StrCat(static_cast<int>(g.dtype()))));
      }
      RETURN_IF_ERROR(Positive(where, "m", g.m()));
      RETURN_IF_ERROR(Positive(where, "n", g.n()));
      RETURN_IF_ERROR(Positive(where, "k", g.k()));
      RETURN_IF_ERROR(NonNegative(where, "batch", g.batch()));
      RETURN_IF_ERROR(Positive(where, "seconds", g.seconds()));
      const int64_t batch = std::max<int64_t>(1, g.batch());
      const std::string table = device + ": kernel_model.measured_gemms";
      RETURN_IF_ERROR(Unique(&rows,
                             std::make_tuple(static_cast<int>(g.dtype()), g.m(), g.n(), g.k(),
                                             batch),
                             table.c_str(), i,
                             absl::StrFormat("%s %d x %d x %d, batch %d", DType_Name(g.dtype()),
                                             g.m(), g.n(), g.k(), batch)));
    }
    return absl::OkStatus();
  }

  absl::Status CheckMeasuredTables() const {
    std::map<std::tuple<std::string, std::string, int, int, int64_t, int>, int> compute_rows;
    for (int i = 0; i < cluster_.measured_compute_size(); ++i) {
      const MeasuredCompute& m = cluster_.measured_compute(i);
      const std::string where = absl::StrFormat("measured_compute[%d]", i);
      ComputeKind kind;
      if (!ComputeKind_Parse(m.op_class(), &kind) || kind == COMPUTE_KIND_UNSPECIFIED) {
        return Fail(where, absl::StrFormat(
                               "op_class '%s' is not a ComputeKind (expected UPDATE, EMBED, "
                               "BLOCK_FORWARD, HEAD_LOSS, PROJECTED_GRADIENT or CAST)",
                               m.op_class()));
      }
      RETURN_IF_ERROR(Positive(where, "seconds", m.seconds()));
      RETURN_IF_ERROR(Unique(
          &compute_rows,
          std::make_tuple(m.op_class(), m.model(), m.examples(), m.seq_len(), m.elements(),
                          static_cast<int>(m.dtype())),
          "measured_compute", i,
          absl::StrFormat("op_class %s, model '%s', examples %d, seq_len %d, elements %d, "
                          "dtype %s",
                          m.op_class(), m.model(), m.examples(), m.seq_len(), m.elements(),
                          DType_Name(m.dtype()))));
    }
    std::map<std::pair<std::string, int64_t>, int> transfer_rows;
    for (int i = 0; i < cluster_.measured_transfers_size(); ++i) {
      const MeasuredTransfer& m = cluster_.measured_transfers(i);
      const std::string where = absl::StrFormat("measured_transfers[%d]", i);
      const std::string suffix = "/host_link";
      const bool host_link =
          m.link().size() > suffix.size() &&
          m.link().compare(m.link().size() - suffix.size(), suffix.size(), suffix) == 0 &&
          devices_.Has(m.link().substr(0, m.link().size() - suffix.size()));
      if (!host_link && !switches_.Has(m.link()) && !domains_.Has(m.link()) &&
          !nics_.Has(m.link())) {
        return Fail(where, absl::StrFormat(
                               "link '%s' is not defined (expected \"DEVICE/"
                               "host_link\" for one of the devices, or the name "
                               "of a pcie_switch, peer_domain or nic)",
                               m.link()));
      }
      RETURN_IF_ERROR(Positive(where, "bytes", m.bytes()));
      RETURN_IF_ERROR(Positive(where, "seconds", m.seconds()));
      RETURN_IF_ERROR(Unique(&transfer_rows, std::make_pair(m.link(), m.bytes()),
                             "measured_transfers", i,
                             absl::StrFormat("link '%s', bytes %d", m.link(), m.bytes())));
    }
    std::map<std::tuple<std::string, int, int64_t>, int> collective_rows;
    for (int i = 0; i < cluster_.measured_collectives_size(); ++i) {
      const MeasuredCollective& m = cluster_.measured_collectives(i);
      const std::string where = absl::StrFormat("measured_collectives[%d]", i);
      CollectiveKind kind;
      if (!CollectiveKind_Parse(m.kind(), &kind) || kind == COLLECTIVE_KIND_UNSPECIFIED) {
        return Fail(where, absl::StrFormat("kind '%s' is not a CollectiveKind (expected "
                                           "ALL_GATHER, ALL_REDUCE, REDUCE_SCATTER or "
                                           "BROADCAST)",
                                           m.kind()));
      }
      if (m.ranks() < 2) {
        return Fail(where, absl::StrFormat("ranks is %d (expected >= 2)", m.ranks()));
      }
      RETURN_IF_ERROR(Positive(where, "bytes", m.bytes()));
      RETURN_IF_ERROR(Positive(where, "seconds", m.seconds()));
      RETURN_IF_ERROR(Unique(&collective_rows, std::make_tuple(m.kind(), m.ranks(), m.bytes()),
                             "measured_collectives", i,
                             absl::StrFormat("kind %s, ranks %d, bytes %d", m.kind(), m.ranks(),
                                             m.bytes())));
    }
    return absl::OkStatus();
  }

  const Cluster& cluster_;
  const std::string& source_;
  NameTable hosts_{"host", "hosts"};
  NameTable devices_{"device", "devices"};
  NameTable switches_{"pcie_switch", "pcie_switches"};
  NameTable domains_{"peer_domain", "peer_domains"};
  NameTable nics_{"nic", "nics"};
};

}  // namespace

absl::Status ValidateCluster(const Cluster& cluster, const std::string& source) {
  return ClusterChecker(cluster, source).Check();
}

}  // namespace zosched
