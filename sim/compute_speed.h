// How fast each device of a schedule computes at a moment of the simulation,
// as a fraction of its undisturbed speed, on a core or chip of its own
// (docs/ARCHITECTURE.md, 'Simulator'): while a copy or collective of the
// device runs, 1 / the device's compute_slowdown_under_comm (none when it
// is 0 or 1); else 1. Devices of the CPU testbed that share their host's
// cores are slowed further by what they share (sim/host_cores.h).
// The simulator tells it when communication starts and ends, and asks for
// the speed of the devices whose speed may have changed. Devices are
// schedule device indices.
#pragma once

#include <vector>

#include "schedule/schedule.pb.h"

namespace zosched {

class ComputeSpeed {
 public:
  // `cluster_index[d]`: schedule device d's index in schedule.cluster()
  // .devices().
  static ComputeSpeed Build(const Schedule& schedule, const std::vector<int>& cluster_index);

  // True if communication never changes `device`'s speed (it stays 1).
  bool Constant(int device) const { return slowdown_under_comm_[device] == 1; }

  // A copy or collective of `device` started (+1) or ended (-1). Returns
  // true when `device`'s speed changed with it.
  bool CommChanged(int device, int delta) {
    const bool was = comm_running_[device] > 0;
    comm_running_[device] += delta;
    const bool is = comm_running_[device] > 0;
    return was != is && slowdown_under_comm_[device] != 1;
  }

  // The speed of the device's running compute ops.
  double Speed(int device) const {
    return comm_running_[device] > 0 ? 1 / slowdown_under_comm_[device] : 1;
  }

 private:
  std::vector<double> slowdown_under_comm_;  // per device, >= 1
  std::vector<int> comm_running_;            // per device
};

}  // namespace zosched
