#include "sim/host_cores.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "schedule/cluster_lookup.h"

namespace zosched {

absl::StatusOr<HostCores> HostCores::Build(const Schedule& schedule,
                                           const std::vector<int>& cluster_index) {
  HostCores s;
  const int devices = schedule.devices_size();
  s.host_.assign(devices, -1);
  s.core_.assign(devices, -1);
  s.transfer_core_.assign(devices, -1);
  // Per host (in order of first appearance): its core-sharing devices, in
  // schedule device order (the runtime's node ranks).
  absl::flat_hash_map<std::string, int> host_index;
  std::vector<std::vector<int>> host_devices;
  std::vector<const Host*> hosts;
  for (int d = 0; d < devices; ++d) {
    const Device& device = schedule.cluster().devices(cluster_index[d]);
    if (!device.shares_host_cores()) continue;
    auto [it, inserted] = host_index.emplace(device.host(), hosts.size());
    if (inserted) {
      const Host* host = FindHost(schedule.cluster(), device.host());
      if (host == nullptr || host->cores() <= 0) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "device '%s' shares its host's cores, but host '%s' has no `cores`", device.name(),
            device.host()));
      }
      hosts.push_back(host);
      host_devices.emplace_back();
      s.host_slowdown_.push_back(std::max(1.0, host->shared_core_slowdown()));
      s.host_computing_.push_back(0);
    }
    s.host_[d] = it->second;
    host_devices[it->second].push_back(d);
  }
  s.mates_.resize(devices);
  for (int d = 0; d < devices; ++d) s.mates_[d] = {d};
  for (size_t h = 0; h < hosts.size(); ++h) {
    const std::vector<int>& members = host_devices[h];
    const int cores = hosts[h]->cores();
    const int first_core = s.core_computing_.size();
    const int used = std::min<int>(cores, members.size());
    s.core_computing_.resize(first_core + used);
    s.core_transferring_.resize(first_core + used, 0);
    for (size_t i = 0; i < members.size(); ++i) {
      const int d = members[i];
      s.core_[d] = first_core + static_cast<int>(i) % cores;
      // Without a core to spare, the transfer threads run on the device's own
      // core (with one, they run there and take nothing from compute).
      if (static_cast<int>(members.size()) >= cores) s.transfer_core_[d] = s.core_[d];
      s.mates_[d] = members;
    }
  }
  return s;
}

bool HostCores::ComputeStarted(int device) {
  if (core_[device] < 0) return false;
  core_computing_[core_[device]].push_back(device);
  ++host_computing_[host_[device]];
  return true;
}

bool HostCores::ComputeEnded(int device) {
  if (core_[device] < 0) return false;
  std::vector<int>& computing = core_computing_[core_[device]];
  const auto op = std::find(computing.begin(), computing.end(), device);
  if (op != computing.end()) computing.erase(op);
  --host_computing_[host_[device]];
  return true;
}

bool HostCores::TakeCore(int core, int delta) {
  if (core < 0) return false;
  core_transferring_[core] += delta;
  return true;
}

bool HostCores::TransferCpuChanged(int device, int delta) {
  return TakeCore(transfer_core_[device], delta);
}

bool HostCores::SignalCpuChanged(int device, bool compute, int delta) {
  return TakeCore(compute ? core_[device] : transfer_core_[device], delta);
}

double HostCores::Speed(int device, double alone) const {
  double speed = alone;
  const int core = core_[device];
  if (core < 0) return speed;
  // Waiting behind the core's latest op; or running, with the device's other
  // ops there (compute streams of one device share its core evenly), on
  // what transfers and wake-ups leave of the core.
  const std::vector<int>& computing = core_computing_[core];
  if (!computing.empty() && computing.back() != device) return 0;
  const double left = std::clamp(1.0 - core_transferring_[core], 0.0, 1.0);
  speed *= left / std::max<int64_t>(1, std::count(computing.begin(), computing.end(), device));
  if (host_computing_[host_[device]] >= 2) speed /= host_slowdown_[host_[device]];
  return speed;
}

}  // namespace zosched
