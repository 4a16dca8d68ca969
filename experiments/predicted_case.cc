#include "experiments/predicted_case.h"

#include <map>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/files.h"
#include "base/flag_checks.h"
#include "base/output_dir.h"
#include "base/status_macros.h"
#include "experiments/timeline_plot.h"
#include "models/model_zoo.h"
#include "schedule/chrome_trace.h"
#include "schedule/compute_profile_fit.h"
#include "schedule/lowering.h"
#include "schedule/training_settings.h"
#include "sim/roofline_floor.h"

namespace zosched {

absl::StatusOr<PredictedCase> PredictCase(const std::string& model_name, const Cluster& cluster,
                                          const LowerOptions& options) {
  ASSIGN_OR_RETURN(const ModelSpec model, LoadModelSpec(model_name));
  PredictedCase c;
  ASSIGN_OR_RETURN(c.schedule, LowerSchedule(model, cluster, options));
  ProfiledConfig profiled;
  profiled.strategy = options.strategy;
  profiled.precision = options.precision;
  profiled.recompute = options.recompute;
  profiled.family = model.family();
  c.schedule.set_compute_profile(KernelProfileFor(profiled));
  ASSIGN_OR_RETURN(StepWithFloor step, SimulateWithFloor(c.schedule, &c.result));
  c.metrics = std::move(step.metrics);
  c.floor_ns = step.floor_ns;
  return c;
}

MemoryBreakdown DeviceMemory(const Schedule& schedule, int device) {
  MemoryBreakdown m;
  for (const Buffer& b : schedule.buffers()) {
    if (b.device() != device) continue;
    switch (b.kind()) {
      case RESIDENT_PARAMS:
      case BLOCK_SLOT:
      case GRADIENTS:
      case OPTIMIZER_STATE:
      case MASTER_WEIGHTS:
      case ZO_STATE:
        m.model_states += b.size_bytes();
        break;
      case COMM_BUCKET:
      case WIRE_STAGING:
        m.comm_buffers += b.size_bytes();
        break;
      default:
        m.activations += b.size_bytes();
    }
  }
  return m;
}

int64_t HostMemory(const Schedule& schedule) {
  std::map<std::string, int64_t> by_host;
  int64_t most = 0;
  for (const Buffer& b : schedule.buffers()) {
    if (b.device() >= 0) continue;
    most = std::max(most, by_host[b.host()] += b.size_bytes());
  }
  return most;
}

absl::Status WriteCaseArtifacts(const PredictedCase& c, const std::string& dir,
                                const std::string& slug, const std::string& title) {
  RETURN_IF_ERROR(MakeDirectories(dir + "/traces"));
  RETURN_IF_ERROR(MakeDirectories(dir + "/pictures"));
  ASSIGN_OR_RETURN(const std::string json, ChromeTraceJson(c.schedule, {&c.result.timeline}));
  RETURN_IF_ERROR(WriteFile(dir + "/traces/" + slug + ".json", json));
  return PlotTimelines(c.schedule, {{&c.result.timeline, "predicted"}}, 0,
                       title + " (" + c.schedule.name() + ")", dir + "/pictures/" + slug + ".png");
}

absl::Status CheckStudyBatchAndSeq(int batch, int seq) {
  RETURN_IF_ERROR(
      CheckFlagRange("batch", batch, 8, kMaxBatchSize, "examples per step, a multiple of 8"));
  if (batch % 8 != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--batch=%d: expected a multiple of 8 (the study splits it over up to 8 GPUs)", batch));
  }
  return CheckFlagRange("seq", seq, 1, 2048, "tokens, OPT's 2,048 at most");
}

std::string Slug(const std::string& text) {
  std::string slug;
  for (char ch : text) {
    const bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') || ch == '-' || ch == '.';
    if (keep) {
      slug += ch;
    } else if (!slug.empty() && slug.back() != '_') {
      slug += '_';
    }
  }
  while (!slug.empty() && slug.back() == '_') slug.pop_back();
  return slug;
}

}  // namespace zosched
