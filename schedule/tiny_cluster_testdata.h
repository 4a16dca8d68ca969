// A small valid Cluster in text, for the tests of cluster loading and
// validation: one host, two GPUs behind two PCIe switches, one NVLink
// domain, one NIC, a collective model.
#pragma once

namespace zosched {

inline constexpr char kTinyCluster[] = R"pb(
  name: "tiny"
  hosts { name: "h0" memory_bytes: 1000000 memory_bandwidth_gbps: 10 cores: 2 }
  pcie_switches {
    name: "sw0"
    host: "h0"
    uplink { link_class: PCIE down_gbps: 25 up_gbps: 25 }
  }
  pcie_switches {
    name: "sw1"
    host: "h0"
    uplink { link_class: PCIE down_gbps: 25 up_gbps: 25 }
  }
  peer_domains { name: "nvl" link_class: NVLINK gbps_per_device: 300 }
  nics { name: "nic0" host: "h0" gbps: 25 }
  devices {
    name: "gpu0" model: "X" host: "h0" pcie_switch: "sw0" peer_domain: "nvl" nic: "nic0"
    peaks { dtype: BF16 peak_tflops: 100 efficiency: 0.8 }
    memory_bytes: 1000 memory_bandwidth_gbps: 1000 memory_efficiency: 0.9 copy_engines: 2
    host_link { link_class: PCIE down_gbps: 25 up_gbps: 25 duplex_gbps: 37 }
  }
  devices {
    name: "gpu1" model: "X" host: "h0" pcie_switch: "sw1" peer_domain: "nvl"
    peaks { dtype: BF16 peak_tflops: 100 efficiency: 0.8 }
    memory_bytes: 1000 memory_bandwidth_gbps: 1000 memory_efficiency: 0.9 copy_engines: 2
    host_link { link_class: PCIE down_gbps: 25 up_gbps: 25 }
  }
  collectives {
    source: "test"
    step_latencies { link_class: NVLINK ring_s: 3.4e-6 tree_s: 4e-6 }
    bus_bandwidth_efficiency: 0.8
  }
)pb";

}  // namespace zosched
