#include "runtime/timeline_causality.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace zosched {

CausalitySlip LargestCausalitySlip(const Schedule& schedule, const Timeline& timeline) {
  std::map<int64_t, const Op*> collectives;  // op id -> op
  for (const Op& op : schedule.ops()) {
    if (op.has_collective()) collectives[op.id()] = &op;
  }
  struct Members {
    int64_t last_start = std::numeric_limits<int64_t>::min();
    int64_t first_end = std::numeric_limits<int64_t>::max();
    int32_t started_device = -1, ended_device = -1;
  };
  std::map<std::pair<int32_t, std::string>, Members> by_step_and_key;
  for (const OpInterval& interval : timeline.ops()) {
    const auto op = collectives.find(interval.op_id());
    if (op == collectives.end()) continue;
    Members& m = by_step_and_key[{interval.step(), op->second->collective().key()}];
    if (interval.start_ns() > m.last_start) {
      m.last_start = interval.start_ns();
      m.started_device = interval.device();
    }
    if (interval.end_ns() < m.first_end) {
      m.first_end = interval.end_ns();
      m.ended_device = interval.device();
    }
  }
  CausalitySlip largest;
  for (const auto& [step_and_key, m] : by_step_and_key) {
    const int64_t slip = m.last_start - m.first_end;
    if (slip <= largest.ns) continue;
    largest = {slip, step_and_key.first, step_and_key.second, m.ended_device, m.started_device};
  }
  return largest;
}

}  // namespace zosched
