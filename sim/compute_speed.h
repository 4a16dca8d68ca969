// How fast each device of a schedule computes at a moment of the simulation,
// as a fraction of its undisturbed speed (docs/ARCHITECTURE.md, 'Simulator'):
// - while a copy or collective of the device runs, 1 / the device's
//   compute_slowdown_under_comm (none when it is 0 or 1);
// - devices that share their host's cores (the CPU testbed, Device
//   .shares_host_cores) form one core group per host: while more of the
//   group's compute ops run than the host has cores, each gets cores /
//   running of a core, and while two or more run each is slower by
//   Host.shared_core_slowdown. The host CPU the group's copies and
//   collectives take (Device.transfer_cpu_s) comes first: while k of them
//   take theirs, the compute ops share cores - k (none left: they stall).
// The simulator tells it when communication and compute start and end, and
// asks for the speed of the devices whose speed may have changed.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"

namespace zosched {

class ComputeSpeed {
 public:
  // `cluster_index[d]`: schedule device d's index in schedule.cluster()
  // .devices(). Errors: FailedPrecondition naming the device and host when a
  // core-sharing device's host gives no `cores`.
  static absl::StatusOr<ComputeSpeed> Build(const Schedule& schedule,
                                            const std::vector<int>& cluster_index);

  // True if nothing ever changes `device`'s speed (it stays 1: a GPU that
  // communication does not slow down).
  bool Constant(int device) const {
    return core_group_[device] < 0 && slowdown_under_comm_[device] == 1;
  }
  // The devices whose speed changes with `device`'s compute: its core group
  // in device order, or just `device`.
  const std::vector<int>& CoreMates(int device) const;

  // A copy or collective of `device` started (+1) or ended (-1). Returns
  // true when `device`'s speed changed with it.
  bool CommChanged(int device, int delta) {
    const bool was = comm_running_[device] > 0;
    comm_running_[device] += delta;
    const bool is = comm_running_[device] > 0;
    return was != is && slowdown_under_comm_[device] != 1;
  }
  // A compute op of `device` started or ended. Returns true when the device
  // is in a core group, whose members' speeds then change with the count.
  bool ComputeStarted(int device);
  bool ComputeEnded(int device);
  // A copy or collective of `device` started (+1) or stopped (-1) taking
  // host CPU.
  // Returns true when the device is in a core group, whose members' speeds
  // then change.
  bool TransferCpuChanged(int device, int delta);

  // 0 while copies take every core of the device's group.
  double Speed(int device) const;

 private:
  std::vector<double> slowdown_under_comm_;  // per device, >= 1
  std::vector<int> comm_running_;            // per device
  std::vector<int> core_group_;              // per device, -1: none
  std::vector<std::vector<int>> mates_;      // per device
  // Per core group: the host's cores, its shared_core_slowdown (>= 1), the
  // compute ops running in it and the transfers taking its CPU.
  std::vector<double> group_cores_;
  std::vector<double> group_slowdown_;
  std::vector<int> group_computing_;
  std::vector<int> group_transferring_;
};

}  // namespace zosched
