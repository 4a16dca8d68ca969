// Cluster families: a base cluster and the axes that rewrite it
// (experiments/sweep.proto, message ClusterFamily), expanded into the
// validated clusters //experiments:explore lowers and simulates. This module
// only builds clusters; it simulates nothing.
//
// Units as in schedule/cluster.proto and experiments/sweep.proto: `_gbps`
// GB/s (1e9 bytes per second, never Gbit/s) per direction; `_gib` GiB (2^30
// bytes; memory sold as "N GB" is N GiB); prices in dollars per GPU-hour.
//
// How each axis rewrites the base (the base and every gpu type are loaded
// with LoadCluster: a catalog name or a Cluster file). Axes apply in this
// order, so e.g. device_memory_gib overrides the gpu type's memory:
//
// - Topology (nodes, gpus_per_node, gpus_per_pcie_switch): when the family
//   sets any of them, every member is rebuilt from the base's first device
//   d0, its host, PCIe switch, NVLink domain and NIC (the base is taken to
//   be homogeneous: every device a copy of d0): `nodes` hosts host0, host1,
//   ... (copies of d0's host); on each, `gpus_per_node` copies of d0 named
//   gpu0, gpu1, ... across hosts; one NVLink domain per host, "host0_nvlink",
//   "host1_nvlink", ... (copies of d0's; none when d0 has none); one NIC per
//   device, nic0, nic1, ..., on the device's host (copies of d0's; none when
//   d0 has none); and PCIe switches pcie_sw0, pcie_sw1, ..., each shared by
//   `gpus_per_pcie_switch` consecutive devices of one host (copies of d0's
//   switch, uplink included; 0: no switches). An axis the family leaves
//   empty takes the base's figure: nodes = hosts with devices, gpus_per_node
//   = devices on d0's host, gpus_per_pcie_switch = devices behind d0's
//   switch (0 without one). A base whose NVLink domain spans hosts
//   (gb200_nvl72) is rebuilt with one domain per host all the same.
//   Cluster-wide fields (pcie_peer_access, collectives, measured_compute)
//   are kept.
// - gpu_types: every device takes the gpu type cluster's first device's
//   model, peaks, memory_bytes, memory_bandwidth_gbps, memory_efficiency,
//   copy_engines, compute_slowdown_under_comm, stream_wake_latency_s,
//   stream_signal_cost_s, transfer_cpu_s, transfer_cpu_gbps,
//   collective_cpu_gbps, interrupt_cpu_s and kernel_model (what kernel-level compute profiles
//   cost kernels with); host links, switches, NVLink and NICs stay the
//   base's (the platform).
// - host_link_gbps: down_gbps and up_gbps of every device's host link and of
//   every PCIe switch uplink. Each link's duplex cap keeps its ratio to
//   down_gbps (0, full duplex, stays 0) unless host_link_duplex_gbps is set.
// - host_link_duplex_gbps: duplex_gbps of every host link and uplink (0:
//   full duplex). As in ValidateCluster, any cap >= 0 is accepted; one below
//   the per-direction rate also slows one-way copies (as gh200's does).
// - nvlink_gbps: 0 removes every NVLink domain (and each device's
//   peer_domain); > 0 sets every domain's gbps_per_device.
// - host_memory_gib / device_memory_gib: memory_bytes = value × 2^30,
//   rounded to whole bytes, of every host / device.
//
// Measured tables that no longer describe a member are dropped: an axis that
// changes links (topology, host_link_gbps, host_link_duplex_gbps,
// nvlink_gbps) drops measured_transfers and measured_collectives (they timed
// the old links and would override the new figures in the simulator); a gpu
// type drops measured_compute (it timed another GPU).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/sweep.pb.h"
#include "schedule/cluster.pb.h"

namespace zosched {

// One member of a cluster family: a validated Cluster and the figures that
// describe it in the explorer's CSV (taken from the built cluster, whether an
// axis set them or the base had them).
struct ClusterMember {
  Cluster cluster;  // name = label
  // "dgx_a100" or "dgx_a100[nodes=2,host_link_gbps=16]": base name + the axis values set
  std::string label;
  double price_per_gpu_hour = 0;  // the gpu type's price if set, else the family's
  int nodes = 0;                  // hosts that have devices
  int gpus_per_node = 0;          // devices on the first device's host
  std::string gpu_model;          // first device's Device.model
  double host_link_gbps = 0;      // first device's host_link.down_gbps
  double host_link_duplex_gbps = 0;
  double nvlink_gbps = 0;        // its peer domain's gbps_per_device, 0 without one
  int gpus_per_pcie_switch = 0;  // devices behind its PCIe switch, 0 without one
  double host_memory_gib = 0;    // its host's memory
  double device_memory_gib = 0;
};

// Every member of `family`, in the order of the Cartesian product of its axes
// (gpu_types, nodes, gpus_per_node, gpus_per_pcie_switch, host_link_gbps,
// host_link_duplex_gbps, nvlink_gbps, host_memory_gib, device_memory_gib; the last axis
// varies fastest).
// `where` names the family in errors, e.g. "sweeps/x.pbtxt: clusters[1]".
//
// A family without axes gives one member: the base, unchanged. Otherwise a
// member's label and Cluster.name are "BASE[k=v,...]" with the axes the
// family set, in the order above, numbers printed with %g and a gpu type as
// gpu=<its cluster's name>, e.g. "dgx_a100[gpu=hgx_h100,host_link_gbps=16]";
// its description says it was derived ("dgx_a100 rewritten by a sweep:
// gpu=hgx_h100, host_link_gbps=16").
//
// Errors (each names `where` and the field, e.g. "sweeps/x.pbtxt:
// clusters[1].host_link_gbps[2]: -3: expected a positive GB/s per
// direction"):
// - InvalidArgument for an empty base or gpu type cluster, a negative or
//   non-finite price or axis value, nodes or gpus_per_node below 1,
//   host_link_gbps or a memory size not above 0, a memory size above 1e9 GiB;
// - InvalidArgument for a topology the base cannot give: gpus_per_pcie_switch
//   not dividing gpus_per_node, gpus_per_pcie_switch > 0 on a base without a
//   PCIe switch, nodes > 1 on a base whose first device has no NIC, more than
//   4096 devices; and for nvlink_gbps > 0 on a base without an NVLink domain;
// - InvalidArgument when two members would share a label (an axis lists a
//   value twice, two values print alike, or two gpu types load clusters of
//   one name), naming both;
// - InvalidArgument "WHERE: member LABEL: cluster 'LABEL': ..." when a member
//   fails ValidateCluster (e.g. a memory size that rounds to 0 bytes, or
//   collectives without the step latency a new topology needs);
// - LoadCluster's error, its code kept, after "WHERE.base: " or
//   "WHERE.gpu_types[i].cluster: ", for a cluster that does not load.
absl::StatusOr<std::vector<ClusterMember>> ExpandClusterFamily(const ClusterFamily& family,
                                                               const std::string& where);

}  // namespace zosched
