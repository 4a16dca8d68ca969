// Simulator speed: simulated ops per second and whole schedules per second.
//
//   bazel run //sim:sim_benchmark [-- --repeats=200 --compute_profile=zosched_cuda]
//
// For each case: lower once, then simulate as a sweep's thread does, with
// one Simulator and one SimResult reused: `--warmup` times untimed, then time
// `--repeats` simulations one by one and report the median (and min, max)
// time per schedule, schedules per second (1 / median) and simulated ops per
// second (ops / median). Single-threaded: one core.
// Target (for sweeps): OPT-175B DistZO2 on 8 GPUs of a DGX A100
// (P=2, D=4, sliced) at 2,000 schedules per second (0.5 ms), with timelines
// bit-identical to the reference engine's (sim/simulator_golden_test).
// Its figures, dated, with what the time goes to: docs/results.md, 'The
// simulator's speed'.
// Command line and exit status as every tool's (base/command_line.h): 0
// when every case ran; 2 for bad flags; 1 when a case fails to lower or
// simulate.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "base/command_line.h"
#include "base/flag_checks.h"
#include "base/status_macros.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/compute_profile_flag.h"
#include "schedule/lowering.h"
#include "schedule/strategy_grid.h"
#include "sim/simulator.h"

ABSL_FLAG(int, warmup, 5, "untimed simulations per case");
ABSL_FLAG(int, repeats, 100, "timed simulations per case");
ABSL_FLAG(std::string, compute_profile, "roofline",
          "how GPU compute is costed: roofline, zosched_cuda, pytorch_mezo or pytorch_zo2 (the "
          "benchmark's schedules are ZO)");

namespace zosched {
namespace {

struct Case {
  const char* label;
  const char* model;
  const char* cluster;
  StrategyKind strategy;
  int pertp, dp;
  bool slicing;
};

absl::Status Run(ComputeProfile profile) {
  const Case cases[] = {
      {"OPT-175B distzo2 P2xD4 sliced, DGX A100 (target 0.5 ms)", "opt-175b", "dgx_a100", DISTZO2,
       2, 4, true},
      {"OPT-175B zo2, 1 GPU of DGX A100", "opt-175b", "dgx_a100", ZO2, 1, 1, true},
      {"OPT-13B distzo2 P2xD4 naive, HGX H100", "opt-13b", "hgx_h100", DISTZO2, 2, 4, false},
      {"OPT-1.3B distzo2 P1xD8 sliced, RTX 4090 x8", "opt-1.3b", "rtx4090_x8", DISTZO2, 1, 8, true},
  };
  std::printf("%-58s %8s %10s %10s %10s %12s %14s\n", "case", "ops", "median_ms", "min_ms",
              "max_ms", "schedules/s", "sim_ops/s");
  for (const Case& c : cases) {
    ASSIGN_OR_RETURN(const ModelSpec model, LoadModelSpec(c.model));
    ASSIGN_OR_RETURN(const Cluster cluster, LoadCluster(c.cluster));
    LowerOptions options = GridLowerOptions({c.strategy, c.pertp, c.dp, c.slicing});
    options.training.set_seq_len(2048);  // MeZO's longest prompts
    ASSIGN_OR_RETURN(Schedule schedule, LowerSchedule(model, cluster, options));
    schedule.set_compute_profile(profile);
    // As a sweep's thread simulates: one Simulator, one result reused.
    Simulator simulator;
    SimResult result;
    for (int i = 0; i < absl::GetFlag(FLAGS_warmup); ++i) {
      RETURN_IF_ERROR(simulator.Simulate(schedule, &result));
    }
    std::vector<double> seconds;
    for (int i = 0; i < absl::GetFlag(FLAGS_repeats); ++i) {
      const auto start = std::chrono::steady_clock::now();
      const absl::Status status = simulator.Simulate(schedule, &result);
      const auto end = std::chrono::steady_clock::now();
      RETURN_IF_ERROR(status);
      seconds.push_back(std::chrono::duration<double>(end - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    std::printf("%-58s %8d %10.3f %10.3f %10.3f %12.0f %14.0f\n", c.label,
                schedule.ops_size(), median * 1e3, seconds.front() * 1e3,
                seconds.back() * 1e3, 1 / median, schedule.ops_size() / median);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"sim_benchmark", "",
       "Times the simulator on one core: simulated ops and whole schedules per second for\n"
       "four large built-in cases (median, min and max of --repeats after --warmup)."});
  for (const absl::Status& s :
       {zosched::CheckFlagRange("warmup", absl::GetFlag(FLAGS_warmup), 0, 100000,
                                "untimed simulations"),
        zosched::CheckFlagRange("repeats", absl::GetFlag(FLAGS_repeats), 1, 1000000,
                                "timed simulations")}) {
    if (!s.ok()) return zosched::ReportError("sim_benchmark", s);
  }
  const absl::StatusOr<zosched::ComputeProfile> profile = zosched::ParseComputeProfileFlag(absl::GetFlag(FLAGS_compute_profile));
  if (!profile.ok()) return zosched::ReportError("sim_benchmark", profile.status());
  const absl::Status status = zosched::Run(*profile);
  if (status.ok()) return 0;
  zosched::ReportError("sim_benchmark", status);
  return 1;  // the cases are built in: whatever the error, the run failed
}
