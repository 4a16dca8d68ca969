#include "schedule/timeline_intervals.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace zosched {

int64_t UnionNs(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  int64_t total = 0;
  size_t i = 0;
  while (i < intervals.size()) {
    const int64_t start = intervals[i].first;
    int64_t end = intervals[i].second;
    for (++i; i < intervals.size() && intervals[i].first <= end; ++i) {
      end = std::max(end, intervals[i].second);
    }
    total += end - start;
  }
  return total;
}

absl::flat_hash_map<int64_t, const Op*> OpsById(const Schedule& schedule) {
  absl::flat_hash_map<int64_t, const Op*> ops_by_id;
  ops_by_id.reserve(schedule.ops_size());
  for (const Op& op : schedule.ops()) ops_by_id.emplace(op.id(), &op);
  return ops_by_id;
}

absl::Status CheckOpInterval(
    const absl::flat_hash_map<int64_t, const Op*>& ops_by_id,
    const OpInterval& interval) {
  auto it = ops_by_id.find(interval.op_id());
  if (it == ops_by_id.end()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "timeline step %d has op id %d, which the schedule lacks",
        interval.step(), interval.op_id()));
  }
  const Op& op = *it->second;
  if (interval.device() != op.device() || interval.stream() != op.stream()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "timeline step %d has op %d on device %d stream '%s', but the "
        "schedule puts op %d '%s' on device %d stream '%s'",
        interval.step(), op.id(), interval.device(), interval.stream(), op.id(),
        op.name(), op.device(), op.stream()));
  }
  if (interval.end_ns() < interval.start_ns()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "timeline step %d: op %d '%s' ends (%d ns) before it starts (%d ns)",
        interval.step(), op.id(), op.name(), interval.end_ns(),
        interval.start_ns()));
  }
  return absl::OkStatus();
}

}  // namespace zosched
