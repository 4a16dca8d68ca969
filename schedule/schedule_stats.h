// Per-device totals of a Schedule: what one step computes and moves. Used by
// `inspect`, by tests that pin lowering semantics, and by experiments.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "schedule/schedule.pb.h"

namespace zosched {

struct DeviceStats {
  int device = 0;
  std::string cluster_device;
  std::map<std::string, int> ops_by_kind;  // "BLOCK_FORWARD", "copy H2D", ...
  int64_t flops = 0;
  int64_t h2d_bytes = 0;  // host -> device copy bytes over the host link
  int64_t d2h_bytes = 0;  // device -> host
  int64_t d2d_bytes = 0;  // peer copies sent or received
  // Bytes this device receives through collectives: (n-1)/n of an
  // all-gather's or reduce-scatter's buffer, 2(n-1)/n of an all-reduce's
  // (ring), the whole buffer for a broadcast's non-root.
  int64_t collective_bytes = 0;
  // The copy bytes and received collective bytes above, by the class of
  // link they cross (PCIE, NVLINK, C2C, ...).
  std::map<LinkClass, int64_t> bytes_by_link_class;
  int64_t memory_bytes = 0;  // the memory plan: sum of the device's buffers
};

// Totals per device, in device id order.
std::vector<DeviceStats> ComputeDeviceStats(const Schedule& schedule);

}  // namespace zosched
