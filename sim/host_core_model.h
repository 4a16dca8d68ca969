// The CPU testbed's host cores as the simulation engine sees them
// (docs/ARCHITECTURE.md, 'Simulator'): the contention for the cores that
// the devices, their transfer threads and their wake-up calls share.
// - Devices that share their host's cores compute on them as
//   sim/host_cores.h says: their compute speed depends on what else runs.
// - A copy or collective of such a device takes Device.transfer_cpu_s +
//   bytes / transfer_cpu_gbps (a collective's bytes / collective_cpu_gbps
//   where given) of its core (the testbed's transfer threads outrank
//   compute): a copy the bytes' part at its start and transfer_cpu_s at
//   its end; a collective member transfer_cpu_s and its own chunk's part as
//   it arrives and the others' chunks as the collective goes
//   (cluster.proto says why).
//   The transfer threads of a core run one at a time (one real-time
//   priority: a thread keeps the core until it sleeps), so a copy or a
//   collective member whose thread would start while others on its core
//   still have CPU to take starts when they are done
//   (TransferThreadWaitNs), and the core computes nothing until all of it
//   is done. A collective goes when its last member arrives, however busy
//   its members' cores.
//   Each wake-up of its thread (to start it, unless its stream's previous
//   transfer just ended; when a collective it waited at goes; and at its
//   end) takes Device.interrupt_cpu_s of that core while a compute op runs
//   there.
// - Where devices take turns on a core, a turn passed to a mate whose op
//   waits for it holds the core for the giver's wake-up call and the woken
//   thread's start (HostCores::Handoffs).
// - An op that waits for an op of another stream of its device (an edge,
//   or a collective's end), its stream idle and so asleep on it, is ready
//   the device's stream_wake_latency_s after that op ends (its
//   same_core_wake_latency_s where the device's transfer threads run on its
//   compute core: the two threads share it), and the waking op's stream
//   starts its next op stream_signal_cost_s late; the wake-up call holds
//   the waking thread's core for that long.
//
// A simulation has one only when its cluster gives one of these figures;
// otherwise (a GPU cluster) nothing is contended and the engine never calls
// one. The engine tells the model when compute and transfers
// start and end and when an op's end wakes a stream; the model answers with
// the devices whose compute speed changed, with holds on cores that it
// releases later (Change, Release) and with the delays of woken ops.
// Units: durations in integer nanoseconds; devices are schedule device
// indices.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"
#include "sim/host_cores.h"

namespace zosched {

class HostCoreModel {
 public:
  // What the engine does after a call: when `retime` is set, the compute
  // speed of its devices changed now (their running ops are retimed,
  // HostCores::Speed); and then, when `hold` >= 0, it calls Release(hold)
  // `hold_ns` from now.
  struct Change {
    const std::vector<int>* retime = nullptr;
    int hold = -1;
    int64_t hold_ns = 0;
  };

  // The model of `schedule`'s host cores (`cluster_index[d]`: schedule
  // device d's index in schedule.cluster().devices()), or none when its
  // devices give no figure it uses: none shares its host's cores, and none
  // has a stream wake-up latency or signalling cost. Errors:
  // HostCores::Build's.
  static absl::StatusOr<std::optional<HostCoreModel>> Build(
      const Schedule& schedule, const std::vector<int>& cluster_index);

  // Compute: whether `device`'s speed depends on the model, and its speed
  // given `alone` (HostCores::Speed). A compute op of a device that shares
  // cores starts or ends: the devices whose speed changed.
  bool SharesCores(int device) const { return cores_.SharesCores(device); }
  double Speed(int device, double alone) const { return cores_.Speed(device, alone); }
  const std::vector<int>& ComputeStarted(int device);
  const std::vector<int>& ComputeEnded(int device);
  // Once everything at the current time has happened: the devices whose speed changed
  // because a core changed hands (HostCores::Reschedule), or nullptr; and
  // in `handoffs` a hold for each turn passed to a waiting mate: its giver's
  // wake-up call (stream_signal_cost_s) and then the woken thread's start on
  // that core (the taker's same_core_wake_latency_s, else its
  // stream_wake_latency_s) keep the core from computing. Holds on one core
  // overlap rather than add.
  const std::vector<int>* Reschedule(std::vector<Change>* handoffs);

  // A copy or collective member of `device` could start now: how long its
  // thread waits for the CPU that transfer threads on its core took before
  // it (0 where its transfers take no compute core's CPU), ns.
  int64_t TransferThreadWaitNs(int device, int64_t now) const {
    const int core = cores_.TransferCore(device);
    return core < 0 ? 0 : std::max<int64_t>(0, transfer_cpu_done_ns_[core] - now);
  }
  // A transfer thread of `device` takes CPU now, after what the transfer
  // threads before it on its core take: for the `bytes` it copies (at its
  // collective rate if `collective`, else its copies'), plus
  // Device.transfer_cpu_s if `fixed`. A copy: its bytes as it starts, the
  // fixed part as it ends. A collective member: the fixed part and its
  // chunk as it arrives (copied into the staging slots), the others'
  // chunks as the collective goes.
  Change TakeTransferCpu(int device, double bytes, bool collective, bool fixed, int64_t now);
  // A copy's or collective's thread of `device` wakes (to start one, as a
  // collective it waited at goes, or at its end): the compute op it
  // preempts on its core, if any, loses the device's interrupt CPU.
  Change WakeTransferThread(int device);

  // Whether ends of ops wake streams late (any wake-up latency or
  // signalling cost); when not, the calls below change nothing.
  bool DelaysWakeUps() const { return delays_wake_ups_; }
  // How long after an op of `waker`'s ends a stream of `device` asleep on
  // it is woken.
  int64_t WakeLatencyNs(int waker, int device) const {
    return waker == device && same_core_wake_ns_[device] > 0 &&
                   cores_.TransfersOnComputeCore(device)
               ? same_core_wake_ns_[device]
               : wake_ns_[device];
  }
  // How much later a stream of `device` that woke another starts its next
  // op.
  int64_t SignalCostNs(int device) const { return signal_ns_[device]; }
  // A stream of `device` (its compute stream if `compute`, else a copy or
  // collective stream) wakes another: the call holds its thread's core.
  Change Signal(int device, bool compute);

  // A hold that a Change set ends: the devices whose speed changed.
  const std::vector<int>& Release(int hold);

 private:
  // What a hold takes: a transfer's CPU or interrupt (its device's
  // transfer core), or a wake-up call by a compute or a transfer stream.
  enum HoldKind { kTransferCpu, kComputeSignal, kTransferSignal, kHoldKinds };
  Change Hold(int device, HoldKind kind, int64_t ns) {
    return {&cores_.CoreMates(device), device * kHoldKinds + kind, ns};
  }

  // A transfer thread of `device` takes `cpu_ns` of its core now, after
  // what other transfer threads took there before it: the core computes
  // nothing until all of it is done.
  Change TakeCpu(int device, double cpu_ns, int64_t now);

  HostCores cores_;
  // Per device: its streams' wake-up latency, on another core and on their
  // waker's, and signalling cost (ns), and whether any is set on any device.
  std::vector<int64_t> wake_ns_, same_core_wake_ns_, signal_ns_;
  bool delays_wake_ups_ = false;
  // Per device that shares its host's cores: the host CPU its copies and
  // collectives take, ns per op and per byte (Device.transfer_cpu_s,
  // transfer_cpu_gbps; a collective's bytes at collective_cpu_gbps where
  // given), and what a transfer thread's wake-up costs a compute op
  // running on its core, ns (Device.interrupt_cpu_s); 0 elsewhere.
  std::vector<double> transfer_cpu_ns_, transfer_cpu_ns_per_byte_, collective_cpu_ns_per_byte_;
  std::vector<int64_t> interrupt_ns_;
  // Per core: when the CPU that transfer threads took there so far is done
  // (ns of the simulation; each thread's after those before it).
  std::vector<int64_t> transfer_cpu_done_ns_;
};

}  // namespace zosched
