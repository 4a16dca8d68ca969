#include "experiments/testbed_cycle.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/files.h"
#include "base/output_dir.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/subprocess.h"
#include "experiments/timeline_plot.h"
#include "models/model_zoo.h"
#include "runtime/backend_registry.h"
#include "schedule/chrome_trace.h"
#include "sim/run_compute_scales.h"
#include "sim/simulator.h"

namespace zosched {

namespace {

// Mean loss of the first and last `n` rows of a train.csv.
absl::Status ReadLosses(const std::string& path, int n, double* first, double* last) {
  std::ifstream in(path);
  std::string line;
  std::vector<double> losses;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> fields = absl::StrSplit(line, ',');
    if (fields.size() >= 2) losses.push_back(std::stod(fields[1]));
  }
  if (losses.empty()) return absl::DataLossError(path + " has no steps");
  n = std::min<int>(n, losses.size());
  *first = *last = 0;
  for (int i = 0; i < n; ++i) {
    *first += losses[i] / n;
    *last += losses[losses.size() - 1 - i] / n;
  }
  return absl::OkStatus();
}

// The measured steps from `warmup` on, and the one with the median time,
// renumbered as step 0 (for the picture).
Timeline WithoutWarmup(const Timeline& measured, int warmup, Timeline* median_step) {
  Timeline kept = measured;
  kept.clear_ops();
  kept.clear_steps();
  kept.clear_speed_probes();
  for (const SpeedProbeSample& p : measured.speed_probes()) {
    if (p.step() >= warmup) *kept.add_speed_probes() = p;
  }
  std::vector<std::pair<int64_t, int32_t>> times;
  for (const StepInterval& s : measured.steps()) {
    if (s.step() < warmup) continue;
    *kept.add_steps() = s;
    times.push_back({s.end_ns() - s.start_ns(), s.step()});
  }
  for (const OpInterval& o : measured.ops()) {
    if (o.step() >= warmup) *kept.add_ops() = o;
  }
  std::sort(times.begin(), times.end());
  const int32_t chosen = times.empty() ? warmup : times[(times.size() - 1) / 2].second;
  *median_step = measured;
  median_step->clear_ops();
  median_step->clear_steps();
  median_step->clear_speed_probes();
  for (const StepInterval& s : measured.steps()) {
    if (s.step() != chosen) continue;
    StepInterval* copy = median_step->add_steps();
    *copy = s;
    copy->set_step(0);
  }
  for (const OpInterval& o : measured.ops()) {
    if (o.step() != chosen) continue;
    OpInterval* copy = median_step->add_ops();
    *copy = o;
    copy->set_step(0);
  }
  return kept;
}

// The breakdown of `measured` (StepBreakdown): the medians over its steps.
absl::StatusOr<Breakdown> MedianBreakdown(const Schedule& schedule, const Timeline& measured) {
  std::vector<double> overlaps;
  std::vector<int64_t> exposed;
  for (const StepInterval& s : measured.steps()) {
    ASSIGN_OR_RETURN(const StepMetrics m, ComputeStepMetrics(schedule, measured, s.step()));
    const Breakdown b = StepBreakdown(m);
    overlaps.push_back(b.overlap);
    exposed.push_back(b.exposed_ns);
  }
  if (overlaps.empty()) return absl::InternalError("the run measured no step after warm-up");
  const size_t middle = (overlaps.size() - 1) / 2;
  std::nth_element(overlaps.begin(), overlaps.begin() + middle, overlaps.end());
  std::nth_element(exposed.begin(), exposed.begin() + middle, exposed.end());
  Breakdown median;
  median.overlap = overlaps[middle];
  median.exposed_ns = exposed[middle];
  return median;
}

// The last non-empty line of the file `log`, without trailing whitespace:
// the error a refusing program printed last.
std::string LastLine(const std::string& log) {
  std::string text;
  if (!ReadFileToString(log, &text).ok()) return "(no log)";
  const size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "(empty log)";
  text.resize(end + 1);
  const size_t start = text.find_last_of("\r\n");
  return start == std::string::npos ? text : text.substr(start + 1);
}

// The step simulated again with `*scales` as the devices'
// compute_time_scales (sim/run_compute_scales.h), its timeline written to
// `path` and its breakdown to `*breakdown`; 0, and `*scales` cleared, when
// no device has a scale.
absl::StatusOr<int64_t> PredictAgain(const Schedule& schedule, const std::string& path,
                                     std::vector<double>* scales, Breakdown* breakdown) {
  if (std::none_of(scales->begin(), scales->end(), [](double scale) { return scale > 0; })) {
    scales->clear();
    return 0;
  }
  ASSIGN_OR_RETURN(SimResult again, Simulate(WithComputeScales(schedule, *scales)));
  RETURN_IF_ERROR(WriteProtoFile(path, again.timeline));
  ASSIGN_OR_RETURN(const StepMetrics metrics, ComputeStepMetrics(schedule, again.timeline, 0));
  *breakdown = StepBreakdown(metrics);
  const StepInterval& step = again.timeline.steps(0);
  return step.end_ns() - step.start_ns();
}

// Whether backend `name` times the speed probe (train --speed_probe_every);
// false for a name no backend registered (train refuses it).
bool ProbesComputeSpeed(const std::string& name) {
  const BackendRegistration* backend = FindBackend(name);
  return backend != nullptr && backend->capabilities.probes_compute_speed;
}

}  // namespace

absl::Status RunRuntimeProgram(const std::string& what, const std::vector<std::string>& argv,
                               const std::string& log) {
  ASSIGN_OR_RETURN(const int code, RunSubprocess({argv, log}));
  if (code == 0) return absl::OkStatus();
  if (code == 2) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s was refused (exit 2): %s", what, LastLine(log)));
  }
  return absl::InternalError(absl::StrFormat("%s exited %d; see %s", what, code, log));
}

absl::StatusOr<CyclePrediction> PredictCycle(const CycleCase& c, const Cluster& cluster,
                                             const std::string& out_dir) {
  CyclePrediction p;
  p.dir = out_dir + "/" + c.label;
  Cluster emulated = cluster;
  if (c.host_link_gbps > 0) {
    for (Device& d : *emulated.mutable_devices()) {
      d.mutable_host_link()->set_down_gbps(c.host_link_gbps);
      d.mutable_host_link()->set_up_gbps(c.host_link_gbps);
    }
  }
  ASSIGN_OR_RETURN(ModelSpec model, LoadModelSpec(c.model));
  ASSIGN_OR_RETURN(p.schedule, LowerSchedule(model, emulated, c.options));
  RETURN_IF_ERROR(MakeDirectories(p.dir));
  p.schedule_path = p.dir + "/schedule.pb";
  RETURN_IF_ERROR(WriteProtoFile(p.schedule_path, p.schedule));

  ASSIGN_OR_RETURN(SimResult predicted, Simulate(p.schedule));
  p.timeline = std::move(predicted.timeline);
  RETURN_IF_ERROR(WriteProtoFile(p.dir + "/predicted.timeline.pb", p.timeline));
  ASSIGN_OR_RETURN(p.predicted, ComputeStepMetrics(p.schedule, p.timeline, 0));
  return p;
}

absl::StatusOr<CycleResult> MeasureCycle(const CycleCase& c, const CyclePrediction& prediction,
                                         int steps, int warmup, const std::string& train,
                                         int loss_window) {
  const std::string& dir = prediction.dir;
  CycleResult r;
  r.schedule = prediction.schedule;
  r.predicted = prediction.predicted;
  r.run_dir = dir + "/run";
  RETURN_IF_ERROR(RunRuntimeProgram(
      absl::StrFormat("the training run of '%s'", c.label),
      {train, "--backend=" + c.backend,
       c.hosts.empty() ? absl::StrCat("--ranks=", r.schedule.devices_size())
                       : "--hosts=" + c.hosts,
       "--schedule=" + prediction.schedule_path, absl::StrCat("--steps=", steps),
       absl::StrCat("--eval_examples=", c.eval_examples),
       absl::StrCat("--final_outputs=", c.final_outputs ? "true" : "false"),
       "--collective_timeout_s=120",
       // The cycle measures steps: its runs replace the last cycle's, and
       // a model too big to save (no final outputs) is not checkpointed.
       "--overwrite", absl::StrCat("--checkpoint_every=", c.final_outputs ? 1000 : 0),
       // The testbed times each core before every 3rd step (the machine's
       // drift): steps 0, 3, 6, ..., and 2 steps in 3 undisturbed.
       absl::StrCat("--speed_probe_every=", ProbesComputeSpeed(c.backend) ? 3 : 0),
       "--out_dir=" + r.run_dir},
      dir + "/train.log"));
  Timeline measured_all;
  RETURN_IF_ERROR(ReadProtoFile(r.run_dir + "/timeline.pb", &measured_all));
  Timeline median_step;
  const Timeline measured = WithoutWarmup(measured_all, warmup, &median_step);
  ASSIGN_OR_RETURN(r.comparison, CompareTimelines(r.schedule, prediction.timeline, measured));
  ASSIGN_OR_RETURN(r.measured, ComputeStepMetrics(r.schedule, median_step, 0));
  ASSIGN_OR_RETURN(r.measured_breakdown, MedianBreakdown(r.schedule, measured));
  RETURN_IF_ERROR(
      ReadLosses(r.run_dir + "/train.csv", loss_window, &r.first_loss, &r.last_loss));
  ASSIGN_OR_RETURN(r.run_compute_scales, RunComputeScales(r.schedule, measured));
  ASSIGN_OR_RETURN(r.run_collective_cpu_gbps, RunCollectiveCpuGbps(r.schedule, measured));
  const Schedule at_run_costs =
      WithCollectiveCpuGbps(WithoutInterruptCpu(r.schedule), r.run_collective_cpu_gbps);
  ASSIGN_OR_RETURN(r.run_costs_predicted_step_ns,
                   PredictAgain(at_run_costs, dir + "/run_costs.timeline.pb",
                                &r.run_compute_scales, &r.run_costs_breakdown));
  ASSIGN_OR_RETURN(r.speed_drifts, SpeedProbeDrifts(r.schedule, measured));
  if (std::none_of(r.speed_drifts.begin(), r.speed_drifts.end(), [](double d) { return d > 0; })) {
    r.speed_drifts.clear();
  }
  ASSIGN_OR_RETURN(r.probed_compute_scales, ProbedComputeScales(r.schedule, measured));
  ASSIGN_OR_RETURN(r.probed_predicted_step_ns,
                   PredictAgain(r.schedule, dir + "/probed.timeline.pb", &r.probed_compute_scales,
                                &r.probed_breakdown));

  r.trace_path = dir + "/trace.json";
  ASSIGN_OR_RETURN(std::string json,
                   ChromeTraceJson(r.schedule, {&prediction.timeline, &median_step}));
  RETURN_IF_ERROR(WriteFile(r.trace_path, json));
  r.picture_path = dir + "/timelines.png";
  const absl::Status plotted = PlotTimelines(
      r.schedule, {{&prediction.timeline, "predicted"}, {&median_step, "measured"}}, 0,
      absl::StrFormat("%s: predicted %.2f ms vs measured %.2f ms (median step)", c.label,
                      r.comparison.predicted_step_ns / 1e6, r.comparison.measured_step_ns / 1e6),
      r.picture_path);
  if (absl::IsFailedPrecondition(plotted)) {
    // No gnuplot (an offline GPU machine may lack it): the measurement
    // stands; the picture's script is kept to render elsewhere.
    std::fprintf(stderr, "%s: no picture: %s (its script: %s/timelines.gp)\n", c.label.c_str(),
                 std::string(plotted.message()).c_str(), dir.c_str());
    r.picture_path.clear();
  } else {
    RETURN_IF_ERROR(plotted);
  }
  return r;
}

absl::StatusOr<CycleResult> RunCycle(const CycleCase& c, const Cluster& cluster, int steps,
                                     int warmup, const std::string& train,
                                     const std::string& out_dir, int loss_window) {
  ASSIGN_OR_RETURN(const CyclePrediction prediction, PredictCycle(c, cluster, out_dir));
  return MeasureCycle(c, prediction, steps, warmup, train, loss_window);
}

std::string TrainProgram(const std::string& programs_dir) {
  return programs_dir + "/train/train";
}

std::string CalibrateProgram(const std::string& programs_dir) {
  return programs_dir + "/runtime/calibrate";
}

}  // namespace zosched
