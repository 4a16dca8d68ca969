#include "sim/step_floor.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "sim/cost_model.h"

namespace zosched {
namespace {

// Bytes over a rate in GB/s, in whole nanoseconds (rounded down: a bound).
int64_t TransferFloorNs(double bytes, double gbps) {
  return gbps > 0 ? static_cast<int64_t>(std::floor(bytes / gbps)) : 0;
}

}  // namespace

absl::StatusOr<int64_t> StepFloorNs(const Schedule& schedule) {
  ASSIGN_OR_RETURN(const CostModel costs, CostModel::Build(schedule));
  std::map<std::pair<int, std::string>, int64_t> compute_by_stream;
  std::vector<double> down_bytes(schedule.devices_size()), up_bytes(schedule.devices_size());
  for (const Op& op : schedule.ops()) {
    if (op.has_compute()) {
      ASSIGN_OR_RETURN(const int64_t ns, costs.ComputeNs(op));
      compute_by_stream[{op.device(), op.stream()}] += ns;
    } else if (op.has_copy() && op.copy().direction() == HOST_TO_DEVICE) {
      down_bytes[op.device()] += op.copy().bytes();
    } else if (op.has_copy() && op.copy().direction() == DEVICE_TO_HOST) {
      up_bytes[op.device()] += op.copy().bytes();
    }
  }
  int64_t floor_ns = 0;
  for (const auto& [stream, ns] : compute_by_stream) floor_ns = std::max(floor_ns, ns);
  if (schedule.cluster().measured_transfers_size() > 0) return floor_ns;
  for (int d = 0; d < schedule.devices_size(); ++d) {
    const LinkSpec& link = schedule.cluster().devices(costs.ClusterIndex(d)).host_link();
    floor_ns = std::max({floor_ns, TransferFloorNs(down_bytes[d], link.down_gbps()),
                         TransferFloorNs(up_bytes[d], link.up_gbps()),
                         TransferFloorNs(down_bytes[d] + up_bytes[d], link.duplex_gbps())});
  }
  return floor_ns;
}

}  // namespace zosched
