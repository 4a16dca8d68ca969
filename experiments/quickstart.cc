// The quickstart: zosched's whole loop on this machine in a few minutes.
//
//   ./bazelw run //experiments:quickstart
//
// 1.-2. For ZO2 on one device and DistZO2 P2xD1 and P2xD2 (sliced) with a
//    small OPT-shaped model (opt-tiny): calibrates this machine as the CPU
//    testbed (//runtime:calibrate, ~4 s), lowers the schedule, predicts it on
//    the calibrated local cluster, trains it for real on MPI ranks, and
//    compares predicted with measured step times, op by op. A run whose
//    speed probe found a core more than 5 % off its calibrated speed (the
//    VM's cores drift) is calibrated and run again, 3 runs at most
//    (experiments/steady_machine.h), and the steady run is shown, or else the
//    least drifted; the table says how far each run's cores drifted.
// 3. Predicts the same strategies for OPT-1.3B on a DGX A100 from the
//    catalog's datasheet figures.
// Prints the comparison, the GPU predictions, the loss going down, and where
// the traces, pictures and CSV files are (out/quickstart in the workspace).
// Command line and exit status as every tool's (base/command_line.h): 0 on
// success; 2 for bad flags, an output directory that cannot be made, or
// when calibrate or train refuses to run (its message is printed); 1 when a
// run fails.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/command_line.h"
#include "base/flag_checks.h"
#include "base/output_dir.h"
#include "base/status_macros.h"
#include "experiments/steady_machine.h"
#include "experiments/testbed_cycle.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/strategy_grid.h"
#include "schedule/timeline_metrics.h"
#include "sim/simulator.h"

ABSL_FLAG(std::string, out_dir, "", "outputs (default: out/quickstart in the workspace)");
ABSL_FLAG(int32_t, steps, 2000, "training steps per local run");
ABSL_FLAG(std::string, programs_dir, ".",
          "where the programs are: train/train and runtime/calibrate below it, as Bazel lays them out");

namespace zosched {
namespace {

// zo2, and distzo2 P2xD1 and P2xD2 sliced.
std::vector<StrategyGrid> Strategies() {
  return {{ZO2, 1, 1, true}, {DISTZO2, 2, 1, true}, {DISTZO2, 2, 2, true}};
}

LowerOptions Options(const StrategyGrid& s, int batch, int seq) {
  LowerOptions o = GridLowerOptions(s);
  o.training.set_batch_size(batch);
  o.training.set_seq_len(seq);
  o.training.set_learning_rate(5e-4);
  return o;
}

absl::Status Run() {
  const std::string out = OutputDir(absl::GetFlag(FLAGS_out_dir), "quickstart");
  RETURN_IF_ERROR(MakeDirectories(out));
  const std::string bin = absl::GetFlag(FLAGS_programs_dir);
  const SteadyMachine steady{/*max_speed_drift=*/0.05, /*max_attempts=*/3,
                             /*max_calibration_spread=*/0.10};

  std::printf("1. this machine as the CPU testbed: calibrated (//runtime:calibrate) before each "
              "strategy's run, into <out>/<strategy>/local_cpu.calibrated.pbtxt\n");
  std::printf("2. opt-tiny from random init on the CPU testbed (batch 32, seq 32, host links "
              "emulated at 0.1 GB/s), %d ZO steps each: calibrate, predict, train, compare\n",
              absl::GetFlag(FLAGS_steps));
  std::printf("   %-16s %5s %13s %13s %8s %13s %8s %11s %11s  %s\n", "strategy", "ranks",
              "predicted_ms", "measured_ms", "error", "at_run_speed", "error", "loss_first",
              "loss_last", "core_drift");
  std::vector<std::string> shown;  // each strategy's run in the table: its directory
  for (const StrategyGrid& s : Strategies()) {
    CycleCase c;
    c.label = GridName(s);
    c.model = "opt-tiny";
    c.options = Options(s, 32, 32);
    c.options.training.set_compute_dtype(FP32);
    c.options.training.set_host_dtype(FP32);
    c.host_link_gbps = 0.1;
    auto attempt = [&](int n) -> absl::StatusOr<CycleResult> {
      CycleCase run = c;  // each run in files of its own
      run.label = AttemptLabel(c.label, n);
      const std::string dir = out + "/" + run.label;
      RETURN_IF_ERROR(MakeDirectories(dir));
      const std::string calibrated = dir + "/local_cpu.calibrated.pbtxt";
      RETURN_IF_ERROR(RunRuntimeProgram("calibration",
                                        {CalibrateProgram(bin), "--out=" + calibrated, "--batch=32"},
                                        dir + "/calibrate.log"));
      ASSIGN_OR_RETURN(const Cluster local, LoadCluster(calibrated));
      return RunCycle(run, local, absl::GetFlag(FLAGS_steps), 2, TrainProgram(bin), out,
                      /*loss_window=*/200);
    };
    ASSIGN_OR_RETURN(const CycleResult r, MeasureOnSteadyMachine(steady, attempt));
    // "-" when the run has no speed probe figures to predict from.
    std::string at_run_speed = absl::StrFormat("%13s %8s", "-", "-");
    if (r.probed_predicted_step_ns > 0) {
      at_run_speed = absl::StrFormat(
          "%13.2f %+7.1f%%", r.probed_predicted_step_ns / 1e6,
          100 * (static_cast<double>(r.probed_predicted_step_ns) / r.comparison.measured_step_ns -
                 1));
    }
    const std::string drifts = AttemptsSummary(r);
    std::printf("   %-16s %5d %13.2f %13.2f %+7.1f%% %s %11.4f %11.4f  %s\n", GridName(s).c_str(),
                r.schedule.devices_size(), r.comparison.predicted_step_ns / 1e6,
                r.comparison.measured_step_ns / 1e6, 100 * r.comparison.step_error,
                at_run_speed.c_str(), r.first_loss, r.last_loss, drifts.c_str());
    shown.push_back(r.picture_path.substr(0, r.picture_path.find_last_of('/')));
  }
  std::printf("   (at_run_speed: the prediction again with each core as fast as the speed probe "
              "found it during the run; a virtual machine's cores slow down and speed up for "
              "seconds at a time.\n    core_drift: per run, the furthest a core ran from its "
              "calibrated speed / how much its calibration's compute times varied; over 5 %% / "
              "10 %% it was\n    calibrated and run again (into <strategy>/attempt<N>), and "
              "the steady run is shown, or else the one that missed least.\n"
              "    loss: mean training loss of the first and of the last "
              "200 steps; the three strategies train the same trajectory bit for bit)\n\n");

  std::printf("3. the same strategies for OPT-1.3B on a DGX A100 (catalog figures; batch 16, "
              "seq 256), predicted\n");
  ASSIGN_OR_RETURN(Cluster dgx, LoadCluster("dgx_a100"));
  ASSIGN_OR_RETURN(ModelSpec opt13, LoadModelSpec("opt-1.3b"));
  std::printf("   %-16s %5s %12s %12s %10s %12s\n", "strategy", "GPUs", "step_ms", "tokens/s",
              "overlap%", "bound_by");
  for (const StrategyGrid& s : Strategies()) {
    ASSIGN_OR_RETURN(Schedule schedule, LowerSchedule(opt13, dgx, Options(s, 16, 256)));
    ASSIGN_OR_RETURN(SimResult sim, Simulate(schedule));
    ASSIGN_OR_RETURN(StepMetrics m, ComputeStepMetrics(schedule, sim.timeline, 0));
    std::printf("   %-16s %5d %12.2f %12.0f %10.1f %12s\n", GridName(s).c_str(),
                schedule.devices_size(), m.step_ns / 1e6, m.tokens_per_s,
                100 * m.devices[0].overlap, BindingResourceName(m.binding));
  }
  std::printf("\nfiles in %s (a run made again in <strategy>/attempt<N>; those shown above: "
              "%s):\n",
              out.c_str(), absl::StrJoin(shown, ", ").c_str());
  std::printf("   <strategy>/trace.json     predicted and measured timelines (open in "
              "https://ui.perfetto.dev)\n");
  std::printf("   <strategy>/timelines.png  the two timelines one above the other\n");
  std::printf("   <strategy>/run/train.csv  loss, projected gradient and step time per step\n");
  std::printf("   <strategy>/schedule.pb    the schedule (./bazelw run //schedule:inspect -- "
              "FILE)\n");
  std::printf("   <strategy>/local_cpu.calibrated.pbtxt  this machine, measured before the run\n");
  std::printf("next: ./bazelw run //experiments:predict_vs_measure (33 schedules) and "
              "./bazelw run //experiments:distzo2_study (GPU clusters)\n");
  return absl::OkStatus();
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"quickstart", "",
       "zosched's whole loop on this machine: for ZO2 and DistZO2 P2xD1 and P2xD2 on opt-tiny,\n"
       "calibrate the CPU testbed, lower, predict, train on MPI ranks and compare predicted\n"
       "with measured step times; then predict the same strategies for OPT-1.3B on a DGX A100."});
  absl::Status status = zosched::CheckFlagRange("steps", absl::GetFlag(FLAGS_steps), 3, 1000000,
                                                "training steps per run");
  if (status.ok()) status = zosched::Run();
  return zosched::ExitWith("quickstart", status);
}
