#include "runtime/calibration/testbed_schedules.h"

#include <string>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "models/model_zoo.h"
#include "schedule/lowering.h"
#include "schedule/peft_choice.h"
#include "schedule/testbed_grid.h"

namespace zosched {

absl::StatusOr<std::vector<Schedule>> TestbedSchedules(const CalibrationSettings& settings,
                                                       const Cluster& cluster) {
  ASSIGN_OR_RETURN(const ModelSpec model, LoadModelSpec(settings.model));
  ASSIGN_OR_RETURN(const Peft peft, ParsePeft(settings.peft));
  std::vector<Schedule> schedules;
  std::vector<StrategyGrid> grids = TestbedGrids();
  // Across machines, data parallel over every device as well (a shape of
  // fewer examples per device than any grid above).
  if (cluster.nics_size() > 0 && cluster.devices_size() > 2) {
    grids.push_back({DISTZO2, 1, cluster.devices_size(), /*slicing=*/true});
  }
  for (const StrategyGrid& grid : grids) {
    LowerOptions o = GridLowerOptions(grid);
    o.training.set_batch_size(settings.batch);
    o.training.set_seq_len(settings.seq);
    if (settings.directions > 1) o.training.set_directions(settings.directions);
    *o.training.mutable_peft() = peft;
    o.training.set_compute_dtype(FP32);
    o.training.set_host_dtype(FP32);
    o.training.set_learning_rate(1e-6);
    absl::StatusOr<Schedule> s = LowerSchedule(model, cluster, o);
    if (!s.ok()) {
      const std::string name = grid.strategy == ZO2
                                   ? "zo2"
                                   : absl::StrFormat("distzo2 P%dxD%d%s", grid.pertp, grid.dp,
                                                     grid.slicing ? "" : " (naive)");
      return absl::Status(
          s.status().code(),
          absl::StrFormat("lowering %s on --cluster=%s (one of the schedules whose op shapes "
                          "are timed: zo2, distzo2 P2xD1, P1xD2 and P2xD2, and across "
                          "machines P1 x every device, at --batch=%d "
                          "--seq=%d): %s",
                          name, settings.cluster, o.training.batch_size(), o.training.seq_len(),
                          s.status().message()));
    }
    schedules.push_back(*std::move(s));
  }
  return schedules;
}

}  // namespace zosched
