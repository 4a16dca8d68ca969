#include "sim/host_core_model.h"

#include <algorithm>
#include <cmath>

#include "base/status_macros.h"

namespace zosched {
namespace {

// A calibrated figure in seconds, to the nearest nanosecond.
int64_t RoundNs(double seconds) { return static_cast<int64_t>(std::llround(seconds * 1e9)); }

const Device& DeviceOf(const Schedule& schedule, const std::vector<int>& cluster_index, int d) {
  return schedule.cluster().devices(cluster_index[d]);
}

// Whether `schedule`'s devices give any figure the model uses.
bool Needed(const Schedule& schedule, const std::vector<int>& cluster_index) {
  for (int d = 0; d < schedule.devices_size(); ++d) {
    const Device& device = DeviceOf(schedule, cluster_index, d);
    if (device.shares_host_cores() || RoundNs(device.stream_wake_latency_s()) > 0 ||
        RoundNs(device.same_core_wake_latency_s()) > 0 ||
        RoundNs(device.stream_signal_cost_s()) > 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<std::optional<HostCoreModel>> HostCoreModel::Build(
    const Schedule& schedule, const std::vector<int>& cluster_index) {
  if (!Needed(schedule, cluster_index)) return std::nullopt;
  HostCoreModel m;
  ASSIGN_OR_RETURN(m.cores_, HostCores::Build(schedule, cluster_index));
  const int devices = schedule.devices_size();
  m.transfer_cpu_ns_.assign(devices, 0);
  m.transfer_cpu_ns_per_byte_.assign(devices, 0);
  m.collective_cpu_ns_per_byte_.assign(devices, 0);
  m.interrupt_ns_.assign(devices, 0);
  m.transfer_cpu_done_ns_.assign(m.cores_.core_count(), 0);
  for (int d = 0; d < devices; ++d) {
    const Device& device = DeviceOf(schedule, cluster_index, d);
    m.wake_ns_.push_back(RoundNs(device.stream_wake_latency_s()));
    m.same_core_wake_ns_.push_back(RoundNs(device.same_core_wake_latency_s()));
    m.signal_ns_.push_back(RoundNs(device.stream_signal_cost_s()));
    if (!device.shares_host_cores()) continue;
    m.transfer_cpu_ns_[d] = device.transfer_cpu_s() * 1e9;
    if (device.transfer_cpu_gbps() > 0) {
      m.transfer_cpu_ns_per_byte_[d] = 1 / device.transfer_cpu_gbps();
    }
    m.collective_cpu_ns_per_byte_[d] = device.collective_cpu_gbps() > 0
                                           ? 1 / device.collective_cpu_gbps()
                                           : m.transfer_cpu_ns_per_byte_[d];
    m.interrupt_ns_[d] = RoundNs(device.interrupt_cpu_s());
  }
  const auto positive = [](int64_t ns) { return ns > 0; };
  m.delays_wake_ups_ = std::any_of(m.wake_ns_.begin(), m.wake_ns_.end(), positive) ||
                       std::any_of(m.same_core_wake_ns_.begin(), m.same_core_wake_ns_.end(),
                                   positive) ||
                       std::any_of(m.signal_ns_.begin(), m.signal_ns_.end(), positive);
  return m;
}

const std::vector<int>& HostCoreModel::ComputeStarted(int device) {
  cores_.ComputeStarted(device);
  return cores_.CoreMates(device);
}

const std::vector<int>& HostCoreModel::ComputeEnded(int device) {
  cores_.ComputeEnded(device);
  return cores_.CoreMates(device);
}

HostCoreModel::Change HostCoreModel::TakeTransferCpu(int device, double bytes, bool collective,
                                                     bool fixed, int64_t now) {
  const double per_byte =
      collective ? collective_cpu_ns_per_byte_[device] : transfer_cpu_ns_per_byte_[device];
  return TakeCpu(device, bytes * per_byte + (fixed ? transfer_cpu_ns_[device] : 0), now);
}

HostCoreModel::Change HostCoreModel::TakeCpu(int device, double cpu_ns, int64_t now) {
  if (cpu_ns <= 0 || !cores_.TransferCpuChanged(device, +1)) return {};
  const int64_t ns = static_cast<int64_t>(std::ceil(cpu_ns - 1e-9));
  int64_t& done = transfer_cpu_done_ns_[cores_.TransferCore(device)];
  done = std::max(done, now) + ns;
  return Hold(device, kTransferCpu, done - now);
}

HostCoreModel::Change HostCoreModel::WakeTransferThread(int device) {
  if (interrupt_ns_[device] <= 0 || !cores_.ComputesOnTransferCore(device)) return {};
  cores_.TransferCpuChanged(device, +1);
  return Hold(device, kTransferCpu, interrupt_ns_[device]);
}

HostCoreModel::Change HostCoreModel::Signal(int device, bool compute) {
  if (signal_ns_[device] <= 0 || !cores_.SignalCpuChanged(device, compute, +1)) return {};
  return Hold(device, compute ? kComputeSignal : kTransferSignal, signal_ns_[device]);
}

const std::vector<int>* HostCoreModel::Reschedule(std::vector<Change>* handoffs) {
  handoffs->clear();
  const std::vector<int>* changed = cores_.Reschedule();
  for (const HostCores::Handoff& h : cores_.Handoffs()) {
    const int64_t wake = same_core_wake_ns_[h.to] > 0 ? same_core_wake_ns_[h.to] : wake_ns_[h.to];
    const int64_t ns = signal_ns_[h.from] + wake;
    if (ns <= 0) continue;
    cores_.SignalCpuChanged(h.from, /*compute=*/true, +1);
    handoffs->push_back(Hold(h.from, kComputeSignal, ns));
  }
  return changed;
}

const std::vector<int>& HostCoreModel::Release(int hold) {
  const int device = hold / kHoldKinds;
  const HoldKind kind = static_cast<HoldKind>(hold % kHoldKinds);
  if (kind == kTransferCpu) {
    cores_.TransferCpuChanged(device, -1);
  } else {
    cores_.SignalCpuChanged(device, kind == kComputeSignal, -1);
  }
  return cores_.CoreMates(device);
}

}  // namespace zosched
