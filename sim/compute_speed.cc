#include "sim/compute_speed.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "schedule/cluster_lookup.h"

namespace zosched {

absl::StatusOr<ComputeSpeed> ComputeSpeed::Build(const Schedule& schedule,
                                                  const std::vector<int>& cluster_index) {
  ComputeSpeed s;
  const int devices = schedule.devices_size();
  s.slowdown_under_comm_.assign(devices, 1);
  s.comm_running_.assign(devices, 0);
  s.core_group_.assign(devices, -1);
  absl::flat_hash_map<std::string, int> group_of_host;
  for (int d = 0; d < devices; ++d) {
    const Device& device = schedule.cluster().devices(cluster_index[d]);
    if (device.compute_slowdown_under_comm() > 1) {
      s.slowdown_under_comm_[d] = device.compute_slowdown_under_comm();
    }
    if (!device.shares_host_cores()) continue;
    auto [it, inserted] = group_of_host.emplace(device.host(), s.group_cores_.size());
    if (inserted) {
      const Host* host = FindHost(schedule.cluster(), device.host());
      const double cores = host != nullptr ? host->cores() : 0;
      if (cores <= 0) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "device '%s' shares its host's cores, but host '%s' has no `cores`", device.name(),
            device.host()));
      }
      s.group_cores_.push_back(cores);
      s.group_slowdown_.push_back(std::max(1.0, host->shared_core_slowdown()));
      s.group_computing_.push_back(0);
      s.group_transferring_.push_back(0);
    }
    s.core_group_[d] = it->second;
  }
  s.mates_.resize(devices);
  for (int d = 0; d < devices; ++d) {
    if (s.core_group_[d] < 0) {
      s.mates_[d] = {d};
      continue;
    }
    for (int other = 0; other < devices; ++other) {
      if (s.core_group_[other] == s.core_group_[d]) s.mates_[d].push_back(other);
    }
  }
  return s;
}

const std::vector<int>& ComputeSpeed::CoreMates(int device) const { return mates_[device]; }

bool ComputeSpeed::ComputeStarted(int device) {
  if (core_group_[device] < 0) return false;
  ++group_computing_[core_group_[device]];
  return true;
}

bool ComputeSpeed::ComputeEnded(int device) {
  if (core_group_[device] < 0) return false;
  --group_computing_[core_group_[device]];
  return true;
}

bool ComputeSpeed::TransferCpuChanged(int device, int delta) {
  if (core_group_[device] < 0) return false;
  group_transferring_[core_group_[device]] += delta;
  return true;
}

double ComputeSpeed::Speed(int device) const {
  double speed = comm_running_[device] > 0 ? 1 / slowdown_under_comm_[device] : 1;
  const int group = core_group_[device];
  if (group < 0) return speed;
  const int computing = group_computing_[group];
  const double cores = std::max(0.0, group_cores_[group] - group_transferring_[group]);
  if (computing > cores) speed *= cores / computing;
  if (computing >= 2) speed /= group_slowdown_[group];
  return speed;
}

}  // namespace zosched
