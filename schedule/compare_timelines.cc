#include "schedule/compare_timelines.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/status_format.h"
#include "base/status_macros.h"
#include "schedule/timeline_intervals.h"

namespace zosched {
namespace {

// The lower median: the middle element of an odd count, the lower of the two
// middle elements of an even one.
int64_t LowerMedian(std::vector<int64_t> values) {
  CHECK(!values.empty());
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}

double RelativeError(int64_t predicted, int64_t measured) {
  return measured == 0 ? 0
                       : static_cast<double>(predicted - measured) / measured;
}

// One step of a timeline: its op intervals and its duration.
struct Step {
  std::vector<const OpInterval*> ops;
  std::set<int64_t> op_ids;
  const StepInterval* interval = nullptr;  // null: span its ops

  int64_t StartNs() const {
    if (interval != nullptr) return interval->start_ns();
    int64_t start = ops.front()->start_ns();
    for (const OpInterval* op : ops) start = std::min(start, op->start_ns());
    return start;
  }

  int64_t DurationNs() const {
    if (interval != nullptr) return interval->end_ns() - interval->start_ns();
    int64_t end = ops.front()->end_ns();
    for (const OpInterval* op : ops) end = std::max(end, op->end_ns());
    return end - StartNs();
  }
};

// A timeline's steps by step number.
using Steps = std::map<int32_t, Step>;

// `timeline`'s steps by step number (those with ops or a StepInterval), each
// op checked against the schedule. `name` ("predicted", "measured") prefixes
// errors.
absl::StatusOr<Steps> GroupSteps(
    const absl::flat_hash_map<int64_t, const Op*>& op_by_id,
    const Timeline& timeline, const char* name) {
  if (timeline.ops().empty()) return InvalidArgument("%s timeline has no ops", name);
  Steps steps;
  for (const OpInterval& interval : timeline.ops()) {
    if (absl::Status status = CheckOpInterval(op_by_id, interval); !status.ok()) {
      // "measured timeline step 1 has op id 9, which the schedule lacks".
      return absl::Status(status.code(), absl::StrCat(name, " ", status.message()));
    }
    const Op& op = *op_by_id.at(interval.op_id());
    Step& step = steps[interval.step()];
    if (!step.op_ids.insert(op.id()).second) {
      return InvalidArgument("%s step %d has op %d '%s' twice", name, interval.step(),
                     op.id(), op.name());
    }
    step.ops.push_back(&interval);
  }
  for (const StepInterval& interval : timeline.steps()) {
    Step& step = steps[interval.step()];
    if (step.interval != nullptr) {
      return InvalidArgument("%s timeline has two intervals for step %d", name,
                     interval.step());
    }
    if (interval.end_ns() < interval.start_ns()) {
      return InvalidArgument("%s step %d ends (%d ns) before it starts (%d ns)", name,
                     interval.step(), interval.end_ns(), interval.start_ns());
    }
    step.interval = &interval;
  }
  return steps;
}

// OK if measured step `number` holds exactly the ops of `expected`.
absl::Status CheckSameOps(const std::set<int64_t>& expected, int32_t number,
                          const Step& step) {
  std::vector<int64_t> missing;
  std::set_difference(expected.begin(), expected.end(), step.op_ids.begin(),
                      step.op_ids.end(), std::back_inserter(missing));
  if (!missing.empty()) {
    return InvalidArgument(
        "measured step %d lacks op %d (one of %d ops of predicted step 0 "
        "missing from it)",
        number, missing.front(), missing.size());
  }
  std::vector<int64_t> extra;
  std::set_difference(step.op_ids.begin(), step.op_ids.end(), expected.begin(),
                      expected.end(), std::back_inserter(extra));
  if (!extra.empty()) {
    return InvalidArgument(
        "measured step %d has op %d, which predicted step 0 lacks (one of %d "
        "extra ops)",
        number, extra.front(), extra.size());
  }
  return absl::OkStatus();
}

// Busy time of each (device, stream) of the schedule in `step`, in schedule
// order.
std::vector<int64_t> StreamBusyNs(const Schedule& schedule, const Step& step) {
  std::map<std::pair<int, std::string>, std::vector<Interval>> by_stream;
  for (const OpInterval* op : step.ops) {
    by_stream[{op->device(), op->stream()}].emplace_back(op->start_ns(),
                                                         op->end_ns());
  }
  std::vector<int64_t> busy;
  for (const ScheduleDevice& device : schedule.devices()) {
    for (const Stream& stream : device.streams()) {
      auto it = by_stream.find({device.id(), stream.name()});
      busy.push_back(it == by_stream.end() ? 0 : UnionNs(it->second));
    }
  }
  return busy;
}

}  // namespace

absl::StatusOr<TimelineComparison> CompareTimelines(const Schedule& schedule,
                                                    const Timeline& predicted,
                                                    const Timeline& measured) {
  const absl::flat_hash_map<int64_t, const Op*> op_by_id = OpsById(schedule);
  ASSIGN_OR_RETURN(const Steps predicted_steps,
                   GroupSteps(op_by_id, predicted, "predicted"));
  ASSIGN_OR_RETURN(const Steps measured_steps,
                   GroupSteps(op_by_id, measured, "measured"));
  auto step0 = predicted_steps.find(0);
  if (step0 == predicted_steps.end() || step0->second.ops.empty()) {
    return InvalidArgument("predicted timeline has no op of step 0");
  }
  const Step& reference = step0->second;

  std::vector<int64_t> step_ns, period_ns;
  // measured_busy[i][k]: busy time of stream k in measured step i.
  std::vector<std::vector<int64_t>> measured_busy;
  for (const auto& [number, step] : measured_steps) {
    RETURN_IF_ERROR(CheckSameOps(reference.op_ids, number, step));
    step_ns.push_back(step.DurationNs());
    measured_busy.push_back(StreamBusyNs(schedule, step));
    auto next = measured_steps.find(number + 1);
    if (next != measured_steps.end()) period_ns.push_back(next->second.StartNs() - step.StartNs());
  }

  TimelineComparison c;
  c.predicted_step_ns = reference.DurationNs();
  c.measured_steps = static_cast<int>(step_ns.size());
  c.measured_step_ns = LowerMedian(step_ns);
  c.measured_min_step_ns = *std::min_element(step_ns.begin(), step_ns.end());
  c.measured_max_step_ns = *std::max_element(step_ns.begin(), step_ns.end());
  if (!period_ns.empty()) c.measured_period_ns = LowerMedian(period_ns);
  c.step_error = RelativeError(c.predicted_step_ns, c.measured_step_ns);

  const std::vector<int64_t> predicted_busy = StreamBusyNs(schedule, reference);
  size_t k = 0;
  for (const ScheduleDevice& device : schedule.devices()) {
    for (const Stream& stream : device.streams()) {
      std::vector<int64_t> per_step;
      for (const std::vector<int64_t>& busy : measured_busy) {
        per_step.push_back(busy[k]);
      }
      StreamError e;
      e.device = device.id();
      e.stream = stream.name();
      e.predicted_busy_ns = predicted_busy[k];
      e.measured_busy_ns = LowerMedian(per_step);
      e.error = RelativeError(e.predicted_busy_ns, e.measured_busy_ns);
      c.streams.push_back(std::move(e));
      ++k;
    }
  }
  return c;
}

}  // namespace zosched
