#include "runtime/calibration/compute_calibration.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/median.h"
#include "base/status_macros.h"
#include "runtime/calibration/timing_device.h"
#include "runtime/calibration/timing_inputs.h"
#include "runtime/cpu_backend.h"
#include "runtime/speed_probe.h"
#include "runtime/usable_cores.h"
#include "schedule/compute_op_model.h"

namespace zosched {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

std::vector<std::vector<int>> DeviceComputeCores(const Cluster& cluster, int threads) {
  std::vector<std::vector<int>> cores(cluster.devices_size());
  absl::flat_hash_map<std::string, int> position;  // per host
  for (int d = 0; d < cluster.devices_size(); ++d) {
    const Device& device = cluster.devices(d);
    if (!device.shares_host_cores()) continue;
    const int i = position[device.host()]++;
    for (int w = 0; w < threads; ++w) cores[d].push_back((i * threads + w) % UsableCores());
  }
  return cores;
}

absl::Status MeasureCompute(const CalibrationSettings& settings,
                            const std::vector<Schedule>& schedules,
                            const std::vector<StepBatch>& batches, Cluster* out) {
  const int threads = settings.threads;
  const std::vector<std::vector<int>> device_cores = DeviceComputeCores(*out, threads);
  std::vector<int> cores = {0};
  if (threads == 1) {
    for (const std::vector<int>& c : device_cores) {
      for (int core : c) {
        if (std::find(cores.begin(), cores.end(), core) == cores.end()) cores.push_back(core);
      }
    }
  }
  struct Shape {
    CpuBackend* backend;
    const Schedule* schedule;
    const Op* op;
    std::vector<std::vector<double>> seconds;  // per entry of `cores`
  };
  std::vector<Shape> shapes;
  std::vector<TimingDevice> devices;
  absl::flat_hash_set<std::string> seen;
  for (const Schedule& s : schedules) {
    for (int device = 0; device < s.devices_size(); ++device) {
      CpuBackend* backend = nullptr;
      for (const Op& op : s.ops()) {
        if (op.device() != device || !op.has_compute()) continue;
        const ComputeOp& c = op.compute();
        const std::string key =
            absl::StrCat(ComputeKind_Name(c.kind()), "/", c.examples(), "/", c.seq_len(), "/",
                         c.params().elements(), "/",
                         MeasuredDirections(s.training(), c.kind()), "/",
                         MeasuredPeft(s.training(), c.kind()));
        if (!seen.insert(key).second) continue;
        if (backend == nullptr) {
          ASSIGN_OR_RETURN(TimingDevice created, MakeTimingDevice(s, device, threads));
          backend = created.backend.get();
          devices.push_back(std::move(created));
        }
        shapes.push_back({backend, &s, &op, std::vector<std::vector<double>>(cores.size())});
      }
    }
  }
  const int rounds = 4 * settings.repeats;
  std::printf(
      "compute ops on the first steps of --data=%s, timed in %d rounds over %zu shapes "
      "and %zu cores (seconds on core 0: min / median / max)\n",
      settings.data.c_str(), rounds, shapes.size(), cores.size());
  SpeedProbe probe;
  std::vector<std::vector<double>> probe_seconds(cores.size());  // per entry of `cores`
  StepResult result;
  int run = 0;  // each run on the next batch
  for (int round = 0; round < rounds; ++round) {
    for (size_t k = 0; k < cores.size(); ++k) {
      // On the core the runtime's compute stream is pinned to (at normal
      // priority: the op's own cost, not what else runs on the machine).
      // Each shape runs once untimed first: the thread has just moved, and
      // the core's caches hold the other core's round (cold, every op timed
      // 10 % slower than the runtime's compute thread, which stays put).
      PinThreadToCore(cores[k]);
      for (const bool timed : {false, true}) {
        for (Shape& shape : shapes) {
          const StepInputs inputs = TimingInputs(batches[run++ % batches.size()]);
          const auto start = Clock::now();
          RETURN_IF_ERROR(shape.backend->RunCompute(*shape.op, inputs, &result));
          const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
          if (timed) shape.seconds[k].push_back(seconds);
        }
      }
      probe_seconds[k].push_back(probe.CpuNs() * 1e-9);
    }
  }
  std::vector<double> core_total(cores.size(), 0);
  // Per core: the shapes' spreads (RelativeSpread), weighted by their time.
  std::vector<double> core_spread_time(cores.size(), 0);
  for (const Shape& shape : shapes) {
    const ComputeOp& c = shape.op->compute();
    MeasuredCompute* m = out->add_measured_compute();
    m->set_op_class(ComputeKind_Name(c.kind()));
    m->set_model(schedules[0].model().name());
    m->set_examples(c.examples());
    m->set_seq_len(c.seq_len());
    m->set_elements(c.params().elements());
    m->set_directions(MeasuredDirections(shape.schedule->training(), c.kind()));
    m->set_peft(MeasuredPeft(shape.schedule->training(), c.kind()));
    m->set_seconds(Median(shape.seconds[0]));
    for (size_t k = 0; k < cores.size(); ++k) {
      core_total[k] += Median(shape.seconds[k]);
      core_spread_time[k] += RelativeSpread(shape.seconds[k]) * Median(shape.seconds[k]);
    }
    std::printf("  %-18s examples %3d seq %4d elements %9ld: %.6f / %.6f / %.6f\n",
                m->op_class().c_str(), c.examples(), c.seq_len(), c.params().elements(),
                *std::min_element(shape.seconds[0].begin(), shape.seconds[0].end()), m->seconds(),
                *std::max_element(shape.seconds[0].begin(), shape.seconds[0].end()));
  }
  if (threads > 1) {
    std::printf(
        "  per-core speed: not measured with --threads=%d (compute_time_scale and "
        "speed_probe_s unset)\n",
        threads);
    return absl::OkStatus();
  }
  for (size_t k = 1; k < cores.size(); ++k) {
    std::printf("  core %d: the shapes take %.3fx as long as on core 0 (medians summed)\n",
                cores[k], core_total[k] / core_total[0]);
  }
  for (size_t k = 0; k < cores.size(); ++k) {
    std::printf("  core %d: the speed probe takes %.6f s (median); an op's time varies by %.1f %% "
                "(robust standard deviation over the median, the shapes weighted by their time)\n",
                cores[k], Median(probe_seconds[k]), 100 * core_spread_time[k] / core_total[k]);
  }
  for (int d = 0; d < out->devices_size(); ++d) {
    if (device_cores[d].empty()) continue;
    const size_t k = std::find(cores.begin(), cores.end(), device_cores[d][0]) - cores.begin();
    out->mutable_devices(d)->set_compute_time_scale(core_total[k] / core_total[0]);
    out->mutable_devices(d)->set_speed_probe_s(Median(probe_seconds[k]));
    out->mutable_devices(d)->set_compute_spread(core_spread_time[k] / core_total[k]);
  }
  return absl::OkStatus();
}

}  // namespace zosched
