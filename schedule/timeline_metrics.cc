#include "schedule/timeline_metrics.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/status_format.h"
#include "base/status_macros.h"
#include "schedule/timeline_intervals.h"

namespace zosched {
namespace {

std::vector<Interval> Concat(const std::vector<Interval>& a,
                             const std::vector<Interval>& b) {
  std::vector<Interval> all = a;
  all.insert(all.end(), b.begin(), b.end());
  return all;
}

// A device's op intervals within the step, by the resource they occupy.
struct DeviceIntervals {
  std::vector<Interval> compute;
  std::vector<Interval> host_link;  // host <-> device copies
  std::vector<Interval> peer_link;  // collectives and device <-> device copies
};

// The step's span: its StepInterval, else [min start, max end) of its ops.
absl::StatusOr<Interval> StepSpan(const Timeline& timeline, int32_t step) {
  const StepInterval* found = nullptr;
  for (const StepInterval& s : timeline.steps()) {
    if (s.step() != step) continue;
    if (found != nullptr) return InvalidArgument("timeline has two intervals for step %d", step);
    found = &s;
  }
  if (found != nullptr) {
    if (found->end_ns() < found->start_ns()) {
      return InvalidArgument("timeline step %d ends (%d ns) before it starts (%d ns)",
                     step, found->end_ns(), found->start_ns());
    }
    return Interval{found->start_ns(), found->end_ns()};
  }
  bool any = false;
  Interval span;
  for (const OpInterval& op : timeline.ops()) {
    if (op.step() != step) continue;
    span = any ? Interval{std::min(span.first, op.start_ns()),
                          std::max(span.second, op.end_ns())}
               : Interval{op.start_ns(), op.end_ns()};
    any = true;
  }
  CHECK(any) << "step " << step << " has no ops; checked by the caller";
  return span;
}

// The longest of the device's busy resources (ties: compute, host link, peer
// link) and its busy time.
std::pair<BindingResource, int64_t> Binding(const DeviceMetrics& m) {
  std::pair<BindingResource, int64_t> best{BindingResource::kCompute, m.compute_ns};
  if (m.host_link_ns > best.second) best = {BindingResource::kHostLink, m.host_link_ns};
  if (m.peer_link_ns > best.second) best = {BindingResource::kPeerLink, m.peer_link_ns};
  return best;
}

}  // namespace

const char* BindingResourceName(BindingResource r) {
  switch (r) {
    case BindingResource::kCompute:
      return "compute";
    case BindingResource::kHostLink:
      return "host link";
    case BindingResource::kPeerLink:
      return "peer link";
  }
  CHECK(false) << "unknown BindingResource " << static_cast<int>(r);
  return "";
}

absl::StatusOr<StepMetrics> ComputeStepMetrics(const Schedule& schedule,
                                               const Timeline& timeline,
                                               int32_t step) {
  const absl::flat_hash_map<int64_t, const Op*> op_by_id = OpsById(schedule);

  bool any = false;
  for (const OpInterval& interval : timeline.ops()) {
    if (interval.step() != step) continue;
    RETURN_IF_ERROR(CheckOpInterval(op_by_id, interval));
    any = true;
  }
  if (!any) return InvalidArgument("timeline has no op of step %d", step);

  StepMetrics metrics;
  metrics.step = step;
  ASSIGN_OR_RETURN(const Interval span, StepSpan(timeline, step));
  metrics.step_ns = span.second - span.first;
  if (metrics.step_ns > 0) {
    const TrainingSettings& t = schedule.training();
    metrics.tokens_per_s = static_cast<double>(t.batch_size()) * t.seq_len() /
                           (static_cast<double>(metrics.step_ns) / 1e9);
  }

  // Intervals clipped to the step's span, by device and resource.
  std::vector<DeviceIntervals> intervals(schedule.devices_size());
  for (const OpInterval& interval : timeline.ops()) {
    if (interval.step() != step) continue;
    const Op& op = *op_by_id.at(interval.op_id());
    const Interval clipped{std::max(interval.start_ns(), span.first),
                           std::min(interval.end_ns(), span.second)};
    if (clipped.first >= clipped.second) continue;
    DeviceIntervals& d = intervals[op.device()];
    if (op.has_compute()) {
      d.compute.push_back(clipped);
    } else if (op.has_copy()) {
      const bool peer = op.copy().direction() == DEVICE_TO_DEVICE;
      (peer ? d.peer_link : d.host_link).push_back(clipped);
    } else if (op.has_collective()) {
      d.peer_link.push_back(clipped);
    }
  }

  int64_t longest_busy_ns = -1;
  for (int i = 0; i < schedule.devices_size(); ++i) {
    const DeviceIntervals& d = intervals[i];
    const std::vector<Interval> comm = Concat(d.host_link, d.peer_link);
    DeviceMetrics m;
    m.device = schedule.devices(i).id();
    m.cluster_device = schedule.devices(i).cluster_device();
    m.compute_ns = UnionNs(d.compute);
    m.comm_ns = UnionNs(comm);
    const int64_t busy_ns = UnionNs(Concat(d.compute, comm));
    m.overlap_ns = m.compute_ns + m.comm_ns - busy_ns;
    m.overlap = m.comm_ns > 0 ? static_cast<double>(m.overlap_ns) / m.comm_ns : 0;
    m.exposed_comm_ns = m.comm_ns - m.overlap_ns;
    m.idle_ns = metrics.step_ns - busy_ns;
    m.compute_efficiency =
        metrics.step_ns > 0 ? static_cast<double>(m.compute_ns) / metrics.step_ns : 0;
    m.host_link_ns = UnionNs(d.host_link);
    m.peer_link_ns = UnionNs(d.peer_link);
    const auto [binding, binding_ns] = Binding(m);
    m.binding = binding;
    if (binding_ns > longest_busy_ns) {
      longest_busy_ns = binding_ns;
      metrics.binding = binding;
    }
    metrics.devices.push_back(std::move(m));
  }
  for (const Buffer& b : schedule.buffers()) {
    if (b.device() >= 0) metrics.devices[b.device()].memory_bytes += b.size_bytes();
  }
  return metrics;
}

}  // namespace zosched
