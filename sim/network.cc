#include "sim/network.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace zosched {
namespace {

// Least-squares fit of seconds = latency + bytes / rate over a link's
// measured points. Returns {latency_s, rate_gbps}.
absl::StatusOr<std::pair<double, double>> FitTransfers(
    const std::string& link, const std::vector<const MeasuredTransfer*>& points) {
  double n = points.size(), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const MeasuredTransfer* p : points) {
    const double x = p->bytes(), y = p->seconds();
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double denominator = n * sxx - sx * sx;
  if (points.size() < 2 || denominator <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "measured_transfers for '%s': need points at two or more sizes to fit "
        "latency + bytes / rate",
        link));
  }
  const double slope = (n * sxy - sx * sy) / denominator;  // seconds per byte
  const double intercept = (sy - slope * sx) / n;
  if (!(slope > 0)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "measured_transfers for '%s': time does not grow with size (fitted "
        "%g s/byte)",
        link, slope));
  }
  return std::make_pair(std::max(0.0, intercept), 1.0 / slope / 1e9);
}

}  // namespace

int Network::AddLink(std::string name, LinkClass link_class, double capacity) {
  links_.push_back({std::move(name), link_class, capacity});
  return links_.size() - 1;
}

absl::StatusOr<Network> Network::Build(const Cluster& cluster) {
  Network net;
  net.pcie_peer_access_ = cluster.pcie_peer_access();
  // At most: memory per host; down, up, duplex per switch uplink; out, in
  // per NIC; down, up, duplex, peer out, peer in per device.
  net.links_.reserve(cluster.hosts_size() + 3 * cluster.pcie_switches_size() +
                     2 * cluster.nics_size() + 5 * cluster.devices_size());
  absl::flat_hash_map<absl::string_view, int> host_memory, host_index, switch_index, domain_index,
      nic_index;
  for (const Host& h : cluster.hosts()) {
    host_index[h.name()] = host_index.size();
    host_memory[h.name()] =
        net.AddLink(absl::StrCat(h.name(), "/memory"), HOST_MEMORY, h.memory_bandwidth_gbps());
  }
  struct SwitchLinks {
    int down, up, duplex;
  };
  std::vector<SwitchLinks> switches;
  for (const PcieSwitch& s : cluster.pcie_switches()) {
    switch_index[s.name()] = switches.size();
    const LinkSpec& u = s.uplink();
    SwitchLinks l;
    l.down = net.AddLink(absl::StrCat(s.name(), "/uplink down"), u.link_class(), u.down_gbps());
    l.up = net.AddLink(absl::StrCat(s.name(), "/uplink up"), u.link_class(), u.up_gbps());
    l.duplex = u.duplex_gbps() > 0 ? net.AddLink(absl::StrCat(s.name(), "/uplink duplex"),
                                                 u.link_class(), u.duplex_gbps())
                                   : -1;
    switches.push_back(l);
  }
  for (const PeerDomain& d : cluster.peer_domains()) {
    domain_index[d.name()] = net.peer_domain_latency_ns_.size();
    net.peer_domain_latency_ns_.push_back(CeilNs(d.latency_s()));
    net.peer_domain_class_.push_back(d.link_class());
  }
  std::vector<std::pair<int, int>> nics;
  for (const Nic& n : cluster.nics()) {
    nic_index[n.name()] = nics.size();
    nics.push_back({net.AddLink(absl::StrCat(n.name(), " out"), NETWORK, n.gbps()),
                    net.AddLink(absl::StrCat(n.name(), " in"), NETWORK,
                                n.in_gbps() > 0 ? n.in_gbps() : n.gbps())});
    net.nic_latency_ns_.push_back(CeilNs(n.latency_s()));
  }
  // Measured host links, by device name.
  absl::flat_hash_map<absl::string_view, std::vector<const MeasuredTransfer*>> measured;
  for (const MeasuredTransfer& m : cluster.measured_transfers()) {
    measured[m.link()].push_back(&m);
  }
  for (const Device& dev : cluster.devices()) {
    DeviceLinks d;
    d.host = host_index.at(dev.host());
    d.memory = host_memory.at(dev.host());
    const LinkSpec& h = dev.host_link();
    double down = h.down_gbps(), up = h.up_gbps(), latency_s = h.latency_s();
    const std::string link_name = absl::StrCat(dev.name(), "/host_link");
    if (auto it = measured.find(link_name); it != measured.end()) {
      absl::StatusOr<std::pair<double, double>> fit = FitTransfers(link_name, it->second);
      if (!fit.ok()) return fit.status();
      latency_s = fit->first;
      down = up = fit->second;
    }
    d.down = net.AddLink(absl::StrCat(link_name, " down"), h.link_class(), down);
    d.up = net.AddLink(absl::StrCat(link_name, " up"), h.link_class(), up);
    if (h.duplex_gbps() > 0) {
      d.duplex = net.AddLink(absl::StrCat(link_name, " duplex"), h.link_class(), h.duplex_gbps());
    }
    d.host_link_latency_ns = CeilNs(latency_s);
    d.host_link_class = h.link_class();
    if (!dev.pcie_switch().empty()) {
      d.switch_index = switch_index.at(dev.pcie_switch());
      const SwitchLinks& s = switches[d.switch_index];
      d.sw_down = s.down;
      d.sw_up = s.up;
      d.sw_duplex = s.duplex;
    }
    if (!dev.peer_domain().empty()) {
      d.peer_domain = domain_index.at(dev.peer_domain());
      const PeerDomain& pd = cluster.peer_domains(d.peer_domain);
      d.peer_out = net.AddLink(absl::StrCat(dev.name(), "/", pd.name(), " out"), pd.link_class(),
                               pd.gbps_per_device());
      d.peer_in = net.AddLink(absl::StrCat(dev.name(), "/", pd.name(), " in"), pd.link_class(),
                              pd.gbps_per_device());
    }
    if (!dev.nic().empty()) {
      const int n = nic_index.at(dev.nic());
      d.nic_out = nics[n].first;
      d.nic_in = nics[n].second;
      net.device_nic_.push_back(n);
    } else {
      net.device_nic_.push_back(-1);
    }
    net.devices_.push_back(d);
  }
  return net;
}

Path Network::HostToDevice(int device) const {
  const DeviceLinks& d = devices_[device];
  Path p;
  p.links.reserve(5);
  p.links.push_back(d.memory);
  for (int l : {d.sw_down, d.sw_duplex, d.down, d.duplex}) {
    if (l >= 0) p.links.push_back(l);
  }
  p.latency_ns = d.host_link_latency_ns;
  p.link_class = d.host_link_class;
  return p;
}

Path Network::DeviceToHost(int device) const {
  const DeviceLinks& d = devices_[device];
  Path p;
  p.links.reserve(5);
  for (int l : {d.up, d.duplex, d.sw_up, d.sw_duplex}) {
    if (l >= 0) p.links.push_back(l);
  }
  p.links.push_back(d.memory);
  p.latency_ns = d.host_link_latency_ns;
  p.link_class = d.host_link_class;
  return p;
}

absl::StatusOr<Path> Network::DeviceToDevice(int from, int to) const {
  const DeviceLinks& a = devices_[from];
  const DeviceLinks& b = devices_[to];
  Path p;
  if (a.peer_domain >= 0 && a.peer_domain == b.peer_domain) {
    p.links = {a.peer_out, b.peer_in};
    p.latency_ns = peer_domain_latency_ns_[a.peer_domain];
    p.link_class = peer_domain_class_[a.peer_domain];
    return p;
  }
  auto add = [&p](std::initializer_list<int> links) {
    for (int l : links) {
      if (l >= 0) p.links.push_back(l);
    }
  };
  add({a.up, a.duplex});
  if (a.host == b.host) {
    const bool same_switch = a.switch_index >= 0 && a.switch_index == b.switch_index;
    if (!same_switch || !pcie_peer_access_) add({a.sw_up, a.sw_duplex});
    // Without peer access the data is staged through host memory.
    if (!pcie_peer_access_) add({a.memory});
    if (!same_switch || !pcie_peer_access_) add({b.sw_down, b.sw_duplex});
    p.latency_ns = std::max(a.host_link_latency_ns, b.host_link_latency_ns) *
                   (pcie_peer_access_ ? 1 : 2);
    p.link_class = a.host_link_class;
  } else {
    if (a.nic_out < 0 || b.nic_in < 0) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "no route from device %d to device %d: they are on different hosts "
          "and %s has no NIC (Device.nic)",
          from, to, a.nic_out < 0 ? "the first" : "the second"));
    }
    add({a.nic_out, b.nic_in});
    p.latency_ns = nic_latency_ns_[device_nic_[from]] + a.host_link_latency_ns;
    p.link_class = NETWORK;
  }
  add({b.down, b.duplex});
  return p;
}

}  // namespace zosched
