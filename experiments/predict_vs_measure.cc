// Predicted versus measured: the cycle lower -> simulate on the calibrated
// cluster -> execute for real -> compare, for a set of schedules, on the
// CPU testbed (--backend=cpu, the default) or on NVIDIA GPUs (--backend=cuda,
// in a --config=cuda build).
//
//   bazel run //experiments:predict_vs_measure [-- --steps=12 --warmup=2
//       --calibrated=clusters/local_cpu.calibrated.pbtxt --out_dir=...]
//   bazel run --config=cuda //experiments:predict_vs_measure -- --backend=cuda
//       [--cluster=h100_sxm_x1 --calibrated=FILE_OR_CATALOG_NAME]
//
// CPU testbed: opt-tiny (--model, --batch, --seq) for zo2 and distzo2 P2xD1,
// P1xD2, P2xD2 (sliced and naive), each at three emulated host-link rates
// (compute-bound, balanced, transfer-bound), on real MPI ranks; and a tiny
// LLaMA and a tiny Qwen3 (--more_models: grouped-query attention, SwiGLU,
// rotary positions, QK-norm) for zo2 and distzo2 P2xD2 sliced, balanced and
// transfer-bound; n-SPSA with 4 directions a step (zo2 and distzo2 P2xD1
// sliced, balanced and transfer-bound); and LoRA ZO, rank 8 on query and
// value (zo2, distzo2 P2xD1 sliced and P2xD2 naive, balanced and
// transfer-bound).
// GPUs: zo2 and mezo on OPT-1.3B, 2.7B and 6.7B (random init) in FP16 and
// FP32 (host = wire = compute dtype), block slots 2 and 3, micro-batch 1 and
// 4, sequence 512 and 2048, on the one GPU of --cluster; and distzo2 P2xD1
// lowered for the 2-GPU --shared_gpu_cluster and run as 2 processes sharing
// the GPU (so its prediction assumes two GPUs; the measurement shares one:
// those rows get a summary line of their own, outside the target).
// A schedule whose memory plan does not fit (or whose processes' plans
// together exceed the one GPU) is printed with the reason and skipped.
//
// Without --calibrated it runs //runtime:calibrate (--backend=cuda for
// GPUs: once, timing the compute shapes of every schedule, lowered first
// into <out>/calibration_schedules, in its compute dtype) on --cluster into
// the output directory, and on the CPU testbed
// again just before each schedule, into the schedule's directory (the VM's
// speed drifts between schedules); --calibrated takes a Cluster file or a
// catalog name (h100_sxm_x1 holds figures measured on the H100 machine).
// On the CPU testbed a schedule whose calibration's rounds disagreed (a
// device's compute_spread over --max_calibration_spread: the core changed
// speed while it was calibrated) or whose run found a core more than
// --max_speed_drift off its calibrated speed (the speed probe between
// steps) is calibrated and run again, --attempts runs at most, each into
// <schedule>/attempt<N> (experiments/steady_machine.h); the table gives each
// run's drift and calibration spread, and the steady run counts, or else
// the one that missed least. --rounds=N measures the whole set N times in
// turn, each schedule anew in every round (round N into <schedule>/roundN),
// and reports each figure as its median over the rounds
// (experiments/rounds_median.h).
// Writes predict_vs_measure.md and .csv (schedule, predicted
// and measured step time with its spread, error %, overlap and exposed
// communication both ways, binding resource, runs, core drift and
// calibration spread), and per
// schedule a Chrome trace with both timelines and a picture of them one
// above the other; ends with the summary line: median |error| and max
// |error|.
// --hosts=A,B (CPU): instead, DistZO2 on the machines of a cluster whose
// hosts are joined by NICs (default two_node_cpu; on the two-node testbed
// node1,node2): P2xD2 sliced and naive and P1xD4 sliced, compute-bound and
// transfer-bound, calibrated with calibrate --hosts (the NICs) and run with
// train --hosts.
// --quick: 2 schedules only (CPU: zo2 and distzo2 P2xD2 sliced; GPU: zo2 and
// distzo2 P2xD1 on OPT-1.3B FP16 at sequence 512; with --hosts, 1: P2xD2
// sliced, transfer-bound).
// Command line and exit status as every tool's (base/command_line.h): 0 on
// success; 2 for bad flags or inputs, and when train or calibrate refuses
// to run (e.g. --backend=cuda in a build without --config=cuda, or on a
// machine without a GPU: their message is printed) or every schedule was
// skipped as not fitting; 1 when a run fails.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/command_line.h"
#include "base/flag_checks.h"
#include "base/output_dir.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/user_path.h"
#include "experiments/breakdown_target.h"
#include "experiments/rounds_median.h"
#include "experiments/steady_machine.h"
#include "experiments/testbed_cycle.h"
#include "models/adapters.h"
#include "models/model_spec.h"
#include "schedule/cluster_catalog.h"
#include "schedule/peft_choice.h"
#include "schedule/schedule_stats.h"
#include "schedule/strategy_grid.h"
#include "schedule/testbed_grid.h"
#include "schedule/training_settings.h"

ABSL_FLAG(std::string, backend, "cpu",
          "cpu (the testbed, MPI ranks) or cuda (NVIDIA GPUs; a --config=cuda build)");
ABSL_FLAG(std::string, out_dir, "",
          "outputs (default: out/predict_vs_measure; cuda: out/predict_vs_measure_cuda)");
ABSL_FLAG(std::string, cluster, "",
          "the cluster to calibrate and predict on, catalog name or file (default: local_cpu; "
          "cuda: h100_sxm_x1)");
ABSL_FLAG(std::string, shared_gpu_cluster, "h100_sxm_x2",
          "cuda: the 2-device cluster distzo2 P2xD1 is lowered for (its 2 processes share the "
          "GPU)");
ABSL_FLAG(std::string, calibrated, "",
          "a calibrated cluster, file or catalog name (default: calibrate --cluster now)");
ABSL_FLAG(std::string, model, "opt-tiny", "cpu: the model to train");
ABSL_FLAG(std::string, more_models, "llama-tiny,qwen3-tiny",
          "cpu: comma-separated models (other families) also run, as zo2 and distzo2 P2xD2 "
          "sliced in the balanced and transfer-bound regimes; empty: none");
ABSL_FLAG(int32_t, batch, 16, "cpu: examples per step");
ABSL_FLAG(int32_t, seq, 32, "cpu: sequence length");
ABSL_FLAG(int32_t, steps, 30, "steps per run");
ABSL_FLAG(int32_t, warmup, 2, "steps left out of the comparison");
ABSL_FLAG(bool, quick, false,
          "2 schedules only (for tests): cpu: zo2 compute-bound, distzo2 P2xD2 sliced balanced; "
          "cuda: zo2 and distzo2 P2xD1 on OPT-1.3B FP16, sequence 512");
ABSL_FLAG(std::string, programs_dir, ".",
          "where the programs are: train/train and runtime/calibrate below it, as Bazel lays them out");
ABSL_FLAG(std::string, only, "",
          "comma-separated parts of schedule names: run only the schedules whose name holds "
          "one (default: all; e.g. opt-1.3b, to split a GPU run over several calls)");
ABSL_FLAG(double, max_speed_drift, 0.05,
          "cpu: run a schedule again (calibrating again) when the speed probe found a core more "
          "than this fraction faster or slower during its run than at calibration; 0: never");
ABSL_FLAG(double, max_calibration_spread, 0.10,
          "cpu: run a schedule again (calibrating again) when its calibration's compute times "
          "varied more than this fraction over their rounds on a core (compute_spread: 2-4 % on "
          "a quiet core); 0: never");
ABSL_FLAG(int32_t, attempts, 3,
          "cpu: runs of a schedule at most, under --max_speed_drift and --max_calibration_spread");
ABSL_FLAG(int32_t, rounds, 1,
          "measure the whole set this many times, in turn, each schedule calibrated (cpu), "
          "predicted and run anew in every round, and report per schedule the median of each "
          "figure over the rounds (experiments/rounds_median.h; 3 on a VM whose speed drifts)");
ABSL_FLAG(std::vector<std::string>, hosts, {},
          "cpu: comma-separated machines, one for each host of --cluster in its order (default "
          "cluster then: two_node_cpu; on the two-node testbed node1,node2): runs the two-node "
          "schedules there instead (calibrate --hosts, train --hosts)");

namespace zosched {
namespace {

// Host-link rates (GB/s) that put opt-tiny's steps on the testbed in three
// regimes: a block (200 KB in fp32) then takes ~0.1x, ~1x and ~4x its
// compute to move.
const std::vector<std::pair<std::string, double>>& LinkRegimes() {
  static const auto* regimes = new std::vector<std::pair<std::string, double>>{
      {"compute-bound", 1.0}, {"balanced", 0.1}, {"transfer-bound", 0.025}};
  return *regimes;
}

// A testbed case: --model on `grid` at --batch and --seq, FP32, its host
// links emulated at `gbps`.
CycleCase TestbedCase(const std::string& label, const StrategyGrid& grid, double gbps) {
  CycleCase c;
  c.label = label;
  c.model = absl::GetFlag(FLAGS_model);
  c.host_link_gbps = gbps;
  c.options = GridLowerOptions(grid);
  c.options.training.set_batch_size(absl::GetFlag(FLAGS_batch));
  c.options.training.set_seq_len(absl::GetFlag(FLAGS_seq));
  c.options.training.set_learning_rate(5e-4);
  c.options.training.set_compute_dtype(FP32);
  c.options.training.set_host_dtype(FP32);
  return c;
}

std::vector<CycleCase> CpuCases() {
  std::vector<CycleCase> cases;
  for (const auto& [regime, gbps] : LinkRegimes()) {
    for (const StrategyGrid& g : TestbedGrids()) {
      const std::string name = GridSchemeName(g);
      const bool quick = absl::GetFlag(FLAGS_quick);
      const bool in_quick = (name == "zo2" && regime == "compute-bound") ||
                            (name == "distzo2_P2xD2_sliced" && regime == "balanced");
      if (quick && !in_quick) continue;
      const CycleCase c = TestbedCase(name + "_" + regime, g, gbps);
      cases.push_back(c);
      // The other families' models on the grids that carry the most of
      // their shapes (blocks streamed; all-gathered slices).
      const bool family_case = (name == "zo2" || name == "distzo2_P2xD2_sliced") &&
                               regime != "compute-bound";
      if (quick || !family_case) continue;
      const std::vector<std::string> more_models =
          absl::StrSplit(absl::GetFlag(FLAGS_more_models), ',', absl::SkipEmpty());
      for (const std::string& model : more_models) {
        CycleCase other = c;
        other.label = model + "_" + c.label;
        other.model = model;
        cases.push_back(other);
      }
    }
    // n-SPSA, 4 directions a step: a block uploaded once serves 8 forwards,
    // so the links that bound one direction's step bind these less; zo2 and
    // P2xD1 sliced (4 of the 8 passes on each device).
    if (absl::GetFlag(FLAGS_quick) || regime == "compute-bound") continue;
    for (const StrategyGrid& g : {StrategyGrid{ZO2, 1, 1, true}, StrategyGrid{DISTZO2, 2, 1, true}}) {
      CycleCase c = TestbedCase(GridSchemeName(g) + "_q4_" + regime, g, gbps);
      c.options.training.set_directions(4);
      cases.push_back(c);
    }
    // LoRA (rank 8 on query and value): the frozen base is uploaded and
    // never offloaded, the adapters perturbed and updated on every device;
    // zo2, P2xD1 sliced and P2xD2 naive (one shared store).
    for (const StrategyGrid& g : {StrategyGrid{ZO2, 1, 1, true}, StrategyGrid{DISTZO2, 2, 1, true},
                                  StrategyGrid{DISTZO2, 2, 2, false}}) {
      CycleCase c = TestbedCase(GridSchemeName(g) + "_lora_" + regime, g, gbps);
      Peft& peft = *c.options.training.mutable_peft();
      peft.set_kind(LORA);
      peft.set_lora_rank(8);
      peft.set_lora_alpha(16);
      c.options.block_slots = 2;
      cases.push_back(c);
    }
    // Prefix tuning (MeZO's 5 virtual tokens): as LoRA, the base frozen and
    // the prefix resident; its cost is attention over 5 more keys.
    for (const StrategyGrid& g :
         {StrategyGrid{ZO2, 1, 1, true}, StrategyGrid{DISTZO2, 2, 2, false}}) {
      CycleCase c = TestbedCase(GridSchemeName(g) + "_prefix_" + regime, g, gbps);
      Peft& peft = *c.options.training.mutable_peft();
      peft.set_kind(PREFIX);
      peft.set_prefix_tokens(5);
      c.options.block_slots = 2;
      cases.push_back(c);
    }
  }
  return cases;
}

// The two-node cases (--hosts): DistZO2 on two machines of two devices
// each, whose all-gathers stay on a machine (the lowering gathers a host's
// slices among its own devices) while the perturbations' and data-parallel
// ranks' scalars cross the NIC every step: P2xD2 (the +/- pairs across the
// machines) and P1xD4 (data parallel across them), sliced and naive, with
// the host links compute-bound and transfer-bound.
std::vector<CycleCase> TwoNodeCases() {
  std::vector<CycleCase> cases;
  for (const auto& [regime, gbps] : LinkRegimes()) {
    if (regime == "balanced") continue;
    for (const StrategyGrid& g : {StrategyGrid{DISTZO2, 2, 2, true},
                                  StrategyGrid{DISTZO2, 2, 2, false},
                                  StrategyGrid{DISTZO2, 1, 4, true}}) {
      const std::string name = GridSchemeName(g);
      if (absl::GetFlag(FLAGS_quick) &&
          !(name == "distzo2_P2xD2_sliced" && regime == "transfer-bound")) {
        continue;
      }
      cases.push_back(TestbedCase("two_node_" + name + "_" + regime, g, gbps));
    }
  }
  return cases;
}

// train --hosts for `cluster` on `machines` (one per cluster host, in its
// order): "MACHINE:DEVICES" per host. Errors: InvalidArgument when the
// counts differ.
absl::StatusOr<std::string> TrainHosts(const Cluster& cluster,
                                       const std::vector<std::string>& machines) {
  if (static_cast<int>(machines.size()) != cluster.hosts_size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--hosts names %d machines; cluster '%s' has %d hosts: one machine for each",
        machines.size(), cluster.name(), cluster.hosts_size()));
  }
  std::vector<std::string> slots;
  for (int h = 0; h < cluster.hosts_size(); ++h) {
    int devices = 0;
    for (const Device& d : cluster.devices()) devices += d.host() == cluster.hosts(h).name();
    slots.push_back(absl::StrFormat("%s:%d", machines[h], devices));
  }
  return absl::StrJoin(slots, ",");
}

// The GPU cases: (strategy, model, dtype, block slots, batch, micro-batch,
// sequence), covering zo2 and mezo on OPT-1.3B, 2.7B and 6.7B in FP16 and
// FP32, slots 2 and 3, micro-batch 1 and 4 (and 4 micro-batches of 1),
// sequence 512 and 2048, and distzo2 P2xD1 (sliced) on processes sharing
// the GPU. Every plan fits one 80 GB H100 (the largest: mezo OPT-6.7B FP32,
// about 28 GB); the runtime checks that again against the GPU's free memory.
std::vector<CycleCase> GpuCases() {
  struct Gpu {
    StrategyKind strategy;
    std::string model;
    DType dtype;
    int slots, batch, micro, seq;
    bool quick;
  };
  const std::vector<Gpu> grid = {
      {ZO2, "opt-1.3b", FP16, 3, 1, 1, 2048, false},  // ZO2's own speed-test setting
      {ZO2, "opt-1.3b", FP16, 3, 1, 1, 512, true},
      {ZO2, "opt-1.3b", FP32, 3, 1, 1, 2048, false},
      {ZO2, "opt-1.3b", FP16, 2, 4, 1, 512, false},
      {MEZO, "opt-1.3b", FP16, 3, 1, 1, 2048, false},
      {MEZO, "opt-1.3b", FP32, 3, 4, 4, 512, false},
      {ZO2, "opt-2.7b", FP16, 3, 4, 4, 512, false},
      {ZO2, "opt-2.7b", FP32, 2, 1, 1, 2048, false},
      {MEZO, "opt-2.7b", FP16, 3, 4, 1, 512, false},
      {ZO2, "opt-6.7b", FP16, 3, 1, 1, 2048, false},
      {ZO2, "opt-6.7b", FP16, 2, 4, 4, 512, false},
      {ZO2, "opt-6.7b", FP32, 3, 1, 1, 512, false},
      {MEZO, "opt-6.7b", FP16, 3, 1, 1, 2048, false},
      {MEZO, "opt-6.7b", FP32, 3, 1, 1, 512, false},
      {DISTZO2, "opt-1.3b", FP16, 3, 1, 1, 2048, false},
      {DISTZO2, "opt-1.3b", FP16, 3, 1, 1, 512, true},
      {DISTZO2, "opt-2.7b", FP16, 2, 4, 4, 512, false},
  };
  std::vector<CycleCase> cases;
  for (const Gpu& g : grid) {
    if (absl::GetFlag(FLAGS_quick) && !g.quick) continue;
    CycleCase c;
    c.backend = "cuda";
    // No host evaluation or fp32 saves of billion-parameter models: the
    // comparison needs the timeline only.
    c.final_outputs = false;
    c.model = g.model;
    c.options.strategy = g.strategy;
    if (g.strategy == DISTZO2) {
      c.options.pertp = 2;
      c.options.dp = 1;
      c.options.slicing = true;
    }
    if (g.strategy != MEZO) c.options.block_slots = g.slots;
    c.options.training = DefaultTrainingSettings();
    c.options.training.set_batch_size(g.batch);
    c.options.training.set_micro_batch_size(g.micro);
    c.options.training.set_seq_len(g.seq);
    c.options.training.set_learning_rate(1e-6);  // MeZO's
    c.options.training.set_compute_dtype(g.dtype);
    c.options.training.set_host_dtype(g.dtype);
    c.options.training.set_wire_dtype(g.dtype);
    const std::string strategy = GridName({g.strategy, c.options.pertp, c.options.dp});
    c.label = absl::StrFormat("%s_%s_%s_%sb%d_mb%d_seq%d", strategy, g.model,
                              absl::AsciiStrToLower(DType_Name(g.dtype)),
                              g.strategy == MEZO ? "" : absl::StrFormat("slots%d_", g.slots),
                              g.batch, g.micro, g.seq);
    cases.push_back(c);
  }
  return cases;
}

// The file stem of a catalog name or a Cluster file ("local_cpu" for
// "clusters/local_cpu.pbtxt").
std::string ClusterStem(const std::string& name_or_path) {
  std::string stem = name_or_path.substr(name_or_path.find_last_of('/') + 1);
  if (absl::EndsWith(stem, ".pbtxt")) stem.resize(stem.size() - 6);
  return stem;
}

// A catalog name as is; a path as the user meant it (base/user_path.h).
std::string ClusterArgument(const std::string& name_or_path) {
  return CatalogClusterPath(name_or_path).empty() ? ResolveUserPath(name_or_path) : name_or_path;
}

// What the cycle does on a backend (--backend).
struct BackendCycle {
  std::string name;             // --backend
  std::string out_subdir;       // the default --out_dir, under out/
  std::string default_cluster;  // the default --cluster
  // Without --calibrated: calibrate just before each schedule (the testbed,
  // a VM whose speed drifts), else once, for the schedules' compute shapes.
  bool calibrate_each_schedule = false;
  // Schedules of several devices are lowered for --shared_gpu_cluster and
  // run as processes sharing the machine's one GPU.
  bool devices_share_one_gpu = false;
  int label_width = 0;       // of a schedule's name on its progress line
  int target_error_pct = 0;  // the target median |error|
  std::vector<CycleCase> (*cases)() = nullptr;
};

const std::vector<BackendCycle>& BackendCycles() {
  static const auto* cycles = new std::vector<BackendCycle>{
      {"cpu", "predict_vs_measure", "local_cpu", /*calibrate_each_schedule=*/true,
       /*devices_share_one_gpu=*/false, 48, 4, CpuCases},
      {"cuda", "predict_vs_measure_cuda", "h100_sxm_x1", /*calibrate_each_schedule=*/false,
       /*devices_share_one_gpu=*/true, 50, 5, GpuCases},
  };
  return *cycles;
}

// The cycle of backend `name`, or nullptr.
const BackendCycle* FindBackendCycle(const std::string& name) {
  for (const BackendCycle& cycle : BackendCycles()) {
    if (cycle.name == name) return &cycle;
  }
  return nullptr;
}

// Why the schedule of `prediction` cannot run on `gpu` (the one GPU of the
// machine) when its devices are processes sharing it: their plans together
// exceed the GPU's memory. "" when they fit (or there is one device).
std::string SharedGpuShortfall(const Schedule& schedule, const Cluster& gpu) {
  if (schedule.devices_size() < 2) return "";
  int64_t total = 0;
  for (const DeviceStats& d : ComputeDeviceStats(schedule)) total += d.memory_bytes;
  const int64_t capacity = gpu.devices(0).memory_bytes();
  if (total <= capacity) return "";
  return absl::StrFormat(
      "its %d processes share the one GPU of %s: their memory plans sum to %.2f GB, over the "
      "GPU's %.2f GB by %.2f GB",
      schedule.devices_size(), gpu.name(), total / 1e9, capacity / 1e9, (total - capacity) / 1e9);
}

// Runs //runtime:calibrate on `cluster_name` into `dir`; returns the
// calibrated Cluster file's path (its log: dir/calibrate.log). Where the
// backend calibrates once, it measures the compute shapes of `schedules`
// (schedule files); before each schedule, those of `model`'s testbed grids
// with `training`'s directions a step and adapters.
absl::StatusOr<std::string> CalibrateInto(const std::string& dir, const std::string& cluster_name,
                                          const BackendCycle& cycle,
                                          const std::vector<std::string>& schedules,
                                          const std::string& model,
                                          const TrainingSettings& training) {
  const std::string calibrated = dir + "/" + ClusterStem(cluster_name) + ".calibrated.pbtxt";
  std::vector<std::string> argv = {CalibrateProgram(absl::GetFlag(FLAGS_programs_dir)),
                                   "--out=" + calibrated,
                                   "--cluster=" + ClusterArgument(cluster_name)};
  if (!cycle.calibrate_each_schedule) {
    argv.push_back("--backend=" + cycle.name);
    argv.push_back("--schedules=" + absl::StrJoin(schedules, ","));
  } else {
    argv.push_back("--model=" + (model.empty() ? absl::GetFlag(FLAGS_model) : model));
    argv.push_back(absl::StrFormat("--batch=%d", absl::GetFlag(FLAGS_batch)));
    argv.push_back(absl::StrFormat("--seq=%d", absl::GetFlag(FLAGS_seq)));
    if (DirectionsOf(training) > 1) {
      argv.push_back(absl::StrFormat("--directions=%d", DirectionsOf(training)));
    }
    if (TrainsAdapters(training.peft())) argv.push_back("--peft=" + PeftFlagName(training.peft()));
    if (TrainsLora(training.peft())) {
      argv.push_back(absl::StrFormat("--lora_rank=%d", training.peft().lora_rank()));
      argv.push_back(absl::StrFormat("--lora_alpha=%g", training.peft().lora_alpha()));
      argv.push_back("--lora_targets=" + LoraTargetList(training.peft()));
    }
    if (PrefixTokens(training.peft()) > 0) {
      argv.push_back(absl::StrFormat("--prefix_tokens=%d", training.peft().prefix_tokens()));
    }
    if (!absl::GetFlag(FLAGS_hosts).empty()) {
      argv.push_back("--hosts=" + absl::StrJoin(absl::GetFlag(FLAGS_hosts), ","));
    }
  }
  RETURN_IF_ERROR(RunRuntimeProgram("calibration", argv, dir + "/calibrate.log"));
  return calibrated;
}

// The backend's cases whose label holds one of --only's parts (all when it
// is empty). Errors: InvalidArgument for a part that no label holds, listing
// the labels.
absl::StatusOr<std::vector<CycleCase>> SelectedCases(const BackendCycle& cycle) {
  const std::vector<CycleCase> all =
      absl::GetFlag(FLAGS_hosts).empty() ? cycle.cases() : TwoNodeCases();
  const std::string only = absl::GetFlag(FLAGS_only);
  if (only.empty()) return all;
  const std::vector<std::string> parts = absl::StrSplit(only, ',');
  auto holds = [](const CycleCase& c, const std::string& part) {
    return !part.empty() && absl::StrContains(c.label, part);
  };
  for (const std::string& part : parts) {
    if (std::none_of(all.begin(), all.end(), [&](const CycleCase& c) { return holds(c, part); })) {
      std::vector<std::string> labels;
      for (const CycleCase& c : all) labels.push_back(c.label);
      return absl::InvalidArgumentError(absl::StrFormat(
          "--only=%s: no schedule's name holds '%s' (the names: %s)", only, part,
          absl::StrJoin(labels, ", ")));
    }
  }
  std::vector<CycleCase> selected;
  for (const CycleCase& c : all) {
    if (std::any_of(parts.begin(), parts.end(),
                    [&](const std::string& part) { return holds(c, part); })) {
      selected.push_back(c);
    }
  }
  return selected;
}

// "median |error| M%, max |error| X%" of `errors` (|fractions|, not empty).
std::string ErrorSpread(std::vector<double> errors) {
  std::sort(errors.begin(), errors.end());
  return absl::StrFormat("median |error| %.1f%%, max |error| %.1f%%",
                         100 * errors[(errors.size() - 1) / 2], 100 * errors.back());
}

// A prediction made again from the run (MeasureCycle; `predicted_ns` 0:
// none), printed after `what` with its error against `measured_ns`.
void PrintPredictedAgain(const std::string& what, int64_t predicted_ns, int64_t measured_ns) {
  if (predicted_ns <= 0) return;
  std::printf("  %s %8.2f ms  error %+6.1f%%", what.c_str(), predicted_ns / 1e6,
              100 * (static_cast<double>(predicted_ns) / measured_ns - 1));
}

// One run's line of the progress output, after its label.
void PrintRun(const CycleResult& r) {
  const TimelineComparison& cmp = r.comparison;
  std::printf("predicted %8.2f ms  measured %8.2f ms  error %+6.1f%%",
              cmp.predicted_step_ns / 1e6, cmp.measured_step_ns / 1e6, 100 * cmp.step_error);
  if (!r.speed_drifts.empty()) {
    std::printf("  core drift / calibration spread %s", AttemptsSummary(r).c_str());
  }
  PrintPredictedAgain("with the cores' speed during the run", r.probed_predicted_step_ns,
                      cmp.measured_step_ns);
  PrintPredictedAgain("with the run's compute costs", r.run_costs_predicted_step_ns,
                      cmp.measured_step_ns);
  std::printf("\n");
}

// The devices' figures (scales, rates) of each round, ';' between devices
// and ' ' between rounds ("" when no round has any).
std::string ScalesOfRounds(const std::vector<CycleResult>& rounds,
                           std::vector<double> CycleResult::*scales) {
  std::vector<std::string> fields;
  for (const CycleResult& r : rounds) {
    if ((r.*scales).empty()) continue;
    fields.push_back(absl::StrJoin(
        r.*scales, ";", [](std::string* o, double x) { absl::StrAppendFormat(o, "%.3f", x); }));
  }
  return absl::StrJoin(fields, " ");
}

// The CSV fields "predicted_ms,error_pct,scales" of a prediction made again
// from the runs (",," when none was).
std::string PredictedAgainFields(bool has, double ms, double error, const std::string& scales) {
  if (!has) return ",,";
  return absl::StrFormat("%.3f,%.2f,%s", ms, 100 * error, scales);
}

// How many of a set of predicted breakdowns met their targets against the
// measured ones.
struct BreakdownTally {
  int checked = 0, overlaps_met = 0, exposed_met = 0;
  void Add(const Breakdown& predicted, const Breakdown& measured) {
    const BreakdownCheck check = CheckBreakdown(predicted.overlap, measured.overlap,
                                                predicted.exposed_ns, measured.exposed_ns);
    ++checked;
    overlaps_met += check.overlap_ok;
    exposed_met += check.exposed_ok;
  }
  // "; breakdown: overlap within target in O of N, exposed communication
  // in E of N" ("" when none was checked).
  std::string Summary() const {
    if (checked == 0) return "";
    return absl::StrFormat(
        "; breakdown: overlap within target in %d of %d, exposed communication in %d of %d",
        overlaps_met, checked, exposed_met, checked);
  }
};

// The CSV fields "overlap_pct,exposed_ms" of a breakdown predicted again
// ("," when none was).
std::string BreakdownFields(bool has, const Breakdown& b) {
  if (!has) return ",";
  return absl::StrFormat("%.1f,%.3f", 100 * b.overlap, b.exposed_ns / 1e6);
}

// The tables and the summary line of the schedules measured so far.
struct Report {
  std::vector<std::string> csv;      // with its header line
  std::vector<std::string> md_rows;  // a row a schedule measured
  std::string summary;
};

// `results[i]`: the kept run of each round measured so far of `cases[i]`.
Report MakeReport(const BackendCycle& cycle, const std::vector<CycleCase>& cases,
                  const std::vector<std::vector<CycleResult>>& results,
                  const SteadyMachine& steady, int rounds) {
  Report report;
  report.csv = {
      "schedule,link_gbps,predicted_step_ms,measured_step_ms,measured_min_ms,measured_max_ms,"
      "error_pct,predicted_overlap_pct,measured_overlap_pct,predicted_exposed_ms,"
      "measured_exposed_ms,binding,trace,picture,run_costs_predicted_ms,run_costs_error_pct,"
      "run_compute_scales,probed_predicted_ms,probed_error_pct,probed_compute_scales,runs,"
      "core_drift_pct,calibration_spread_pct,rounds,run_costs_overlap_pct,run_costs_exposed_ms,"
      "probed_overlap_pct,probed_exposed_ms,run_collective_cpu_gbps,rounds_agree_overlap,"
      "rounds_agree_exposed"};
  // shared_gpu_errors: distzo2 on one GPU, predicted for two (not in the
  // target). |errors| of the schedules' medians.
  std::vector<double> errors, probed_errors, run_costs_errors, shared_gpu_errors;
  // The breakdown's targets: schedules checked, met, and the misses; met
  // by the predictions again (with the cores' speed during the run, with
  // the run's compute costs), over the schedules that have them.
  int breakdowns = 0, overlaps_met = 0, exposed_met = 0;
  std::vector<std::string> breakdown_misses;
  BreakdownTally probed_breakdowns, run_costs_breakdowns;
  // Schedules whose rounds' measurements agree within the targets.
  int rounds_agree_overlap = 0, rounds_agree_exposed = 0;
  int cycles = 0, repeated = 0, unsteady = 0;  // over the schedules' rounds
  for (size_t i = 0; i < cases.size(); ++i) {
    if (results[i].empty()) continue;
    const CycleCase& c = cases[i];
    const CycleResult& first = results[i].front();
    const RoundsMedian m = MedianOverRounds(results[i]);
    const BreakdownCheck breakdown = CheckBreakdown(m.predicted.overlap, m.measured.overlap,
                                                    m.predicted.exposed_ns,
                                                    m.measured.exposed_ns);
    // The host-link rate the schedule ran at: emulated, or the cluster's.
    const double link_gbps = c.host_link_gbps > 0
                                 ? c.host_link_gbps
                                 : first.schedule.cluster().devices(0).host_link().down_gbps();
    const bool shares_the_gpu = cycle.devices_share_one_gpu && c.options.pertp * c.options.dp > 1;
    (shares_the_gpu ? shared_gpu_errors : errors).push_back(std::fabs(m.error));
    if (m.has_probed) probed_errors.push_back(std::fabs(m.probed_error));
    if (m.has_run_costs) run_costs_errors.push_back(std::fabs(m.run_costs_error));
    if (!shares_the_gpu) {
      if (m.has_probed) probed_breakdowns.Add(m.probed, m.measured);
      if (m.has_run_costs) run_costs_breakdowns.Add(m.run_costs, m.measured);
      ++breakdowns;
      overlaps_met += breakdown.overlap_ok;
      exposed_met += breakdown.exposed_ok;
      rounds_agree_overlap += m.rounds_agree.overlap_ok;
      rounds_agree_exposed += m.rounds_agree.exposed_ok;
      if (!breakdown.overlap_ok || !breakdown.exposed_ok) {
        breakdown_misses.push_back(absl::StrFormat(
            "%s (overlap %.0f / %.0f %%, exposed %.2f / %.2f ms)", c.label,
            100 * m.predicted.overlap, 100 * m.measured.overlap, m.predicted.exposed_ns / 1e6,
            m.measured.exposed_ns / 1e6));
      }
    }
    std::vector<std::string> runs;  // each round's
    for (const CycleResult& r : results[i]) {
      ++cycles;
      if (r.attempts > 1) ++repeated;
      if ((steady.max_speed_drift > 0 && LargestSpeedDrift(r) > steady.max_speed_drift) ||
          (steady.max_calibration_spread > 0 &&
           LargestCalibrationSpread(r) > steady.max_calibration_spread)) {
        ++unsteady;
      }
      runs.push_back(AttemptsSummary(r));
    }
    const std::string binding = BindingResourceName(first.predicted.binding);
    report.csv.push_back(absl::StrFormat(
        "%s,%g,%.3f,%.3f,%.3f,%.3f,%.2f,%.1f,%.1f,%.3f,%.3f,%s,%s,%s,%s,%s,%d,%.1f,%.1f,%d,"
        "%s,%s,%s,%d,%d",
        c.label, link_gbps, m.predicted_ms, m.measured_ms, m.measured_min_ms, m.measured_max_ms,
        100 * m.error, 100 * m.predicted.overlap, 100 * m.measured.overlap,
        m.predicted.exposed_ns / 1e6, m.measured.exposed_ns / 1e6, binding, first.trace_path,
        first.picture_path,
        PredictedAgainFields(m.has_run_costs, m.run_costs_ms, m.run_costs_error,
                             ScalesOfRounds(results[i], &CycleResult::run_compute_scales)),
        PredictedAgainFields(m.has_probed, m.probed_ms, m.probed_error,
                             ScalesOfRounds(results[i], &CycleResult::probed_compute_scales)),
        m.runs, 100 * m.largest_drift, 100 * m.largest_spread, m.rounds,
        BreakdownFields(m.has_run_costs, m.run_costs), BreakdownFields(m.has_probed, m.probed),
        ScalesOfRounds(results[i], &CycleResult::run_collective_cpu_gbps),
        m.rounds_agree.overlap_ok, m.rounds_agree.exposed_ok));
    report.md_rows.push_back(absl::StrFormat(
        "| %s | %g | %.2f | %.2f (%.2f-%.2f) | %+.1f%% | %.0f / %.0f%s | %.2f / %.2f%s | %s | %s |",
        c.label, link_gbps, m.predicted_ms, m.measured_ms, m.measured_min_ms, m.measured_max_ms,
        100 * m.error, 100 * m.predicted.overlap, 100 * m.measured.overlap,
        breakdown.overlap_ok ? "" : " *", m.predicted.exposed_ns / 1e6,
        m.measured.exposed_ns / 1e6, breakdown.exposed_ok ? "" : " *", binding,
        first.speed_drifts.empty() ? "-" : absl::StrJoin(runs, "; ")));
  }
  // The targets: median 4 % on the CPU testbed, 5 % on GPUs.
  const std::string medians =
      rounds > 1 ? absl::StrFormat(" (each the median of its %d rounds)", rounds) : "";
  std::string& summary = report.summary;
  summary = errors.empty()
                ? "summary: no schedule of one device ran (see above)"
                : absl::StrFormat("summary: %d schedules%s, %s (target: <= %d%% and <= 10%%)",
                                  errors.size(), medians, ErrorSpread(errors),
                                  cycle.target_error_pct);
  if (!shared_gpu_errors.empty()) {
    absl::StrAppendFormat(&summary,
                          "\ndistzo2 as processes sharing one GPU, predicted for %s (two GPUs; "
                          "not in the target): %d schedules, %s",
                          absl::GetFlag(FLAGS_shared_gpu_cluster), shared_gpu_errors.size(),
                          ErrorSpread(shared_gpu_errors));
  }
  if (breakdowns > 0) {
    absl::StrAppendFormat(
        &summary,
        "\nbreakdown (overlap over all devices, exposed per device; measured: medians over the "
        "steps): overlap within 5 points in "
        "%d of %d schedules, exposed communication within 10%% or 0.1 ms in %d of %d%s%s",
        overlaps_met, breakdowns, exposed_met, breakdowns,
        breakdown_misses.empty() ? "" : "; missed by ", absl::StrJoin(breakdown_misses, ", "));
  }
  if (breakdowns > 0 && rounds > 1) {
    absl::StrAppendFormat(
        &summary,
        "\nthe rounds against each other (each round's measured breakdown taken as a prediction "
        "of the rounds' median, by the same targets: how finely this machine repeats what the "
        "predictions are checked against): overlap within target in %d of %d, exposed "
        "communication in %d of %d",
        rounds_agree_overlap, breakdowns, rounds_agree_exposed, breakdowns);
  }
  if (!probed_errors.empty()) {
    absl::StrAppend(&summary,
                    "\nsummary with the cores' speed during the run (the calibrated op costs, "
                    "scaled by the speed probe timed between steps against calibration): ",
                    ErrorSpread(probed_errors), probed_breakdowns.Summary());
  }
  if (!run_costs_errors.empty()) {
    absl::StrAppend(&summary,
                    "\nsummary with each run's own compute costs (the machine's drift since "
                    "calibration taken out): ",
                    ErrorSpread(run_costs_errors), run_costs_breakdowns.Summary());
  }
  if (repeated > 0 || unsteady > 0) {
    absl::StrAppendFormat(
        &summary,
        "\n%s ran again, calibrated again, because a core ran more than %.0f%% off its "
        "calibrated speed (speed probe) or its calibration's compute times varied more than "
        "%.0f%% (compute_spread); %d still did after %d runs, and their run that missed least "
        "counts above",
        rounds > 1 ? absl::StrFormat("%d of %d rounds of schedules", repeated, cycles)
                   : absl::StrFormat("%d schedules", repeated),
        100 * steady.max_speed_drift, 100 * steady.max_calibration_spread, unsteady,
        steady.max_attempts);
  }
  return report;
}

absl::Status Run() {
  const BackendCycle& cycle = *FindBackendCycle(absl::GetFlag(FLAGS_backend));
  const std::string out = OutputDir(absl::GetFlag(FLAGS_out_dir), cycle.out_subdir);
  RETURN_IF_ERROR(MakeDirectories(out));
  const std::string bin = absl::GetFlag(FLAGS_programs_dir);
  const std::vector<std::string> machines = absl::GetFlag(FLAGS_hosts);
  if (!machines.empty() && cycle.name != "cpu") {
    return absl::InvalidArgumentError("--hosts applies to --backend=cpu only");
  }
  const std::string cluster_name = !absl::GetFlag(FLAGS_cluster).empty()
                                       ? absl::GetFlag(FLAGS_cluster)
                                   : machines.empty() ? cycle.default_cluster
                                                      : "two_node_cpu";
  // The CPU testbed is a VM whose speed drifts: a busy spell of its host
  // slowed every calibrated op by 35 % for seconds at a time, so one
  // calibration at the start mispredicted the schedules run after the
  // spell by as much. Without --calibrated the testbed calibrates (3 s)
  // just before each schedule, into the schedule's directory; GPUs once.
  const bool calibrate_each =
      cycle.calibrate_each_schedule && absl::GetFlag(FLAGS_calibrated).empty();
  std::string calibrated = absl::GetFlag(FLAGS_calibrated);
  // GPUs: schedules of several devices are lowered for a cluster that has
  // them, and run as processes sharing the one GPU.
  Cluster shared_gpu;
  if (cycle.devices_share_one_gpu) {
    ASSIGN_OR_RETURN(shared_gpu,
                     LoadCluster(ClusterArgument(absl::GetFlag(FLAGS_shared_gpu_cluster))));
  }
  ASSIGN_OR_RETURN(std::vector<CycleCase> cases, SelectedCases(cycle));
  if (!machines.empty()) {
    ASSIGN_OR_RETURN(const Cluster uncalibrated, LoadCluster(ClusterArgument(cluster_name)));
    ASSIGN_OR_RETURN(const std::string train_hosts, TrainHosts(uncalibrated, machines));
    for (CycleCase& c : cases) c.hosts = train_hosts;
  }
  auto lowering_cluster = [&](const CycleCase& c, const Cluster& one_gpu) -> const Cluster& {
    return cycle.devices_share_one_gpu && c.options.pertp * c.options.dp > 1 ? shared_gpu
                                                                              : one_gpu;
  };
  Cluster cluster;
  if (!calibrated.empty()) {
    calibrated = ClusterArgument(calibrated);
    ASSIGN_OR_RETURN(cluster, LoadCluster(calibrated));
  } else if (!calibrate_each) {
    // GPUs: the schedules are lowered first, so that the calibration times
    // exactly their compute shapes (models, dtypes, micro-batches,
    // sequences); those that do not fit are left to the loop to report.
    std::vector<std::string> schedules;
    ASSIGN_OR_RETURN(const Cluster uncalibrated, LoadCluster(ClusterArgument(cluster_name)));
    for (const CycleCase& c : cases) {
      absl::StatusOr<CyclePrediction> lowered =
          PredictCycle(c, lowering_cluster(c, uncalibrated), out + "/calibration_schedules");
      if (absl::IsResourceExhausted(lowered.status())) continue;
      RETURN_IF_ERROR(lowered.status());
      schedules.push_back(lowered->schedule_path);
    }
    std::printf("calibrating this machine for %zu schedules (log: %s/calibrate.log) ...\n",
                schedules.size(), out.c_str());
    ASSIGN_OR_RETURN(calibrated, CalibrateInto(out, cluster_name, cycle, schedules,
                                               /*model=*/"", TrainingSettings()));
    ASSIGN_OR_RETURN(cluster, LoadCluster(calibrated));
  } else {
    std::printf("calibrating this machine before each schedule (logs: %s/<schedule>/"
                "calibrate.log)\n", out.c_str());
  }

  std::vector<std::string> md;
  if (cycle.devices_share_one_gpu) {
    md = {"# Predicted vs measured on NVIDIA GPUs (train --backend=cuda)",
          "",
          absl::StrFormat(
              "Each schedule's strategy, model, dtype (host = wire = compute), block slots, "
              "batch, micro-batch and sequence are in its name; random init, synthetic task. "
              "%d steps per run, the first %d left out; cluster %s (one GPU). distzo2 P2xD1 is "
              "lowered for %s and runs as 2 processes sharing the GPU: its prediction assumes "
              "two GPUs. Overlap: over all devices (their overlap over their communication); "
              "exposed communication: per device; measured: the medians over the steps.",
              absl::GetFlag(FLAGS_steps), absl::GetFlag(FLAGS_warmup), calibrated,
              absl::GetFlag(FLAGS_shared_gpu_cluster))};
  } else {
    md = {"# Predicted vs measured on the CPU testbed",
          "",
          absl::StrFormat("Model %s, batch %d, seq %d; %d steps per run, the first %d left out; "
                          "cluster %s. Overlap: over all devices (their overlap over their "
                          "communication); exposed communication: per device; measured: the "
                          "medians over the steps; marked * where they miss their targets "
                          "(overlap within 5 points; exposed within 10 %% or 0.1 ms).",
                          absl::GetFlag(FLAGS_model), absl::GetFlag(FLAGS_batch),
                          absl::GetFlag(FLAGS_seq), absl::GetFlag(FLAGS_steps),
                          absl::GetFlag(FLAGS_warmup),
                          calibrate_each ? "calibrated just before each schedule (<schedule>/" +
                                               ClusterStem(cluster_name) + ".calibrated.pbtxt)"
                                         : calibrated)};
  }
  const int rounds = absl::GetFlag(FLAGS_rounds);
  if (rounds > 1) {
    md.push_back("");
    md.push_back(absl::StrFormat(
        "Every figure is the median over %d rounds (for an even count the upper middle one); "
        "each round %s, predicts and runs every schedule anew, the rounds in turn over the "
        "whole set; the last column lists each round's runs, and the traces and pictures are "
        "the first round's.",
        rounds, calibrate_each ? "calibrates" : "takes the one calibration"));
  }
  md.push_back("");
  md.push_back(
      "| schedule | link GB/s | predicted ms | measured ms (min-max) | error | overlap % pred/meas "
      "| exposed ms pred/meas | bound by | core drift / calibration spread per run |");
  md.push_back("|---|---|---|---|---|---|---|---|---|");
  const SteadyMachine steady{absl::GetFlag(FLAGS_max_speed_drift), absl::GetFlag(FLAGS_attempts),
                             absl::GetFlag(FLAGS_max_calibration_spread)};
  // Each schedule's kept run of each round so far (none: it does not fit).
  std::vector<std::vector<CycleResult>> results(cases.size());
  std::vector<std::string> skipped;
  auto write_tables = [&](const std::string& tail) -> absl::Status {
    const Report report = MakeReport(cycle, cases, results, steady, rounds);
    std::vector<std::string> lines = md;
    lines.insert(lines.end(), report.md_rows.begin(), report.md_rows.end());
    if (!skipped.empty()) {
      lines.push_back("");
      lines.insert(lines.end(), skipped.begin(), skipped.end());
    }
    lines.push_back("");
    lines.push_back(tail.empty() ? report.summary : tail);
    RETURN_IF_ERROR(WriteFile(out + "/predict_vs_measure.csv",
                              absl::StrJoin(report.csv, "\n") + "\n"));
    RETURN_IF_ERROR(
        WriteFile(out + "/predict_vs_measure.md", absl::StrJoin(lines, "\n") + "\n"));
    if (tail.empty()) std::printf("%s\n", report.summary.c_str());
    return absl::OkStatus();
  };
  int measured = 0;  // schedule rounds measured
  for (int round = 1; round <= rounds; ++round) {
    for (size_t i = 0; i < cases.size(); ++i) {
      const CycleCase& c = cases[i];
      if (round > 1 && results[i].empty()) continue;  // it does not fit
      const std::string label = RoundLabel(c.label, round);
      std::printf("%-*s ", cycle.label_width, label.c_str());
      std::fflush(stdout);
      // One attempt: calibrate (the testbed, each time), predict, run. A
      // schedule that does not fit comes back as ResourceExhausted.
      auto attempt = [&](int n) -> absl::StatusOr<CycleResult> {
        CycleCase run = c;  // each run in files of its own
        run.label = AttemptLabel(label, n);
        if (calibrate_each) {
          const std::string dir = out + "/" + run.label;
          RETURN_IF_ERROR(MakeDirectories(dir));
          ASSIGN_OR_RETURN(const std::string path,
                           CalibrateInto(dir, cluster_name, cycle, /*schedules=*/{}, c.model,
                                         c.options.training));
          ASSIGN_OR_RETURN(cluster, LoadCluster(path));
        }
        ASSIGN_OR_RETURN(const CyclePrediction prediction,
                         PredictCycle(run, lowering_cluster(c, cluster), out));
        if (cycle.devices_share_one_gpu) {
          const std::string shortfall = SharedGpuShortfall(prediction.schedule, cluster);
          if (!shortfall.empty()) return absl::ResourceExhaustedError(shortfall);
        }
        return MeasureCycle(run, prediction, absl::GetFlag(FLAGS_steps),
                            absl::GetFlag(FLAGS_warmup), TrainProgram(bin));
      };
      absl::StatusOr<CycleResult> result = MeasureOnSteadyMachine(steady, attempt);
      if (absl::IsResourceExhausted(result.status())) {
        std::printf("skipped, does not fit: %s\n",
                    std::string(result.status().message()).c_str());
        skipped.push_back(absl::StrFormat("- %s: skipped, does not fit: %s", c.label,
                                          result.status().message()));
        continue;
      }
      if (!result.ok()) {
        std::printf("failed\n");
        return result.status();
      }
      PrintRun(*result);
      results[i].push_back(*std::move(result));
      ++measured;
      // The tables so far, so that a run cut short (a time limit) keeps them.
      RETURN_IF_ERROR(write_tables(absl::StrCat("(in progress: ", measured,
                                                " schedule rounds so far)")));
    }
  }
  if (measured == 0) {
    return absl::FailedPreconditionError("no schedule ran: every one was skipped (see above)");
  }
  RETURN_IF_ERROR(write_tables(""));
  std::printf("wrote %s/predict_vs_measure.{md,csv} and per schedule <name>/{trace.json, "
              "timelines.png}\n",
              out.c_str());
  return absl::OkStatus();
}

absl::Status CheckFlags() {
  const std::string backend = absl::GetFlag(FLAGS_backend);
  if (FindBackendCycle(backend) == nullptr) {
    std::vector<std::string> names;
    for (const BackendCycle& cycle : BackendCycles()) names.push_back(cycle.name);
    return absl::InvalidArgumentError("--backend='" + backend + "': expected " +
                                      absl::StrJoin(names, " or "));
  }
  RETURN_IF_ERROR(CheckFlagRange("batch", absl::GetFlag(FLAGS_batch), 1, kMaxBatchSize,
                                 "examples per step"));
  RETURN_IF_ERROR(CheckFlagRange("seq", absl::GetFlag(FLAGS_seq), 1, kMaxPositions, "tokens"));
  RETURN_IF_ERROR(CheckFlagRange("warmup", absl::GetFlag(FLAGS_warmup), 0, 1000,
                                 "steps left out of the comparison"));
  RETURN_IF_ERROR(CheckFlagRange("attempts", absl::GetFlag(FLAGS_attempts), 1, 100,
                                 "runs of a schedule at most"));
  RETURN_IF_ERROR(CheckFlagRange("rounds", absl::GetFlag(FLAGS_rounds), 1, 100,
                                 "measurements of the whole set"));
  RETURN_IF_ERROR(CheckFlagFinite("max_speed_drift", absl::GetFlag(FLAGS_max_speed_drift),
                                  /*positive=*/false, "a fraction of the calibrated speed"));
  RETURN_IF_ERROR(CheckFlagFinite("max_calibration_spread",
                                  absl::GetFlag(FLAGS_max_calibration_spread),
                                  /*positive=*/false, "a fraction of the compute times"));
  return CheckFlagRange("steps", absl::GetFlag(FLAGS_steps), absl::GetFlag(FLAGS_warmup) + 1,
                        1000000, "steps per run, more than --warmup");
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"predict_vs_measure", "",
       "Predicted against measured step times: lowers a set of schedules, predicts each on the\n"
       "calibrated cluster, runs it for real (CPU testbed on MPI ranks, or --backend=cuda) and\n"
       "compares the timelines; writes predict_vs_measure.md and .csv and a trace per schedule."});
  absl::Status status = zosched::CheckFlags();
  // Refusals (train's or calibrate's, e.g. --backend=cuda without a CUDA
  // build or a GPU) come back as InvalidArgument: exit 2, like theirs.
  if (status.ok()) status = zosched::Run();
  return zosched::ExitWith("predict_vs_measure", status);
}
