#include "sim/compute_speed.h"

namespace zosched {

ComputeSpeed ComputeSpeed::Build(const Schedule& schedule, const std::vector<int>& cluster_index) {
  ComputeSpeed s;
  const int devices = schedule.devices_size();
  s.slowdown_under_comm_.assign(devices, 1);
  s.comm_running_.assign(devices, 0);
  for (int d = 0; d < devices; ++d) {
    const Device& device = schedule.cluster().devices(cluster_index[d]);
    if (device.compute_slowdown_under_comm() > 1) {
      s.slowdown_under_comm_[d] = device.compute_slowdown_under_comm();
    }
  }
  return s;
}

}  // namespace zosched
