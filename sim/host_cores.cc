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
  s.core_.assign(devices, -1);
  s.transfer_core_.assign(devices, -1);
  // Per host (in order of first appearance): its core-sharing devices, in
  // schedule device order; a device's position among them is its node
  // rank, which the runtime pins by.
  absl::flat_hash_map<std::string, int> host_index;
  std::vector<std::vector<int>> host_devices;
  std::vector<const Host*> hosts;
  for (int d = 0; d < devices; ++d) {
    const Device& device = schedule.cluster().devices(cluster_index[d]);
    if (!device.shares_host_cores()) continue;
    const Host* host = FindHost(schedule.cluster(), device.host());
    if (host == nullptr || host->cores() <= 0) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "device '%s' shares its host's cores, but host '%s' has no `cores`", device.name(),
          device.host()));
    }
    auto [it, inserted] = host_index.emplace(host->name(), hosts.size());
    if (inserted) {
      hosts.push_back(host);
      host_devices.emplace_back();
      s.host_slowdown_.push_back(std::max(1.0, host->shared_core_slowdown()));
    }
    host_devices[it->second].push_back(d);
  }
  s.mates_.resize(devices);
  for (int d = 0; d < devices; ++d) s.mates_[d] = {d};
  for (size_t h = 0; h < hosts.size(); ++h) {
    const std::vector<int>& members = host_devices[h];
    const int cores = hosts[h]->cores();
    const int first_core = s.core_computing_.size();
    const int used = std::min<int>(cores, members.size());
    s.host_first_core_.push_back(first_core);
    s.host_core_count_.push_back(used);
    s.core_host_.resize(first_core + used, h);
    s.core_computing_.resize(first_core + used);
    s.core_runner_.resize(first_core + used, -1);
    s.core_transferring_.resize(first_core + used, 0);
    s.core_undecided_.resize(first_core + used, false);
    s.core_turn_ended_.resize(first_core + used, false);
    s.turn_line_.resize(first_core + used);
    for (size_t position = 0; position < members.size(); ++position) {
      const int d = members[position];
      s.core_[d] = first_core + position % cores;
      // Without a core to spare on its host, the transfer threads run on
      // the device's own core (with one, they run there and take nothing
      // from compute).
      if (static_cast<int>(members.size()) >= cores) s.transfer_core_[d] = s.core_[d];
      s.mates_[d] = members;
      // A step's first turns on a core go in device order, placed before
      // the step starts (runtime/core_turns.h: TicketInOrder).
      s.turn_line_[s.core_[d]].push_back(d);
    }
  }
  s.first_turn_used_.assign(devices, false);
  return s;
}

double HostCores::ComputeShare(int core) const {
  return std::clamp(1.0 - core_transferring_[core], 0.0, 1.0);
}

int HostCores::OpsOn(int device) const {
  const std::vector<int>& computing = core_computing_[core_[device]];
  return std::count(computing.begin(), computing.end(), device);
}

bool HostCores::ComputeStarted(int device) {
  const int core = core_[device];
  if (core < 0) return false;
  core_computing_[core].push_back(device);
  // Its op's place in the core's line: the step's first, placed already,
  // or the last. An idle core runs it if it is first in line.
  if (first_turn_used_[device]) turn_line_[core].push_back(device);
  first_turn_used_[device] = true;
  if (core_runner_[core] < 0 && turn_line_[core].front() == device) core_runner_[core] = device;
  return true;
}

bool HostCores::ComputeEnded(int device) {
  const int core = core_[device];
  if (core < 0) return false;
  std::vector<int>& computing = core_computing_[core];
  const auto op = std::find(computing.begin(), computing.end(), device);
  if (op != computing.end()) computing.erase(op);
  if (core_runner_[core] == device) {
    core_turn_ended_[core] = true;
    turn_line_[core].erase(turn_line_[core].begin());  // the runner's place
    if (!core_undecided_[core]) {
      core_undecided_[core] = true;
      undecided_cores_.push_back(core);
    }
  }
  return true;
}

bool HostCores::TakeCore(int core, int delta) {
  if (core < 0) return false;
  core_transferring_[core] += delta;
  if (!core_undecided_[core]) {
    core_undecided_[core] = true;
    undecided_cores_.push_back(core);
  }
  return true;
}

bool HostCores::TransferCpuChanged(int device, int delta) {
  return TakeCore(transfer_core_[device], delta);
}

bool HostCores::SignalCpuChanged(int device, bool compute, int delta) {
  return TakeCore(compute ? core_[device] : transfer_core_[device], delta);
}

const std::vector<int>* HostCores::Reschedule() {
  changed_.clear();
  handoffs_.clear();
  int changed_host = -1;
  for (int core : undecided_cores_) {
    core_undecided_[core] = false;
    const int runner = core_runner_[core];
    // The runner keeps its turn until its op ends (a transfer thread that
    // preempts it does not end it); then the op that asked first, once it
    // is ready (until then the core idles). A runner whose turn ended
    // (stalled since) runs again if it is next.
    const bool turn_ended = core_turn_ended_[core];
    core_turn_ended_[core] = false;
    if (runner >= 0 && OpsOn(runner) > 0 && !turn_ended) continue;
    const std::vector<int>& line = turn_line_[core];
    const int next = !line.empty() && OpsOn(line.front()) > 0 ? line.front() : -1;
    const bool runs_again = next >= 0 && next == runner;
    if (next == runner && !runs_again) continue;
    if (runner >= 0 && next >= 0 && next != runner) handoffs_.push_back({runner, next});
    core_runner_[core] = next;
    if (next < 0) continue;  // the runner's ops ended: speeds changed then
    // The host's devices change speed (shared_core_slowdown), once a host.
    if (core_host_[core] != changed_host) {
      changed_host = core_host_[core];
      const std::vector<int>& mates = mates_[next];
      changed_.insert(changed_.end(), mates.begin(), mates.end());
    }
  }
  undecided_cores_.clear();
  return changed_.empty() ? nullptr : &changed_;
}

double HostCores::Speed(int device, double alone) const {
  double speed = alone;
  const int core = core_[device];
  if (core < 0) return speed;
  // Waiting while another device runs on the core; or running, with the
  // device's other ops there (compute streams of one device share its core
  // evenly), on what transfers and wake-ups leave of the core.
  if (core_runner_[core] != device) return 0;
  // Its turn ended and whose turn it is is decided at the end of `now`.
  if (core_turn_ended_[core]) return 0;
  speed *= ComputeShare(core) / std::max(1, OpsOn(device));
  const int host = core_host_[core];
  int running = 0;
  for (int c = host_first_core_[host]; c < host_first_core_[host] + host_core_count_[host]; ++c) {
    running += core_runner_[c] >= 0 && OpsOn(core_runner_[c]) > 0;
  }
  if (running >= 2) speed /= host_slowdown_[host];
  return speed;
}

}  // namespace zosched
