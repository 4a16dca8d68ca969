// ZO2 on one GPU against the physical floor and against ZO2's own code:
// OPT-1.3B, 6.7B, 13B and 30B, and Qwen3-1.7B, 8B and 32B (ZO2 runs Qwen3;
// its Qwen3 steps have not been measured here, so those rows have no ZO2
// figures), with the ZO2 schedule at ZO2's speed-test setting (batch 1,
// sequence 2048, FP16 host store, wire and compute).
//
//   ./bazelw run //experiments:gpu_zo2_benchmark           # plan, floor, prediction
//   ./bazelw run --config=cuda //experiments:gpu_zo2_benchmark   # + measured, on a GPU
//       [-- --cluster=h100_sxm_x1 --warmup=2 --repeats=5 --out_dir=...]
//
// Per model: lower the schedule for --cluster and validate it; report
//   - the plan's peak device memory (the sum of the device's buffers: what
//     the CUDA backend allocates, before its stated reserve);
//   - the floor max(transfer, compute): transfer = the time the step's
//     host-link bytes need, upload and offload running at once:
//     max(h2d / down, d2h / up, (h2d + d2h) / duplex) (duplex_gbps: the host
//     link's cap on both directions together; H100 here: 90 GB/s, so ZO2's
//     equal bytes each way move at 45 GB/s each); compute = the simulator's
//     predicted compute time of the step (the union of its compute ops);
//     target = 1.10 x floor;
//   - the simulator's predicted step time, and the kernel-level one (its
//     compute as zosched's own CUDA kernels, ComputeProfile ZOSCHED_CUDA)
//     with the costliest kernels of a block: what keeps the step from the
//     floor;
//   - when a GPU is visible (only a --config=cuda build can see one):
//     `train --backend=cuda` for warm-up + repeats steps, the median (min,
//     max) step time of the measured timeline without the warm-up steps, and
//     the peak device memory in use on GPU 0 while train ran, less what was
//     in use before it started (cudaMemGetInfo sampled every 2 ms: the
//     train process's plan, reserve, CUDA context and library handles; other
//     processes on the GPU would count too).
// Beside them ZO2's own measured step time and peak allocator memory on the
// same H100 (../shared/reference/peers_h100.md: torch.cuda allocated, which
// leaves out the CUDA context). Without a GPU the measured columns say
// "not run (no GPU)": nothing is estimated in their place.
//
// Writes benchmark.md and benchmark.csv to --out_dir (default:
// out/gpu_zo2_benchmark) and per model <model>/ with the schedule, the
// predicted timeline and, when measured, the run, a trace and a picture.
// Command line and exit status as every tool's (base/command_line.h): 0 on
// success; 2 for bad flags or inputs (an unknown model or cluster, a missing
// CUDA build); 1 when a measured run failed (the table is written first,
// the failure in its row).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/command_line.h"
#include "base/flag_checks.h"
#include "base/output_dir.h"
#include "base/status_macros.h"
#include "base/user_path.h"
#include "experiments/testbed_cycle.h"
#include "kernel_plans/profile_plan.h"
#include "schedule/cluster_catalog.h"
#include "schedule/cluster_lookup.h"
#include "schedule/schedule_stats.h"
#include "schedule/timeline_metrics.h"
#include "schedule/training_settings.h"
#include "sim/kernel_cost.h"
#include "sim/simulator.h"
#ifdef ZOSCHED_WITH_CUDA
#include <cuda_runtime.h>

#include "runtime/cuda/visible_gpus.h"
#endif

ABSL_FLAG(std::string, out_dir, "", "outputs (default: out/gpu_zo2_benchmark)");
ABSL_FLAG(std::string, cluster, "h100_sxm_x1",
          "the one-GPU cluster to lower and predict for (catalog name or file)");
ABSL_FLAG(int32_t, warmup, 2, "measured steps left out before the timed ones");
ABSL_FLAG(int32_t, repeats, 5, "timed steps per model (the median is reported)");
ABSL_FLAG(std::string, programs_dir, ".",
          "where the programs are: train/train and runtime/calibrate below it, as Bazel lays them out");
ABSL_FLAG(std::string, models, "",
          "comma-separated subset of opt-1.3b, opt-6.7b, opt-13b, opt-30b, qwen3-1.7b, qwen3-8b "
          "and qwen3-32b to run (default: all), e.g. to split the measurement over several "
          "calls");

namespace zosched {
namespace {

// ZO2's own measurement on the H100 machine (peers_h100.md: ZO2 at
// 4bca25c, FP16, batch 1, sequence 2048, median step after 2 warm-up steps;
// peak memory = torch.cuda allocated); NaN where none was made (Qwen3).
struct Model {
  std::string name;
  double zo2_ms;
  double zo2_peak_gb;
};

constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

const std::vector<Model>& Models() {
  static const auto* models = new std::vector<Model>{{"opt-1.3b", 103.8, 1.55},
                                                     {"opt-6.7b", 356.8, 2.66},
                                                     {"opt-13b", 694.2, 3.21},
                                                     {"opt-30b", 1460.4, 4.32},
                                                     {"qwen3-1.7b", kNotMeasured, kNotMeasured},
                                                     {"qwen3-8b", kNotMeasured, kNotMeasured},
                                                     {"qwen3-32b", kNotMeasured, kNotMeasured}};
  return *models;
}

// A figure of ZO2's with `decimals`, or `none` where it was not measured.
std::string Zo2Figure(double value, int decimals, const std::string& none) {
  return std::isnan(value) ? none : absl::StrFormat("%.*f", decimals, value);
}

// The models of --models, in Models()' order (all when it is empty).
// Errors: InvalidArgument naming an unknown model and the known ones.
absl::StatusOr<std::vector<const Model*>> SelectedModels() {
  const std::string flag = absl::GetFlag(FLAGS_models);
  std::vector<const Model*> selected;
  if (flag.empty()) {
    for (const Model& m : Models()) selected.push_back(&m);
    return selected;
  }
  const std::vector<std::string> names = absl::StrSplit(flag, ',');
  for (const std::string& name : names) {
    if (std::none_of(Models().begin(), Models().end(),
                     [&](const Model& m) { return m.name == name; })) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--models=%s: unknown model '%s' (expected some of opt-1.3b, opt-6.7b, opt-13b, "
          "opt-30b, qwen3-1.7b, qwen3-8b, qwen3-32b)",
          flag, name));
    }
  }
  for (const Model& m : Models()) {
    if (std::find(names.begin(), names.end(), m.name) != names.end()) selected.push_back(&m);
  }
  return selected;
}

constexpr double kTargetOverFloor = 1.10;

struct Row {
  const Model* model = nullptr;
  std::string does_not_fit;  // lowering's reason, when the plan does not fit
  int64_t plan_bytes = 0;
  int64_t block_bytes = 0;   // per step, each way (the larger direction)
  double shared_gbps = 0;    // each way, both directions running
  double transfer_s = 0, compute_s = 0, floor_s = 0, predicted_s = 0;
  std::string binding;
  // The step with zosched's own kernels costed one by one
  // (ComputeProfile ZOSCHED_CUDA), and the costliest of them in one block's
  // forwards and update: what keeps the step from its floor.
  double kernel_s = 0;
  std::string costliest_kernels;
  // Measured: `measured` says whether the numbers are there; else
  // `not_measured` says why.
  bool measured = false;
  std::string not_measured;
  double median_s = 0, min_s = 0, max_s = 0;
  // Median start-to-start time of consecutive steps (gaps between steps
  // included; ZO2's figures are wall-clock per step); 0: fewer than 2 steps.
  double period_s = 0;
  int steps = 0;
  int64_t gpu_memory_bytes = -1;  // -1: not measured
};

#ifdef ZOSCHED_WITH_CUDA
absl::Status GpuVisible() {
  int gpus = 0;
  const cudaError_t e = CountVisibleGpus(&gpus);
  if (e != cudaSuccess) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "CUDA cannot count the GPUs: cudaGetDeviceCount: %s: %s", cudaGetErrorName(e),
        cudaGetErrorString(e)));
  }
  if (gpus == 0) {
    return absl::FailedPreconditionError(
        "no CUDA GPU is visible (check nvidia-smi and CUDA_VISIBLE_DEVICES)");
  }
  return absl::OkStatus();
}

// Runs `run` while a thread samples GPU 0's used memory (total - free) every
// 2 ms; returns the peak less the use before `run` started. The CUDA
// backend allocates its memory once, at start-up, so sampling misses
// nothing it holds for the run.
absl::StatusOr<int64_t> PeakGpuMemoryDuring(const std::function<absl::Status()>& run) {
  auto used = []() -> int64_t {
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return -1;
    return static_cast<int64_t>(total_bytes - free_bytes);
  };
  if (cudaSetDevice(0) != cudaSuccess) return absl::InternalError("cudaSetDevice(0) failed");
  const int64_t before = used();
  if (before < 0) return absl::InternalError("cudaMemGetInfo failed");
  std::atomic<bool> done{false};
  std::atomic<int64_t> peak{before};
  std::thread sampler([&] {
    cudaSetDevice(0);
    while (!done.load()) {
      const int64_t now = used();
      if (now > peak.load()) peak.store(now);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  const absl::Status status = run();
  done.store(true);
  sampler.join();
  RETURN_IF_ERROR(status);
  return peak.load() - before;
}
#else
absl::Status GpuVisible() {
  return absl::FailedPreconditionError(
      "this build has no CUDA backend; on a GPU machine: ./bazelw run --config=cuda "
      "//experiments:gpu_zo2_benchmark");
}

absl::StatusOr<int64_t> PeakGpuMemoryDuring(const std::function<absl::Status()>&) {
  return absl::FailedPreconditionError("this build has no CUDA backend");
}
#endif

// Two slots: a block's offload starts after its update, beside its
// forwards, so one slot uploads while the other computes and offloads.
constexpr int kBlockSlots = 2;

CycleCase Zo2Case(const Model& m) {
  CycleCase c;
  c.label = m.name;
  c.model = m.name;
  c.backend = "cuda";
  c.final_outputs = false;  // no host evaluation or fp32 saves of a 30B model
  c.options.strategy = ZO2;
  c.options.block_slots = kBlockSlots;
  c.options.training = DefaultTrainingSettings();
  c.options.training.set_batch_size(1);
  c.options.training.set_micro_batch_size(1);
  c.options.training.set_seq_len(2048);
  c.options.training.set_learning_rate(1e-6);
  c.options.training.set_host_dtype(FP16);
  c.options.training.set_wire_dtype(FP16);
  c.options.training.set_compute_dtype(FP16);
  return c;
}

// The plan, the floor and the prediction of `prediction`'s ZO2 step.
absl::Status FillPrediction(const CyclePrediction& prediction, Row* row) {
  const Schedule& s = prediction.schedule;
  const DeviceStats stats = ComputeDeviceStats(s)[0];
  const Device* device = FindDevice(s.cluster(), s.devices(0).cluster_device());
  if (device == nullptr) {
    // Lowering validated the schedule, so this is a bug, not a bad input.
    return absl::InternalError(absl::StrFormat(
        "schedule device 0's cluster_device '%s' is not a device of its cluster '%s'",
        s.devices(0).cluster_device(), s.cluster().name()));
  }
  const LinkSpec& link = device->host_link();
  row->plan_bytes = stats.memory_bytes;
  row->block_bytes = std::max(stats.h2d_bytes, stats.d2h_bytes);
  // Each direction at its own rate, both together at most at the duplex cap.
  row->transfer_s = std::max(stats.h2d_bytes / (link.down_gbps() * 1e9),
                             stats.d2h_bytes / (link.up_gbps() * 1e9));
  if (link.duplex_gbps() > 0) {
    row->transfer_s = std::max(row->transfer_s, (stats.h2d_bytes + stats.d2h_bytes) /
                                                    (link.duplex_gbps() * 1e9));
  }
  row->shared_gbps = row->block_bytes / row->transfer_s / 1e9;  // the rate each way that implies
  row->compute_s = prediction.predicted.devices[0].compute_ns / 1e9;
  row->floor_s = std::max(row->transfer_s, row->compute_s);
  row->predicted_s = prediction.predicted.step_ns / 1e9;
  row->binding = BindingResourceName(prediction.predicted.binding);
  return absl::OkStatus();
}

// Kernels of the same kind, added up: every "perturb <tensor>" is one.
std::string KernelKind(const std::string& name) {
  return name.rfind("perturb ", 0) == 0 ? "perturb (z)" : name;
}

// The kernel-level prediction of `prediction`'s ZO2 step and the costliest
// kernels of block 0 (its UPDATE and its two forwards).
absl::Status FillKernelPrediction(const CyclePrediction& prediction, Row* row) {
  Schedule s = prediction.schedule;
  s.set_compute_profile(ZOSCHED_CUDA);
  ASSIGN_OR_RETURN(const SimResult result, Simulate(s));
  ASSIGN_OR_RETURN(const StepMetrics m, ComputeStepMetrics(s, result.timeline, 0));
  row->kernel_s = m.step_ns / 1e9;
  const Device* device = FindDevice(s.cluster(), s.devices(0).cluster_device());
  std::map<std::string, double> by_kind;
  for (const Op& op : s.ops()) {
    if (!op.has_compute() || op.compute().params().part() != DECODER_BLOCK ||
        op.compute().params().block() != 0) {
      continue;
    }
    ASSIGN_OR_RETURN(const KernelPlan plan, ProfilePlan(ZOSCHED_CUDA, s.model(), op.compute(),
                                                        s.training().compute_dtype(),
                                                        s.training().peft()));
    for (const Kernel& k : plan) {
      ASSIGN_OR_RETURN(const PlanCost cost,
                       CostPlan({k}, *device, ProfileHostDispatchS(ZOSCHED_CUDA)));
      by_kind[KernelKind(k.name)] += cost.seconds;
    }
  }
  std::vector<std::pair<double, std::string>> costliest;
  for (const auto& [kind, seconds] : by_kind) costliest.push_back({seconds, kind});
  std::sort(costliest.rbegin(), costliest.rend());
  std::vector<std::string> parts;
  for (size_t i = 0; i < costliest.size() && i < 4; ++i) {
    parts.push_back(absl::StrFormat("%s %.3f ms", costliest[i].second, costliest[i].first * 1e3));
  }
  row->costliest_kernels = absl::StrJoin(parts, ", ");
  return absl::OkStatus();
}

std::string Ms(double s) { return absl::StrFormat("%.1f", s * 1e3); }
std::string Gb(int64_t bytes) { return absl::StrFormat("%.2f", bytes / 1e9); }

absl::Status Write(const std::string& out, const std::string& cluster,
                   const std::vector<Row>& rows, const std::string& no_gpu) {
  const int steps = absl::GetFlag(FLAGS_repeats);
  std::vector<std::string> md = {
      "# ZO2 on one GPU: plan, floor, predicted and measured",
      "",
      absl::StrFormat("ZO2 schedule, batch 1, sequence 2048, FP16 host store, wire and compute, "
                      "%d block slots; cluster %s. GB = 1e9 bytes.",
                      kBlockSlots, cluster),
      "",
      "| model | plan peak GB | block GB each way | GB/s each way | transfer ms | compute ms "
      "(sim) | floor ms | target ms (1.10 x floor) | predicted ms | kernel-level ms | measured "
      "ms: median (min-max) | measured ms start to start | measured / floor | GPU memory held "
      "by train GB | ZO2 ms | ZO2 peak GB (torch allocated) |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"};
  std::vector<std::string> csv = {
      "model,plan_peak_gb,block_gb,shared_link_gbps,transfer_ms,compute_ms,floor_ms,target_ms,"
      "predicted_ms,kernel_level_ms,binding,measured_ms,measured_min_ms,measured_max_ms,measured_period_ms,"
      "measured_steps,"
      "measured_gpu_memory_gb,zo2_ms,zo2_peak_gb,note"};
  for (const Row& r : rows) {
    const Model& m = *r.model;
    if (!r.does_not_fit.empty()) {
      md.push_back(absl::StrFormat("| %s | does not fit: %s | | | | | | | | | | | | | %s | %s |",
                                   m.name, r.does_not_fit, Zo2Figure(m.zo2_ms, 1, "-"),
                                   Zo2Figure(m.zo2_peak_gb, 2, "-")));
      csv.push_back(absl::StrFormat("%s,,,,,,,,,,,,,,,,,%s,%s,\"does not fit: %s\"", m.name,
                                    Zo2Figure(m.zo2_ms, 1, ""), Zo2Figure(m.zo2_peak_gb, 2, ""),
                                    r.does_not_fit));
      continue;
    }
    const std::string measured =
        r.measured ? absl::StrFormat("%s (%s-%s)", Ms(r.median_s), Ms(r.min_s), Ms(r.max_s))
                   : r.not_measured;
    // Against the floor: the time per step the run saw (start to start),
    // the median step where there was no pair of consecutive steps.
    const double per_step_s = r.period_s > 0 ? r.period_s : r.median_s;
    const std::string period = r.measured && r.period_s > 0 ? Ms(r.period_s) : "-";
    const std::string ratio = r.measured ? absl::StrFormat("%.2f", per_step_s / r.floor_s) : "-";
    const std::string memory = r.gpu_memory_bytes >= 0 ? Gb(r.gpu_memory_bytes) : "-";
    md.push_back(absl::StrFormat(
        "| %s | %s | %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
        m.name, Gb(r.plan_bytes), Gb(r.block_bytes), r.shared_gbps, Ms(r.transfer_s),
        Ms(r.compute_s), Ms(r.floor_s), Ms(kTargetOverFloor * r.floor_s), Ms(r.predicted_s),
        Ms(r.kernel_s), measured, period, ratio,
        memory, Zo2Figure(m.zo2_ms, 1, "-"), Zo2Figure(m.zo2_peak_gb, 2, "-")));
    csv.push_back(absl::StrFormat(
        "%s,%s,%s,%.1f,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s", m.name,
        Gb(r.plan_bytes), Gb(r.block_bytes), r.shared_gbps, Ms(r.transfer_s), Ms(r.compute_s),
        Ms(r.floor_s), Ms(kTargetOverFloor * r.floor_s), Ms(r.predicted_s), Ms(r.kernel_s),
        r.binding,
        r.measured ? Ms(r.median_s) : "", r.measured ? Ms(r.min_s) : "",
        r.measured ? Ms(r.max_s) : "", r.measured && r.period_s > 0 ? Ms(r.period_s) : "",
        r.measured ? absl::StrCat(r.steps) : "",
        r.gpu_memory_bytes >= 0 ? Gb(r.gpu_memory_bytes) : "",
        Zo2Figure(m.zo2_ms, 1, ""), Zo2Figure(m.zo2_peak_gb, 2, ""),
        r.measured ? "" : "\"" + r.not_measured + "\""));
  }
  md.push_back("");
  md.push_back(
      "Kernel-level: the same schedule with zosched's own CUDA kernels costed one by one "
      "(lower --compute_profile=zosched_cuda; sim/kernel_cost.h). The costliest kernels of "
      "block 0 (its update and both forwards), what keeps each step from its floor:");
  for (const Row& r : rows) {
    if (r.does_not_fit.empty()) {
      md.push_back(absl::StrFormat("- %s: %s", r.model->name, r.costliest_kernels));
    }
  }
  md.push_back("");
  if (!no_gpu.empty()) md.push_back("measured: not run (no GPU): " + no_gpu);
  md.push_back(absl::StrFormat(
      "Floor: max(transfer, compute); transfer = max(h2d / down, d2h / up, (h2d + d2h) / "
      "duplex) of the host link (upload and offload run at once; GB/s each way: the rate that "
      "implies for the block bytes); compute "
      "= the simulator's predicted compute time of the step. Measured: train --backend=cuda, "
      "median of %d steps after %d warm-up steps (the measured timeline), and the median time "
      "from one step's start to the next's (gaps included; measured / floor uses it); GPU "
      "memory held by "
      "train = peak of cudaMemGetInfo's used memory on GPU 0 during the run less before it "
      "(plan + the backend's reserve + CUDA context and library handles). ZO2 columns: ZO2's "
      "own code on the same H100 (../shared/reference/peers_h100.md; torch allocated, without "
      "the context).",
      steps, absl::GetFlag(FLAGS_warmup)));
  for (const std::string& line : md) std::printf("%s\n", line.c_str());
  RETURN_IF_ERROR(WriteFile(out + "/benchmark.md", absl::StrJoin(md, "\n") + "\n"));
  RETURN_IF_ERROR(WriteFile(out + "/benchmark.csv", absl::StrJoin(csv, "\n") + "\n"));
  std::printf("\nwrote %s/benchmark.{md,csv}\n", out.c_str());
  return absl::OkStatus();
}

absl::Status Run(bool* measurement_failed) {
  const std::string out = OutputDir(absl::GetFlag(FLAGS_out_dir), "gpu_zo2_benchmark");
  RETURN_IF_ERROR(MakeDirectories(out));
  const std::string cluster_flag = absl::GetFlag(FLAGS_cluster);
  ASSIGN_OR_RETURN(const Cluster cluster,
                   LoadCluster(CatalogClusterPath(cluster_flag).empty()
                                   ? ResolveUserPath(cluster_flag)
                                   : cluster_flag));
  const absl::Status gpu = GpuVisible();
  const std::string no_gpu = gpu.ok() ? "" : std::string(gpu.message());
  const std::string train = TrainProgram(absl::GetFlag(FLAGS_programs_dir));
  const int warmup = absl::GetFlag(FLAGS_warmup);
  const int repeats = absl::GetFlag(FLAGS_repeats);

  ASSIGN_OR_RETURN(const std::vector<const Model*> models, SelectedModels());
  std::vector<Row> rows;
  for (const Model* model : models) {
    const Model& m = *model;
    Row row;
    row.model = &m;
    const CycleCase c = Zo2Case(m);
    absl::StatusOr<CyclePrediction> prediction = PredictCycle(c, cluster, out);
    if (absl::IsResourceExhausted(prediction.status())) {
      row.does_not_fit = std::string(prediction.status().message());
      std::printf("%s: does not fit: %s\n", m.name.c_str(), row.does_not_fit.c_str());
      rows.push_back(row);
      continue;
    }
    RETURN_IF_ERROR(prediction.status());
    RETURN_IF_ERROR(FillPrediction(*prediction, &row));
    RETURN_IF_ERROR(FillKernelPrediction(*prediction, &row));
    std::printf("%s: plan %.2f GB, floor %.1f ms, predicted %.1f ms, kernel-level %.1f ms (%s)",
                m.name.c_str(), row.plan_bytes / 1e9, row.floor_s * 1e3, row.predicted_s * 1e3,
                row.kernel_s * 1e3, row.costliest_kernels.c_str());
    if (!gpu.ok()) {
      row.not_measured = "not run (no GPU)";
      std::printf("; measured: not run (no GPU)\n");
      rows.push_back(row);
      continue;
    }
    std::printf("; measuring %d + %d steps ...\n", warmup, repeats);
    std::fflush(stdout);
    CycleResult result;
    absl::StatusOr<int64_t> memory = PeakGpuMemoryDuring([&]() -> absl::Status {
      ASSIGN_OR_RETURN(result, MeasureCycle(c, *prediction, warmup + repeats, warmup, train));
      return absl::OkStatus();
    });
    if (!memory.ok()) {
      row.not_measured = "failed: " + std::string(memory.status().message());
      std::printf("%s: measurement failed: %s\n", m.name.c_str(), row.not_measured.c_str());
      *measurement_failed = true;
      rows.push_back(row);
      continue;
    }
    row.measured = true;
    row.median_s = result.comparison.measured_step_ns / 1e9;
    row.min_s = result.comparison.measured_min_step_ns / 1e9;
    row.max_s = result.comparison.measured_max_step_ns / 1e9;
    row.period_s = result.comparison.measured_period_ns / 1e9;
    row.steps = result.comparison.measured_steps;
    row.gpu_memory_bytes = *memory;
    std::printf("%s: measured %.1f ms (median of %d steps; %.1f ms start to start), GPU memory "
                "held by train %.2f GB\n",
                m.name.c_str(), row.median_s * 1e3, row.steps, row.period_s * 1e3, *memory / 1e9);
    rows.push_back(row);
  }
  std::printf("\n");
  return Write(out, cluster.name(), rows, no_gpu);
}

absl::Status CheckFlags() {
  RETURN_IF_ERROR(CheckFlagRange("warmup", absl::GetFlag(FLAGS_warmup), 0, 1000,
                                 "measured steps left out"));
  return CheckFlagRange("repeats", absl::GetFlag(FLAGS_repeats), 1, 10000, "timed steps");
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"gpu_zo2_benchmark", "",
       "ZO2 on one GPU against the physical floor and ZO2's own code, for OPT-1.3B to 30B at\n"
       "batch 1, sequence 2048, FP16: the plan's memory, the floor, the prediction and, with a\n"
       "GPU (a --config=cuda build), the measured step; writes benchmark.md and .csv."});
  bool measurement_failed = false;
  absl::Status status = zosched::CheckFlags();
  if (status.ok()) status = zosched::Run(&measurement_failed);
  if (!status.ok()) return zosched::ReportError("gpu_zo2_benchmark", status);
  return measurement_failed ? 1 : 0;
}
