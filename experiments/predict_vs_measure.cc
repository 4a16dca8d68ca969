// Predicted versus measured on the CPU testbed: for zo2 and distzo2 P2xD1,
// P1xD2, P2xD2 (sliced and naive), each at three emulated host-link rates
// (compute-bound, balanced, transfer-bound), the cycle lower -> simulate on
// the calibrated cluster -> execute on real MPI ranks -> compare.
//
//   bazel run //experiments:predict_vs_measure [-- --steps=12 --warmup=2
//       --calibrated=clusters/local_cpu.calibrated.pbtxt --out_dir=...]
//
// Without --calibrated it first runs //runtime:calibrate into the output
// directory. Writes predict_vs_measure.md and .csv (schedule, predicted and
// measured step time with its spread, error %, overlap and exposed
// communication both ways, binding resource), and per schedule a Chrome
// trace with both timelines and a picture of them one above the other; ends
// with the summary line: median |error| and max |error|.
// --quick: 2 schedules only (zo2 and distzo2 P2xD2 sliced, balanced links).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/flag_checks.h"
#include "base/output_dir.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/subprocess.h"
#include "base/user_path.h"
#include "experiments/testbed_cycle.h"
#include "models/model_spec.h"
#include "schedule/cluster_catalog.h"
#include "schedule/training_settings.h"

ABSL_FLAG(std::string, out_dir, "", "outputs (default: out/predict_vs_measure)");
ABSL_FLAG(std::string, calibrated, "", "a calibrated cluster (default: calibrate now)");
ABSL_FLAG(std::string, model, "opt-tiny", "the model to train");
ABSL_FLAG(int32_t, batch, 16, "examples per step");
ABSL_FLAG(int32_t, seq, 32, "sequence length");
ABSL_FLAG(int32_t, steps, 30, "steps per run");
ABSL_FLAG(int32_t, warmup, 2, "steps left out of the comparison");
ABSL_FLAG(bool, quick, false,
          "2 schedules only (for tests): zo2 compute-bound, distzo2 P2xD2 sliced balanced");
ABSL_FLAG(std::string, runtime_dir, "runtime", "where the train and calibrate binaries are");

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

std::vector<CycleCase> Cases() {
  struct Grid {
    std::string name;
    StrategyKind strategy;
    int pertp, dp;
    bool slicing;
  };
  std::vector<Grid> grids = {{"zo2", ZO2, 1, 1, true},
                             {"distzo2_P2xD1_sliced", DISTZO2, 2, 1, true},
                             {"distzo2_P2xD1_naive", DISTZO2, 2, 1, false},
                             {"distzo2_P1xD2_sliced", DISTZO2, 1, 2, true},
                             {"distzo2_P1xD2_naive", DISTZO2, 1, 2, false},
                             {"distzo2_P2xD2_sliced", DISTZO2, 2, 2, true},
                             {"distzo2_P2xD2_naive", DISTZO2, 2, 2, false}};
  std::vector<CycleCase> cases;
  for (const auto& [regime, gbps] : LinkRegimes()) {
    for (const Grid& g : grids) {
      const bool quick = absl::GetFlag(FLAGS_quick);
      const bool in_quick = (g.name == "zo2" && regime == "compute-bound") ||
                            (g.name == "distzo2_P2xD2_sliced" && regime == "balanced");
      if (quick && !in_quick) continue;
      CycleCase c;
      c.label = g.name + "_" + regime;
      c.model = absl::GetFlag(FLAGS_model);
      c.host_link_gbps = gbps;
      c.options.strategy = g.strategy;
      c.options.pertp = g.pertp;
      c.options.dp = g.dp;
      c.options.slicing = g.slicing;
      c.options.training = DefaultTrainingSettings();
      c.options.training.set_batch_size(absl::GetFlag(FLAGS_batch));
      c.options.training.set_seq_len(absl::GetFlag(FLAGS_seq));
      c.options.training.set_learning_rate(5e-4);
      c.options.training.set_compute_dtype(FP32);
      c.options.training.set_host_dtype(FP32);
      cases.push_back(c);
    }
  }
  return cases;
}

absl::Status Run() {
  const std::string out = OutputDir(absl::GetFlag(FLAGS_out_dir), "predict_vs_measure");
  RETURN_IF_ERROR(MakeDirectories(out));
  const std::string bin = absl::GetFlag(FLAGS_runtime_dir);
  std::string calibrated = absl::GetFlag(FLAGS_calibrated);
  if (calibrated.empty()) {
    calibrated = out + "/local_cpu.calibrated.pbtxt";
    std::printf("calibrating this machine (log: %s/calibrate.log) ...\n", out.c_str());
    ASSIGN_OR_RETURN(
        const int code,
        RunSubprocess({{bin + "/calibrate", "--out=" + calibrated,
                        "--model=" + absl::GetFlag(FLAGS_model),
                        absl::StrFormat("--batch=%d", absl::GetFlag(FLAGS_batch)),
                        absl::StrFormat("--seq=%d", absl::GetFlag(FLAGS_seq))},
                       out + "/calibrate.log"}));
    if (code != 0) return absl::InternalError("calibration failed; see " + out + "/calibrate.log");
  } else {
    calibrated = ResolveUserPath(calibrated);
  }
  ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(calibrated));

  std::vector<std::string> csv = {
      "schedule,link_gbps,predicted_step_ms,measured_step_ms,measured_min_ms,measured_max_ms,"
      "error_pct,predicted_overlap_pct,measured_overlap_pct,predicted_exposed_ms,"
      "measured_exposed_ms,binding,trace,picture"};
  std::vector<std::string> md = {
      "# Predicted vs measured on the CPU testbed",
      "",
      absl::StrFormat("Model %s, batch %d, seq %d; %d steps per run, the first %d left out; "
                      "cluster %s. Overlap and exposed communication: device 0.",
                      absl::GetFlag(FLAGS_model), absl::GetFlag(FLAGS_batch),
                      absl::GetFlag(FLAGS_seq), absl::GetFlag(FLAGS_steps),
                      absl::GetFlag(FLAGS_warmup), calibrated),
      "",
      "| schedule | link GB/s | predicted ms | measured ms (min-max) | error | overlap % pred/meas "
      "| exposed ms pred/meas | bound by |",
      "|---|---|---|---|---|---|---|---|"};
  std::vector<double> errors;
  for (const CycleCase& c : Cases()) {
    std::printf("%-36s ", c.label.c_str());
    std::fflush(stdout);
    ASSIGN_OR_RETURN(CycleResult r, RunCycle(c, cluster, absl::GetFlag(FLAGS_steps),
                                             absl::GetFlag(FLAGS_warmup), bin + "/train", out));
    const TimelineComparison& cmp = r.comparison;
    const DeviceMetrics& p = r.predicted.devices[0];
    const DeviceMetrics& m = r.measured.devices[0];
    errors.push_back(std::fabs(cmp.step_error));
    std::printf("predicted %8.2f ms  measured %8.2f ms  error %+6.1f%%\n",
                cmp.predicted_step_ns / 1e6, cmp.measured_step_ns / 1e6, 100 * cmp.step_error);
    csv.push_back(absl::StrFormat(
        "%s,%g,%.3f,%.3f,%.3f,%.3f,%.2f,%.1f,%.1f,%.3f,%.3f,%s,%s,%s", c.label, c.host_link_gbps,
        cmp.predicted_step_ns / 1e6, cmp.measured_step_ns / 1e6,
        cmp.measured_min_step_ns / 1e6, cmp.measured_max_step_ns / 1e6, 100 * cmp.step_error,
        100 * p.overlap, 100 * m.overlap, p.exposed_comm_ns / 1e6, m.exposed_comm_ns / 1e6,
        BindingResourceName(r.predicted.binding), r.trace_path, r.picture_path));
    md.push_back(absl::StrFormat(
        "| %s | %g | %.2f | %.2f (%.2f-%.2f) | %+.1f%% | %.0f / %.0f | %.2f / %.2f | %s |", c.label,
        c.host_link_gbps, cmp.predicted_step_ns / 1e6, cmp.measured_step_ns / 1e6,
        cmp.measured_min_step_ns / 1e6, cmp.measured_max_step_ns / 1e6, 100 * cmp.step_error,
        100 * p.overlap, 100 * m.overlap, p.exposed_comm_ns / 1e6, m.exposed_comm_ns / 1e6,
        BindingResourceName(r.predicted.binding)));
  }
  std::vector<double> sorted = errors;
  std::sort(sorted.begin(), sorted.end());
  const std::string summary = absl::StrFormat(
      "summary: %d schedules, median |error| %.1f%%, max |error| %.1f%% (target: <= 5%% and <= 10%%)",
      errors.size(), 100 * sorted[(sorted.size() - 1) / 2], 100 * sorted.back());
  md.push_back("");
  md.push_back(summary);
  RETURN_IF_ERROR(WriteFile(out + "/predict_vs_measure.csv", absl::StrJoin(csv, "\n") + "\n"));
  RETURN_IF_ERROR(WriteFile(out + "/predict_vs_measure.md", absl::StrJoin(md, "\n") + "\n"));
  std::printf("%s\nwrote %s/predict_vs_measure.{md,csv} and per schedule <name>/{trace.json, "
              "timelines.png}\n",
              summary.c_str(), out.c_str());
  return absl::OkStatus();
}

absl::Status CheckFlags() {
  RETURN_IF_ERROR(CheckFlagRange("batch", absl::GetFlag(FLAGS_batch), 1, kMaxBatchSize,
                                 "examples per step"));
  RETURN_IF_ERROR(CheckFlagRange("seq", absl::GetFlag(FLAGS_seq), 1, kMaxPositions, "tokens"));
  RETURN_IF_ERROR(CheckFlagRange("warmup", absl::GetFlag(FLAGS_warmup), 0, 1000,
                                 "steps left out of the comparison"));
  return CheckFlagRange("steps", absl::GetFlag(FLAGS_steps), absl::GetFlag(FLAGS_warmup) + 1,
                        1000000, "steps per run, more than --warmup");
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (const absl::Status flags = zosched::CheckFlags(); !flags.ok()) {
    std::fprintf(stderr, "predict_vs_measure: %s\n", std::string(flags.message()).c_str());
    return 2;
  }
  const absl::Status status = zosched::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "predict_vs_measure: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
