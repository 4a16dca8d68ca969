#include "schedule/schedule_stats.h"

namespace zosched {
namespace {

std::string KindOf(const Op& op) {
  switch (op.kind_case()) {
    case Op::kCompute:
      return ComputeKind_Name(op.compute().kind());
    case Op::kCopy:
      return "copy " + CopyDirection_Name(op.copy().direction());
    case Op::kCollective:
      return CollectiveKind_Name(op.collective().kind());
    default:
      return "empty";
  }
}

// Bytes participant `device` receives in a ring implementation (a
// broadcast's root is its first participant).
int64_t ReceivedBytes(const CollectiveOp& c, int device) {
  const int64_t n = c.participants_size();
  if (n <= 1) return 0;
  switch (c.kind()) {
    case ALL_GATHER:
    case REDUCE_SCATTER:
      return c.bytes() * (n - 1) / n;
    case ALL_REDUCE:
      return 2 * c.bytes() * (n - 1) / n;
    case BROADCAST:
      return c.participants(0) == device ? 0 : c.bytes();
    default:
      return 0;
  }
}

}  // namespace

std::vector<DeviceStats> ComputeDeviceStats(const Schedule& schedule) {
  std::vector<DeviceStats> stats(schedule.devices_size());
  for (const ScheduleDevice& d : schedule.devices()) {
    stats[d.id()].device = d.id();
    stats[d.id()].cluster_device = d.cluster_device();
  }
  for (const Buffer& b : schedule.buffers()) {
    if (b.device() >= 0) stats[b.device()].memory_bytes += b.size_bytes();
  }
  for (const Op& op : schedule.ops()) {
    DeviceStats& s = stats[op.device()];
    ++s.ops_by_kind[KindOf(op)];
    if (op.has_compute()) s.flops += op.compute().flops();
    if (op.has_copy()) {
      switch (op.copy().direction()) {
        case HOST_TO_DEVICE:
          s.h2d_bytes += op.copy().bytes();
          break;
        case DEVICE_TO_HOST:
          s.d2h_bytes += op.copy().bytes();
          break;
        default:
          s.d2d_bytes += op.copy().bytes();
      }
      s.bytes_by_link_class[op.copy().link_class()] += op.copy().bytes();
    }
    if (op.has_collective()) {
      const int64_t received = ReceivedBytes(op.collective(), op.device());
      s.collective_bytes += received;
      s.bytes_by_link_class[op.collective().link_class()] += received;
    }
  }
  return stats;
}

}  // namespace zosched
