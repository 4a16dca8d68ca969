#include "experiments/testbed_cycle.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/output_dir.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/subprocess.h"
#include "experiments/timeline_plot.h"
#include "models/model_zoo.h"
#include "schedule/chrome_trace.h"
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

}  // namespace

absl::StatusOr<CycleResult> RunCycle(const CycleCase& c, const Cluster& cluster, int steps,
                                     int warmup, const std::string& train,
                                     const std::string& out_dir, int loss_window) {
  const std::string dir = out_dir + "/" + c.label;
  RETURN_IF_ERROR(MakeDirectories(dir));
  CycleResult r;
  r.run_dir = dir + "/run";
  Cluster emulated = cluster;
  if (c.host_link_gbps > 0) {
    for (Device& d : *emulated.mutable_devices()) {
      d.mutable_host_link()->set_down_gbps(c.host_link_gbps);
      d.mutable_host_link()->set_up_gbps(c.host_link_gbps);
    }
  }
  ASSIGN_OR_RETURN(ModelSpec model, LoadModelSpec(c.model));
  ASSIGN_OR_RETURN(r.schedule, LowerSchedule(model, emulated, c.options));
  const std::string schedule_path = dir + "/schedule.pb";
  RETURN_IF_ERROR(WriteProtoFile(schedule_path, r.schedule));

  ASSIGN_OR_RETURN(SimResult predicted, Simulate(r.schedule));
  RETURN_IF_ERROR(WriteProtoFile(dir + "/predicted.timeline.pb", predicted.timeline));
  ASSIGN_OR_RETURN(r.predicted, ComputeStepMetrics(r.schedule, predicted.timeline, 0));

  const std::string log = dir + "/train.log";
  ASSIGN_OR_RETURN(
      const int code,
      RunSubprocess({{train, absl::StrCat("--ranks=", r.schedule.devices_size()),
                      "--schedule=" + schedule_path, absl::StrCat("--steps=", steps),
                      "--eval_examples=64", "--collective_timeout_s=120", "--out_dir=" + r.run_dir},
                     log}));
  if (code != 0) {
    return absl::InternalError(absl::StrFormat(
        "the training run of '%s' exited %d; see %s", c.label, code, log));
  }
  Timeline measured_all;
  RETURN_IF_ERROR(ReadProtoFile(r.run_dir + "/timeline.pb", &measured_all));
  Timeline median_step;
  const Timeline measured = WithoutWarmup(measured_all, warmup, &median_step);
  ASSIGN_OR_RETURN(r.comparison, CompareTimelines(r.schedule, predicted.timeline, measured));
  ASSIGN_OR_RETURN(r.measured, ComputeStepMetrics(r.schedule, median_step, 0));
  RETURN_IF_ERROR(
      ReadLosses(r.run_dir + "/train.csv", loss_window, &r.first_loss, &r.last_loss));

  r.trace_path = dir + "/trace.json";
  ASSIGN_OR_RETURN(std::string json,
                   ChromeTraceJson(r.schedule, {&predicted.timeline, &median_step}));
  RETURN_IF_ERROR(WriteFile(r.trace_path, json));
  r.picture_path = dir + "/timelines.png";
  RETURN_IF_ERROR(PlotTimelines(
      r.schedule, {{&predicted.timeline, "predicted"}, {&median_step, "measured"}}, 0,
      absl::StrFormat("%s: predicted %.2f ms vs measured %.2f ms (median step)", c.label,
                      r.comparison.predicted_step_ns / 1e6, r.comparison.measured_step_ns / 1e6),
      r.picture_path));
  return r;
}

}  // namespace zosched
