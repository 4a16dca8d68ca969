// The structural checks every Cluster passes before the simulator or the
// runtime sees it: a catalog file, a user's file, a calibrated cluster and
// the cluster a Schedule embeds alike.
//
// Units are the IR's (schedule/cluster.proto): `_bytes` bytes, `_gbps` GB/s
// (1e9 bytes per second, never Gbit/s), `_s` seconds, `_tflops` 1e12 FLOP/s.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "schedule/cluster.pb.h"

namespace zosched {

// Returns OK if `cluster` is structurally sound, so that later layers may
// look up every reference without checking again:
// - the cluster has a name and at least one device;
// - every host, device, PCIe switch, peer domain and NIC has a non-empty
//   name, unique among its kind; PCIe switch, peer domain and NIC names are
//   also unique among each other (MeasuredTransfer.link names any of them);
// - every reference resolves: Device.host, Device.pcie_switch,
//   Device.peer_domain, Device.nic, PcieSwitch.host, Nic.host; a device's
//   switch and NIC sit on the device's own host;
// - sizes, bandwidths and peaks are positive (host and device memory_bytes
//   and memory_bandwidth_gbps, every ComputePeak, every link's down/up, a
//   peer domain's gbps_per_device, a NIC's gbps); latencies, duplex caps and
//   host cores are >= 0; a device has at least one ComputePeak, one per
//   dtype, and at least one copy engine;
// - every device has a host_link with link_class set and down/up > 0; every
//   PCIe switch an uplink likewise; every enum field (link classes, peak
//   dtypes) holds one of its enum's values;
// - efficiencies (ComputePeak.efficiency, Device.memory_efficiency,
//   CollectiveModel.bus_bandwidth_efficiency) lie in (0, 1];
// - the CollectiveModel is present, names its source, and has a step latency
//   for each link class collectives may cross: each peer domain's class,
//   PCIE where two devices of one host share no peer domain, NETWORK where
//   devices span more than one host;
// - measured tables name existing links, ComputeKind and CollectiveKind
//   names, and carry positive times; no two rows of a table share a key
//   (compute: op_class, model, examples, seq_len, elements; transfers: link,
//   bytes; collectives: kind, ranks, bytes).
//
// Errors: InvalidArgument "SOURCE: cluster 'NAME': WHERE: WHAT (expected
// ...)", e.g. "clusters/x.pbtxt: cluster 'x': device 'gpu3': pcie_switch
// 'sw9' is not defined (defined: sw0, sw1)", for the first violation found.
// `source` names where the cluster came from (a file path, or "inline").
absl::Status ValidateCluster(const Cluster& cluster, const std::string& source);

}  // namespace zosched
