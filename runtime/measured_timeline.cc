#include "runtime/measured_timeline.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "runtime/mpi_world.h"

namespace zosched {

absl::StatusOr<Timeline> GatherMeasuredTimeline(const Schedule& schedule,
                                                const Executor& executor,
                                                const std::vector<SpeedProbeSample>& probes,
                                                const std::string& backend) {
  Timeline mine;
  for (const OpInterval& i : executor.intervals()) *mine.add_ops() = i;
  for (const SpeedProbeSample& p : probes) *mine.add_speed_probes() = p;
  for (const StepInterval& s : executor.steps()) *mine.add_steps() = s;
  std::string bytes;
  mine.SerializeToString(&bytes);
  ASSIGN_OR_RETURN(const std::vector<std::string> ranks, GatherToRankZero(bytes));
  Timeline merged;
  if (ranks.empty()) return merged;  // not rank 0
  const int world = ranks.size();
  merged.set_source(MEASURED);
  merged.set_producer(absl::StrFormat("zosched runtime (%s, %d ranks)", backend, world));
  merged.set_schedule_name(schedule.name());
  merged.set_cluster_name(schedule.cluster().name());
  std::map<int32_t, StepInterval> steps;
  for (int r = 0; r < world; ++r) {
    Timeline t;
    if (!t.ParseFromString(ranks[r])) {
      return absl::InternalError(
          absl::StrFormat("the measured timeline rank %d sent does not parse", r));
    }
    for (const OpInterval& i : t.ops()) *merged.add_ops() = i;
    for (const SpeedProbeSample& p : t.speed_probes()) *merged.add_speed_probes() = p;
    for (const StepInterval& s : t.steps()) {
      auto [it, inserted] = steps.emplace(s.step(), s);
      it->second.set_start_ns(std::min(it->second.start_ns(), s.start_ns()));
      it->second.set_end_ns(std::max(it->second.end_ns(), s.end_ns()));
    }
  }
  for (const auto& [step, s] : steps) *merged.add_steps() = s;
  return merged;
}

}  // namespace zosched
