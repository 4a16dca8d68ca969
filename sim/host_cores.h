// The host cores that the CPU testbed's devices compute on, and how fast a
// device's compute runs on them at a moment of the simulation
// (docs/ARCHITECTURE.md, 'Simulator'). Devices that share their host's
// cores (Device.shares_host_cores) compute on the cores the runtime pins
// them to (runtime/cpu_backend.h): the i-th such device of a host (in
// schedule device order) on core i mod Host.cores. Of the devices computing
// on one core, the one whose op started last runs (its ops, if several,
// share the core evenly) and the others wait until it stops (a thread that
// wakes with work preempts the one running and keeps the core while it has
// more: the Linux scheduler favours the thread that slept; P2xD2 timelines
// showed one device's update taking 1.1 ms of wall time for 0.2 ms of CPU
// while its core mate ran its update and forward whole); while two or more
// of the host's devices compute, each is also slower by
// Host.shared_core_slowdown. The host CPU a device's copies and collectives
// take (Device.transfer_cpu_s) comes out of its own core first when the
// host has no core to spare (as many devices as cores, or more): while k of
// them take theirs, the core's compute ops share 1 - k of it (none left:
// they stall). With cores to spare the transfer threads run there and take
// nothing from compute. Waking another stream (Device.stream_signal_cost_s)
// takes the waking thread's core alike: a compute stream's is the device's
// compute core, a copy's or collective's the core its transfers take CPU
// from; so does a transfer thread's wake-up that interrupts a compute op on
// that core (Device.interrupt_cpu_s).
//
// This is the state alone: sim/host_core_model.h decides when CPU is taken
// and for how long. Devices are schedule device indices.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"

namespace zosched {

class HostCores {
 public:
  // `cluster_index[d]`: schedule device d's index in schedule.cluster()
  // .devices(). Errors: FailedPrecondition naming the device and host when a
  // core-sharing device's host gives no `cores`.
  static absl::StatusOr<HostCores> Build(const Schedule& schedule,
                                         const std::vector<int>& cluster_index);

  // Whether `device` computes on its host's shared cores (else nothing
  // here changes its speed).
  bool SharesCores(int device) const { return core_[device] >= 0; }
  // The devices whose speed changes with `device`'s compute or transfers:
  // its host's core-sharing devices in device order, or just `device`.
  const std::vector<int>& CoreMates(int device) const { return mates_[device]; }

  // A compute op of `device` started or ended. Returns true when the device
  // shares its host's cores: its mates' speeds then change with the count.
  bool ComputeStarted(int device);
  bool ComputeEnded(int device);
  // A copy or collective of `device` started (+1) or stopped (-1) taking
  // host CPU. Returns true when that CPU comes out of the device's compute
  // core (its mates' speeds then change); false when nothing is charged.
  bool TransferCpuChanged(int device, int delta);
  // A stream of `device` (its compute stream if `compute`, else a copy or
  // collective stream) started (+1) or stopped (-1) waking another. Returns
  // true when that takes CPU from a core the host's devices compute on.
  bool SignalCpuChanged(int device, bool compute, int delta);
  // Whether a compute op runs on the core `device`'s transfers take CPU
  // from (false when they take none).
  bool ComputesOnTransferCore(int device) const {
    return transfer_core_[device] >= 0 && !core_computing_[transfer_core_[device]].empty();
  }

  // The speed of the device's running compute ops, as a fraction of their
  // undisturbed speed, given `alone`: the speed they would have on a core
  // of their own (ComputeSpeed::Speed). `alone` for a device that does not
  // share cores; 0 while transfers take the whole of its core, or while it
  // waits behind another device there.
  double Speed(int device, double alone) const;

 private:
  // Work other than compute starts (+1) or stops (-1) taking `core` (-1:
  // no core the host's devices compute on). Returns whether one was taken.
  bool TakeCore(int core, int delta);

  // Per device: its host and core (indices into the vectors below; -1 for
  // a device that does not share host cores), the core its transfers take
  // CPU from (-1: none, spare cores), and the devices its speed moves with.
  std::vector<int> host_, core_, transfer_core_;
  std::vector<std::vector<int>> mates_;
  // Per host: shared_core_slowdown (>= 1) and the compute ops running.
  std::vector<double> host_slowdown_;
  std::vector<int> host_computing_;
  // Per core: the devices with a compute op on it, in the order the ops
  // started (the last one runs), and the transfers and wake-ups taking it.
  std::vector<std::vector<int>> core_computing_;
  std::vector<int> core_transferring_;
};

}  // namespace zosched
