// Interval helpers shared by the Timeline tools (timeline_metrics,
// compare_timelines, chrome_trace). Times are integer nanoseconds, like the
// Timeline; an interval is half-open, [start_ns, end_ns).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline.pb.h"

namespace zosched {

// [start_ns, end_ns), in nanoseconds.
using Interval = std::pair<int64_t, int64_t>;

// Length in nanoseconds of the union of `intervals`: they are sorted and
// merged, so overlapping or touching intervals count once, and an empty
// interval (start == end) counts 0. An empty vector gives 0.
// Requires start <= end for each interval (callers check, e.g. with
// CheckOpInterval); the result of a reversed one is unspecified.
int64_t UnionNs(std::vector<Interval> intervals);

// The schedule's ops by id. The pointers point into `schedule`, which must
// outlive the map. Ids are unique in a valid schedule; on a duplicate the
// first op with the id wins.
absl::flat_hash_map<int64_t, const Op*> OpsById(const Schedule& schedule);

// OK if `interval` runs an op of `ops_by_id` (from OpsById), on that op's
// device and stream, and does not end before it starts (end_ns >= start_ns;
// an empty interval is OK).
//
// Errors: InvalidArgument naming the interval's step, the op id and (when the
// op is found) the op's name, and what is wrong:
//   "timeline step S has op id I, which the schedule lacks"
//   "timeline step S has op I on device D stream 'X', but the schedule puts
//    op I 'NAME' on device D' stream 'X''"
//   "timeline step S: op I 'NAME' ends (E ns) before it starts (B ns)"
absl::Status CheckOpInterval(
    const absl::flat_hash_map<int64_t, const Op*>& ops_by_id,
    const OpInterval& interval);

}  // namespace zosched
