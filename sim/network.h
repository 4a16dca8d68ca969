// The links of a Cluster as the simulator sees them and the path a transfer
// takes over them (sharing their capacity: sim/flow_sharing.h). Immutable
// once built.
//
// Units: capacities are bytes per nanosecond, which equals GB/s (1e9 B/s),
// so a cluster's `_gbps` figures are used as they are. Latencies are whole
// nanoseconds.
//
// Links (each a capacity that every transfer crossing it shares):
//   "<host>/memory"                 the host's DRAM, both directions together
//   "<device>/host_link down|up"    the device's own host link, per direction
//   "<device>/host_link duplex"     down + up together (when duplex_gbps > 0)
//   "<switch>/uplink down|up|duplex" a PCIe switch's uplink
//   "<device>/<domain> out|in"      the device's port into its peer domain
//   "<nic> out|in"                  a NIC, per direction
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schedule/cluster.pb.h"

namespace zosched {

struct SimLink {
  std::string name;
  LinkClass link_class = LINK_CLASS_UNSPECIFIED;
  double capacity = 0;  // bytes per ns (= GB/s)
};

// A route: the links a transfer crosses and its fixed latency.
struct Path {
  std::vector<int> links;  // indices into Network::links()
  int64_t latency_ns = 0;
  LinkClass link_class = LINK_CLASS_UNSPECIFIED;  // the class that dominates
                                                  // (NVLINK, PCIE, NETWORK, ...)
};

class Network {
 public:
  // Builds the links of `cluster` (validated by ValidateCluster). Measured
  // transfer tables for "<device>/host_link" replace that host link's
  // capacity and latency by the least-squares fit of seconds = latency +
  // bytes / rate over the table's points.
  //
  // Errors: InvalidArgument for a measured table that cannot be fitted (fewer
  // than two distinct sizes, or a non-positive fitted rate), naming the link.
  static absl::StatusOr<Network> Build(const Cluster& cluster);

  const std::vector<SimLink>& links() const { return links_; }

  // Host memory -> (PCIe switch uplink) -> the device's host link.
  Path HostToDevice(int device) const;
  // The reverse.
  Path DeviceToHost(int device) const;
  // Device `from` -> device `to` (indices into cluster.devices()): over
  // their shared peer domain; else over PCIe on one host (through host
  // memory when the cluster has no PCIe peer access); else over their NICs.
  //
  // Errors: FailedPrecondition naming the devices when no route exists (two
  // hosts and a device without a NIC).
  absl::StatusOr<Path> DeviceToDevice(int from, int to) const;

 private:
  struct DeviceLinks {
    int host = -1;          // index of the host
    int memory = -1;        // the host's memory link
    int down = -1, up = -1, duplex = -1;            // host link
    int sw_down = -1, sw_up = -1, sw_duplex = -1;   // switch uplink
    int switch_index = -1;
    int peer_domain = -1;
    int peer_out = -1, peer_in = -1;
    int nic_out = -1, nic_in = -1;
    int64_t host_link_latency_ns = 0;
    LinkClass host_link_class = LINK_CLASS_UNSPECIFIED;
  };

  int AddLink(std::string name, LinkClass link_class, double capacity);

  std::vector<SimLink> links_;
  std::vector<DeviceLinks> devices_;
  std::vector<int64_t> peer_domain_latency_ns_;
  std::vector<LinkClass> peer_domain_class_;
  std::vector<int64_t> nic_latency_ns_;
  std::vector<int> device_nic_;
  bool pcie_peer_access_ = false;
};

// static_cast<int64_t>(std::ceil(x)) for |x| < 2^63, inline: std::ceil is a
// call on a CPU not assumed to have SSE4.1, and the simulator rounds every
// op's and flow's end up.
inline int64_t CeilToInt64(double x) {
  const int64_t toward_zero = static_cast<int64_t>(x);
  return toward_zero + (static_cast<double>(toward_zero) < x);
}

// Seconds to whole nanoseconds, rounding up (a transfer or op never takes
// less than its modelled time).
inline int64_t CeilNs(double seconds) { return CeilToInt64(seconds * 1e9 - 1e-6); }

}  // namespace zosched
