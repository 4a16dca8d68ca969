#include "sim/run_compute_scales.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "base/median.h"
#include "base/status_macros.h"
#include "schedule/cluster_lookup.h"
#include "sim/cost_model.h"

namespace zosched {
namespace {

// The schedule's op that `interval` measured (`ops`: the schedule's ops by
// id). Errors: InvalidArgument for an op or device the schedule lacks.
absl::StatusOr<const Op*> MeasuredOp(const Schedule& schedule,
                                     const absl::flat_hash_map<int64_t, const Op*>& ops,
                                     const OpInterval& interval) {
  auto op = ops.find(interval.op_id());
  if (op == ops.end() || interval.device() < 0 || interval.device() >= schedule.devices_size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("measured op %d on device %d is not in schedule '%s'", interval.op_id(),
                        interval.device(), schedule.name()));
  }
  return op->second;
}

// `schedule` with each device's cluster device given `values[d]` through
// `set` (> 0; 0 leaves it as it is).
Schedule WithPerDevice(const Schedule& schedule, const std::vector<double>& values,
                       void (Device::*set)(double)) {
  Schedule changed = schedule;
  for (int d = 0; d < schedule.devices_size() && d < static_cast<int>(values.size()); ++d) {
    if (values[d] <= 0) continue;
    for (Device& device : *changed.mutable_cluster()->mutable_devices()) {
      if (device.name() == schedule.devices(d).cluster_device()) (device.*set)(values[d]);
    }
  }
  return changed;
}

}  // namespace

absl::StatusOr<std::vector<double>> RunComputeScales(const Schedule& schedule,
                                                     const Timeline& measured) {
  Schedule unscaled = schedule;
  for (Device& d : *unscaled.mutable_cluster()->mutable_devices()) d.clear_compute_time_scale();
  ASSIGN_OR_RETURN(const CostModel model, CostModel::Build(unscaled));
  absl::flat_hash_map<int64_t, const Op*> ops;
  for (const Op& op : schedule.ops()) ops[op.id()] = &op;
  const int devices = schedule.devices_size();
  std::vector<double> run_ns(devices, 0), model_ns(devices, 0);
  absl::flat_hash_map<int64_t, int64_t> cost;  // per op id
  for (const OpInterval& interval : measured.ops()) {
    if (interval.cpu_ns() <= 0) continue;
    ASSIGN_OR_RETURN(const Op* op, MeasuredOp(schedule, ops, interval));
    if (!op->has_compute()) continue;
    auto known = cost.find(interval.op_id());
    if (known == cost.end()) {
      ASSIGN_OR_RETURN(const int64_t ns, model.ComputeNs(*op));
      known = cost.emplace(interval.op_id(), ns).first;
    }
    run_ns[interval.device()] += interval.cpu_ns();
    model_ns[interval.device()] += known->second;
  }
  std::vector<double> scales(devices, 0);
  for (int d = 0; d < devices; ++d) {
    if (model_ns[d] > 0) scales[d] = run_ns[d] / model_ns[d];
  }
  return scales;
}

absl::StatusOr<std::vector<double>> SpeedProbeDrifts(const Schedule& schedule,
                                                     const Timeline& measured) {
  const int devices = schedule.devices_size();
  std::vector<std::vector<double>> samples(devices);
  for (const SpeedProbeSample& sample : measured.speed_probes()) {
    if (sample.device() < 0 || sample.device() >= devices) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "a speed probe sample of step %d names device %d; schedule '%s' has devices 0..%d",
          sample.step(), sample.device(), schedule.name(), devices - 1));
    }
    samples[sample.device()].push_back(sample.cpu_ns() * 1e-9);
  }
  // How many of each host's core-sharing devices the schedule runs: they
  // probe at once.
  absl::flat_hash_map<std::string, int> sharing;
  for (const ScheduleDevice& d : schedule.devices()) {
    const Device* device = FindDevice(schedule.cluster(), d.cluster_device());
    if (device != nullptr && device->shares_host_cores()) ++sharing[device->host()];
  }
  std::vector<double> drifts(devices, 0);
  for (int d = 0; d < devices; ++d) {
    const Device* device = FindDevice(schedule.cluster(), schedule.devices(d).cluster_device());
    if (device == nullptr || device->speed_probe_s() <= 0 || samples[d].empty()) continue;
    double calibrated = device->speed_probe_s();
    const Host* host = FindHost(schedule.cluster(), device->host());
    if (device->shares_host_cores() && sharing[device->host()] >= 2 && host != nullptr) {
      calibrated *= std::max(1.0, host->shared_core_slowdown());
    }
    drifts[d] = Median(samples[d]) / calibrated;
  }
  return drifts;
}

absl::StatusOr<std::vector<double>> ProbedComputeScales(const Schedule& schedule,
                                                        const Timeline& measured) {
  ASSIGN_OR_RETURN(std::vector<double> scales, SpeedProbeDrifts(schedule, measured));
  for (int d = 0; d < static_cast<int>(scales.size()); ++d) {
    if (scales[d] <= 0) continue;
    const Device* device = FindDevice(schedule.cluster(), schedule.devices(d).cluster_device());
    scales[d] *= device->compute_time_scale() > 0 ? device->compute_time_scale() : 1;
  }
  return scales;
}

absl::StatusOr<std::vector<double>> RunCollectiveCpuGbps(const Schedule& schedule,
                                                         const Timeline& measured) {
  absl::flat_hash_map<int64_t, const Op*> ops;
  for (const Op& op : schedule.ops()) ops[op.id()] = &op;
  const int devices = schedule.devices_size();
  std::vector<double> bytes(devices, 0), cpu_ns(devices, 0);
  for (const OpInterval& interval : measured.ops()) {
    if (interval.cpu_ns() <= 0) continue;
    ASSIGN_OR_RETURN(const Op* op, MeasuredOp(schedule, ops, interval));
    if (!op->has_collective()) continue;
    const Device* device =
        FindDevice(schedule.cluster(), schedule.devices(interval.device()).cluster_device());
    const double fixed_ns = device != nullptr ? device->transfer_cpu_s() * 1e9 : 0;
    bytes[interval.device()] += op->collective().bytes();
    cpu_ns[interval.device()] += std::max(0.0, interval.cpu_ns() - fixed_ns);
  }
  std::vector<double> gbps(devices, 0);
  for (int d = 0; d < devices; ++d) {
    if (cpu_ns[d] > 0) gbps[d] = bytes[d] / cpu_ns[d];  // bytes per ns: GB/s
  }
  return gbps;
}

Schedule WithComputeScales(const Schedule& schedule, const std::vector<double>& scales) {
  return WithPerDevice(schedule, scales, &Device::set_compute_time_scale);
}

Schedule WithCollectiveCpuGbps(const Schedule& schedule, const std::vector<double>& gbps) {
  return WithPerDevice(schedule, gbps, &Device::set_collective_cpu_gbps);
}

Schedule WithoutInterruptCpu(const Schedule& schedule) {
  Schedule cleared = schedule;
  for (Device& device : *cleared.mutable_cluster()->mutable_devices()) {
    device.clear_interrupt_cpu_s();
  }
  return cleared;
}

}  // namespace zosched
