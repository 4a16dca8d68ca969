#include "runtime/train_schedule.h"

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

}  // namespace zosched
