// The host cores that the CPU testbed's devices compute on, and how fast a
// device's compute runs on them at a moment of the simulation
// (docs/ARCHITECTURE.md, 'Simulator'). Devices that share their host's
// cores (Device.shares_host_cores) compute on the cores the runtime pins
// them to (runtime/cpu_backend.h): the i-th such device of a host (in
// schedule device order) on core i mod Host.cores. One device at a time
// runs on a core (its ops, if several, share it evenly); the others wait,
// and their waiting ops have not started (a measured op starts when its
// thread first runs it). They take turns (runtime/core_turns.h): the runner
// keeps the core until its op ends, whatever preempts it meanwhile, and
// then the op that became ready first runs (the runner's own next op, ready
// as its last ended, queues behind its mates'), except that the step's
// first op of each device has its place in line from the step's start, in
// device order (until the first in line is ready, the core idles). A turn
// passed to a mate whose op waits for it wakes that mate's thread
// (Handoffs: sim/host_core_model.h holds the core for it). While two or
// more of the host's devices run, each is also slower by
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

#include <cstdint>
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

  // Calls below that change the state come in the order of the
  // simulation's time.

  // A compute op of `device` started or ended. Returns true when
  // the device shares its host's cores: its mates' speeds then change.
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
  // Decides again who runs on each core where a turn may pass, once
  // everything that happens at the current time has (a device whose op
  // ends and whose next op starts at the same time keeps its place). Returns the devices
  // whose speed changed (a host's core mates), or nullptr.
  const std::vector<int>* Reschedule();
  // A turn that the last Reschedule passed on a core from the device whose
  // op ended to a mate whose op was waiting for it (asleep: the runtime's
  // hand-off wakes its thread; runtime/core_turns.h).
  struct Handoff {
    int from = -1;
    int to = -1;
  };
  const std::vector<Handoff>& Handoffs() const { return handoffs_; }
  // Whether `device`'s copy and collective threads run on its compute core
  // (its host has no core to spare).
  bool TransfersOnComputeCore(int device) const { return transfer_core_[device] >= 0; }
  // That core (an index below core_count()), or -1 where they run on a
  // spare core or the device does not share cores.
  int TransferCore(int device) const { return transfer_core_[device]; }
  int core_count() const { return static_cast<int>(core_host_.size()); }
  // Whether a compute op runs on the core `device`'s transfers take CPU
  // from (false when they take none).
  bool ComputesOnTransferCore(int device) const {
    const int core = transfer_core_[device];
    return core >= 0 && core_runner_[core] >= 0;
  }

  // The speed of the device's running compute ops, as a fraction of their
  // undisturbed speed, given `alone`: the speed they would have on a core
  // of their own (ComputeSpeed::Speed). `alone` for a device that does not
  // share cores; 0 while transfers take the whole of its core, or while
  // another device runs there.
  double Speed(int device, double alone) const;

 private:
  // Work other than compute starts (+1) or stops (-1) taking `core` (-1:
  // no core the host's devices compute on). Returns whether one was taken.
  bool TakeCore(int core, int delta);
  // The share of `core` that transfers and wake-ups leave to compute.
  double ComputeShare(int core) const;
  // Ops of `device` computing on its core.
  int OpsOn(int device) const;

  // Per device: its core (an index into the vectors below; -1 for a
  // device that does not share host cores), the core its transfers take
  // CPU from (-1: none, spare cores), and the devices its speed moves with.
  std::vector<int> core_, transfer_core_;
  std::vector<std::vector<int>> mates_;
  // Per host: shared_core_slowdown (>= 1) and its cores [first, first + n).
  std::vector<double> host_slowdown_;
  std::vector<int> host_first_core_, host_core_count_;
  // Per core: its host; the devices with a compute op on it (a device once
  // per op); the device running (-1: none); the transfers and wake-ups
  // taking it; whether to decide again at the end of the current time;
  // whether the runner's turn ended (its op did) since the last decision.
  std::vector<int> core_host_;
  std::vector<std::vector<int>> core_computing_;
  std::vector<int> core_runner_;
  std::vector<int> core_transferring_;
  std::vector<bool> core_undecided_, core_turn_ended_;
  // Per core: the devices in line, one entry per op, the
  // first the runner's or the next to run; per device, whether its first
  // op of the step has come (its place was in line from the start).
  std::vector<std::vector<int>> turn_line_;
  std::vector<bool> first_turn_used_;
  std::vector<int> undecided_cores_;
  // Reschedule's answers.
  std::vector<int> changed_;
  std::vector<Handoff> handoffs_;
};

}  // namespace zosched
