// The cluster catalog: the Cluster textprotos under clusters/, compiled into
// the binary, loading a Cluster by catalog name or from a user's file, and the
// structural checks every Cluster passes before the simulator or the runtime
// sees it.
//
// Units are the IR's (schedule/cluster.proto): `_bytes` bytes, `_gbps` GB/s
// (1e9 bytes per second, never Gbit/s), `_s` seconds, `_tflops` 1e12 FLOP/s.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schedule/cluster.pb.h"

namespace zosched {

// Names of the catalog's clusters (each file's `name`, equal to its file
// stem), sorted, e.g. {"dgx_a100", "gb200_nvl72", ..., "rtx4090_x8"}.
std::vector<std::string> CatalogClusterNames();

// Where the catalog entry `name` came from ("clusters/NAME.pbtxt"), or "" if
// `name` is not in the catalog.
std::string CatalogClusterPath(const std::string& name);

// Returns the validated Cluster for `name_or_path`: a catalog name, else a
// path to a Cluster textproto (a relative path is taken from where the user
// typed the command, see base/user_path.h).
//
// Errors:
// - NotFound "unknown cluster 'X'; known clusters: a, b, ...; or pass the path
//   of a Cluster textproto" when it is neither a catalog name nor a file;
// - InvalidArgument "FILE:LINE:COLUMN: parser message" for a malformed file;
// - InvalidArgument from ValidateCluster for a well-formed but impossible
//   cluster, naming the file, the element and the field.
absl::StatusOr<Cluster> LoadCluster(const std::string& name_or_path);

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
//   PCIe switch an uplink likewise;
// - efficiencies (ComputePeak.efficiency, Device.memory_efficiency,
//   CollectiveModel.bus_bandwidth_efficiency) lie in (0, 1];
// - the CollectiveModel is present, names its source, and has a step latency
//   for each link class collectives may cross: each peer domain's class,
//   PCIE where two devices of one host share no peer domain, NETWORK where
//   devices span more than one host;
// - measured tables name existing links and carry positive times.
//
// Errors: InvalidArgument "SOURCE: cluster 'NAME': WHERE: WHAT (expected
// ...)", e.g. "clusters/x.pbtxt: cluster 'x': device 'gpu3': pcie_switch
// 'sw9' is not defined (defined: sw0, sw1)", for the first violation found.
// `source` names where the cluster came from (a file path, or "inline").
absl::Status ValidateCluster(const Cluster& cluster, const std::string& source);

// The device of `cluster` named `name`, or nullptr if there is none. The
// pointer is valid while `cluster` is alive and unmodified.
const Device* FindDevice(const Cluster& cluster, const std::string& name);

// The host of `cluster` named `name`, or nullptr if there is none. The pointer
// is valid while `cluster` is alive and unmodified.
const Host* FindHost(const Cluster& cluster, const std::string& name);

}  // namespace zosched
