#include "runtime/train_schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/first_order_model.h"
#include "schedule/lowering.h"
#include "schedule/validate.h"
#include "sim/simulator.h"

namespace zosched {
namespace {

void ApplyLinkOverrides(const TrainOptions& o, Cluster* cluster) {
  for (Device& d : *cluster->mutable_devices()) {
    if (o.h2d_gbps > 0) d.mutable_host_link()->set_down_gbps(o.h2d_gbps);
    if (o.d2h_gbps > 0) d.mutable_host_link()->set_up_gbps(o.d2h_gbps);
  }
  if (o.peer_gbps > 0) {
    for (PeerDomain& p : *cluster->mutable_peer_domains()) p.set_gbps_per_device(o.peer_gbps);
  }
}

// First-order baselines are simulated, never executed: the runtime has no
// backward pass.
absl::Status RefuseFirstOrder(StrategyKind kind, const std::string& what,
                              const std::string& simulate) {
  if (!IsFirstOrder(kind)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s is the first-order baseline %s: zosched simulates first-order strategies (DDP, ZeRO, "
      "FSDP) to compare them with ZO, but train executes only mezo, zo2 and distzo2 (it has no "
      "backward pass). Predict it instead: bazel run //sim:simulate -- %s",
      what, StrategyKind_Name(kind), simulate));
}

}  // namespace

absl::StatusOr<Schedule> PrepareSchedule(const TrainOptions& o) {
  Schedule schedule;
  if (!o.schedule.empty()) {
    RETURN_IF_ERROR(ReadProtoFile(o.schedule, &schedule));
  } else {
    RETURN_IF_ERROR(RefuseFirstOrder(o.lowering.strategy, "--strategy",
                                     "--schedule=S.pbtxt, with S lowered by //schedule:lower"));
    ASSIGN_OR_RETURN(ModelSpec model, LoadModelSpec(o.model));
    ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(o.cluster));
    ASSIGN_OR_RETURN(schedule, LowerSchedule(model, cluster, o.lowering));
  }
  ApplyLinkOverrides(o, schedule.mutable_cluster());
  RETURN_IF_ERROR(ValidateSchedule(schedule));
  RETURN_IF_ERROR(RefuseFirstOrder(schedule.strategy().kind(),
                                   absl::StrCat("schedule '", schedule.name(), "' in ", o.schedule),
                                   absl::StrCat("--schedule=", o.schedule)));
  return schedule;
}

absl::StatusOr<std::chrono::seconds> AutoWaitTimeout(const Schedule& schedule) {
  absl::StatusOr<SimResult> predicted = Simulate(schedule);
  if (!predicted.ok()) {
    return absl::Status(predicted.status().code(),
                        absl::StrCat("predicting the step to set the wait limit: ",
                                     predicted.status().message(),
                                     " (or give one with --collective_timeout_s)"));
  }
  double step_s = 0;
  for (const StepInterval& s : predicted->timeline.steps()) {
    step_s = std::max(step_s, (s.end_ns() - s.start_ns()) * 1e-9);
  }
  return std::chrono::seconds(std::max<int64_t>(60, static_cast<int64_t>(std::ceil(10 * step_s))));
}

absl::StatusOr<std::chrono::seconds> WaitLimit(const TrainOptions& o, const Schedule& schedule) {
  if (o.collective_timeout_s > 0) return std::chrono::seconds(o.collective_timeout_s);
  return AutoWaitTimeout(schedule);
}

}  // namespace zosched
