// GPU steps predicted kernel by kernel against steps measured on real GPUs,
// each with the profile of the implementation that ran (schedule.proto's
// ComputeProfile): ZO2's and MeZO's PyTorch code on one H100
// (../shared/reference/peers_h100.md) and zosched's CUDA backend on one
// H200 (docs/results.md, 'On a GPU: the H200 machine').
//
//   ./bazelw run //experiments:gpu_compute_check [-- --out_dir=...]
//
// Per row: lower the strategy for the model on the row's cluster at the
// measured setting, set the row's profile, simulate one step; beside it the
// floor (every compute op at its roofline, the simulator's old model) and
// the measured step. Prints each row, then the median and the largest
// |error| of the kernel-level predictions and of the floor. Writes
// gpu_compute_check.md and .csv to --out_dir (default:
// out/gpu_compute_check). Command line and exit status as every tool's
// (base/command_line.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/command_line.h"
#include "base/median.h"
#include "base/output_dir.h"
#include "base/status_macros.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"
#include "schedule/timeline_metrics.h"
#include "schedule/training_settings.h"
#include "sim/simulator.h"

ABSL_FLAG(std::string, out_dir, "", "outputs (default: out/gpu_compute_check)");

namespace zosched {
namespace {

// One measured step and how to predict it.
struct Row {
  const char* source;   // who measured it, where
  const char* model;    // zoo name
  StrategyKind strategy;
  DType dtype;          // host = wire = compute
  int block_slots;      // ZO2: the ring's slots
  int seq;              // batch 1
  const char* cluster;  // catalog name
  ComputeProfile profile;
  double measured_ms;
};

// ZO2 at 4bca25c (nanoGPT path: GPT-2 blocks at OPT's sizes, vocab 50,304),
// batch 1, sequence 2048, median step after 2 warm-ups, on the H100 machine
// (peers_h100.md); zosched's own rows from tools/gpu_checks.sh on the H200,
// 2026-11-26 (gpu_zo2_benchmark: batch 1, seq 2048, 2 block slots, median
// of 5 steps; predict_vs_measure --quick: seq 512, 3 slots, median of 28).
const Row kRows[] = {
    {"ZO2, H100 (peers_h100.md)", "opt-1.3b", ZO2, FP32, 3, 2048, "h100_sxm_x1", PYTORCH_ZO2, 358},
    {"ZO2, H100 (peers_h100.md)", "opt-1.3b", ZO2, FP16, 3, 2048, "h100_sxm_x1", PYTORCH_ZO2, 103.8},
    {"ZO2, H100 (peers_h100.md)", "opt-2.7b", ZO2, FP32, 3, 2048, "h100_sxm_x1", PYTORCH_ZO2, 754.6},
    {"ZO2, H100 (peers_h100.md)", "opt-6.7b", ZO2, FP16, 3, 2048, "h100_sxm_x1", PYTORCH_ZO2, 356.8},
    {"ZO2, H100 (peers_h100.md)", "opt-13b", ZO2, FP16, 3, 2048, "h100_sxm_x1", PYTORCH_ZO2, 694.2},
    {"ZO2, H100 (peers_h100.md)", "opt-30b", ZO2, FP16, 3, 2048, "h100_sxm_x1", PYTORCH_ZO2, 1460.4},
    {"MeZO in ZO2, H100 (peers_h100.md)", "opt-1.3b", MEZO, FP32, 0, 2048, "h100_sxm_x1", PYTORCH_MEZO, 335},
    {"MeZO in ZO2, H100 (peers_h100.md)", "opt-1.3b", MEZO, FP16, 0, 2048, "h100_sxm_x1", PYTORCH_MEZO, 75.7},
    {"MeZO in ZO2, H100 (peers_h100.md)", "opt-6.7b", MEZO, FP16, 0, 2048, "h100_sxm_x1", PYTORCH_MEZO, 317.3},
    {"MeZO in ZO2, H100 (peers_h100.md)", "opt-13b", MEZO, FP16, 0, 2048, "h100_sxm_x1", PYTORCH_MEZO, 596.8},
    {"zosched, H200 (results.md)", "opt-1.3b", ZO2, FP16, 2, 2048, "h200_x1", ZOSCHED_CUDA, 86.5},
    {"zosched, H200 (results.md)", "opt-6.7b", ZO2, FP16, 2, 2048, "h200_x1", ZOSCHED_CUDA, 285.9},
    {"zosched, H200 (results.md)", "opt-1.3b", ZO2, FP16, 3, 512, "h200_x1", ZOSCHED_CUDA, 50.65},
};

struct Prediction {
  double step_ms = 0;
  double floor_ms = 0;
  std::string bound_by;
};

absl::StatusOr<double> StepMs(const Schedule& schedule, std::string* bound_by) {
  ASSIGN_OR_RETURN(const SimResult result, Simulate(schedule));
  ASSIGN_OR_RETURN(const StepMetrics m, ComputeStepMetrics(schedule, result.timeline, 0));
  if (bound_by != nullptr) *bound_by = BindingResourceName(m.binding);
  return m.step_ns / 1e6;
}

absl::StatusOr<Prediction> Predict(const Row& row) {
  ASSIGN_OR_RETURN(const ModelSpec model, LoadModelSpec(row.model));
  ASSIGN_OR_RETURN(const Cluster cluster, LoadCluster(row.cluster));
  LowerOptions options;
  options.strategy = row.strategy;
  if (row.block_slots > 0) options.block_slots = row.block_slots;
  options.training = DefaultTrainingSettings();
  options.training.set_batch_size(1);
  options.training.set_micro_batch_size(1);
  options.training.set_seq_len(row.seq);
  options.training.set_learning_rate(1e-6);
  options.training.set_host_dtype(row.dtype);
  options.training.set_wire_dtype(row.dtype);
  options.training.set_compute_dtype(row.dtype);
  ASSIGN_OR_RETURN(Schedule schedule, LowerSchedule(model, cluster, options));
  Prediction p;
  ASSIGN_OR_RETURN(p.floor_ms, StepMs(schedule, nullptr));
  schedule.set_compute_profile(row.profile);
  ASSIGN_OR_RETURN(p.step_ms, StepMs(schedule, &p.bound_by));
  return p;
}

std::string Percent(double x) { return absl::StrFormat("%+.1f%%", 100 * x); }

absl::Status Run() {
  const std::string out = OutputDir(absl::GetFlag(FLAGS_out_dir), "gpu_compute_check");
  RETURN_IF_ERROR(MakeDirectories(out));
  std::vector<std::string> md = {
      "| source | model | strategy | dtype | seq | profile | measured ms | predicted ms | "
      "error | floor ms | floor error | bound by |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|"};
  std::vector<std::string> csv = {
      "source,model,strategy,dtype,seq,profile,measured_ms,predicted_ms,error,floor_ms,"
      "floor_error,bound_by"};
  std::vector<double> errors, floor_errors;
  for (const Row& row : kRows) {
    ASSIGN_OR_RETURN(const Prediction p, Predict(row));
    const double error = p.step_ms / row.measured_ms - 1;
    const double floor_error = p.floor_ms / row.measured_ms - 1;
    errors.push_back(std::fabs(error));
    floor_errors.push_back(std::fabs(floor_error));
    const std::string strategy = StrategyKind_Name(row.strategy);
    const std::string profile = ComputeProfile_Name(row.profile);
    std::printf("%-34s %-9s %-5s %-5s seq %4d %-13s measured %7.1f  predicted %7.1f (%s)  "
                "floor %7.1f (%s)  %s\n",
                row.source, row.model, strategy.c_str(), DType_Name(row.dtype).c_str(), row.seq,
                profile.c_str(), row.measured_ms, p.step_ms, Percent(error).c_str(), p.floor_ms,
                Percent(floor_error).c_str(), p.bound_by.c_str());
    md.push_back(absl::StrFormat("| %s | %s | %s | %s | %d | %s | %.1f | %.1f | %s | %.1f | %s | %s |",
                                 row.source, row.model, strategy, DType_Name(row.dtype), row.seq,
                                 profile, row.measured_ms, p.step_ms, Percent(error), p.floor_ms,
                                 Percent(floor_error), p.bound_by));
    csv.push_back(absl::StrFormat("%s,%s,%s,%s,%d,%s,%.3f,%.3f,%.4f,%.3f,%.4f,%s", row.source,
                                  row.model, strategy, DType_Name(row.dtype), row.seq, profile,
                                  row.measured_ms, p.step_ms, error, p.floor_ms, floor_error,
                                  p.bound_by));
  }
  const double max_error = *std::max_element(errors.begin(), errors.end());
  const double max_floor = *std::max_element(floor_errors.begin(), floor_errors.end());
  const std::string summary = absl::StrFormat(
      "summary: %d rows; kernel-level median |error| %.1f%%, max %.1f%% (target: <= 15%% and "
      "<= 30%%); floor median %.1f%%, max %.1f%%",
      errors.size(), 100 * Median(errors), 100 * max_error, 100 * Median(floor_errors),
      100 * max_floor);
  std::printf("\n%s\n", summary.c_str());
  md.push_back("");
  md.push_back(summary);
  RETURN_IF_ERROR(WriteFile(out + "/gpu_compute_check.md", absl::StrJoin(md, "\n") + "\n"));
  RETURN_IF_ERROR(WriteFile(out + "/gpu_compute_check.csv", absl::StrJoin(csv, "\n") + "\n"));
  std::printf("wrote %s/gpu_compute_check.{md,csv}\n", out.c_str());
  return absl::OkStatus();
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"gpu_compute_check", "",
       "GPU steps predicted kernel by kernel (each implementation's profile) against steps\n"
       "measured on real GPUs, beside the roofline floor; writes gpu_compute_check.md/.csv."});
  return zosched::ExitWith("gpu_compute_check", zosched::Run());
}
