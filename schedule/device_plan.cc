#include "schedule/device_plan.h"

#include <algorithm>

#include "schedule/training_settings.h"

namespace zosched {

std::vector<DevicePlan> PlanDevices(const ResolvedLowerOptions& resolved, int64_t block_elements) {
  const LowerOptions& options = resolved.options;
  const bool distributed = options.strategy == DISTZO2;
  const int p_count = distributed ? options.pertp : 1;
  const int d_count = distributed ? options.dp : 1;
  const int share = options.training.batch_size() / d_count;
  std::vector<DevicePlan> plans;
  for (int p = 0; p < p_count; ++p) {
    for (int d = 0; d < d_count; ++d) {
      DevicePlan plan;
      plan.id = p * d_count + d;
      plan.device = resolved.devices[plan.id];
      const int paths = 2 * DirectionsOf(options.training) / p_count;
      for (int k = p * paths; k < (p + 1) * paths; ++k) {
        plan.paths.push_back({k / 2, k % 2 == 0 ? PLUS : MINUS});
      }
      plan.first_example = d * share;
      plan.examples = share;
      plans.push_back(plan);
    }
  }
  // Slicing groups: devices sharing a host, in rank order.
  for (DevicePlan& plan : plans) {
    for (const DevicePlan& other : plans) {
      const bool same_group = distributed && options.slicing
                                  ? other.device->host() == plan.device->host()
                                  : other.id == plan.id;
      if (!same_group) continue;
      if (other.id == plan.id) plan.rank = plan.group.size();
      plan.group.push_back(other.id);
    }
    const int64_t n = plan.group.size();
    plan.slice_chunk = (block_elements + n - 1) / n;
    plan.slice_first = std::min(block_elements, plan.rank * plan.slice_chunk);
    plan.slice_count =
        std::min(block_elements, plan.slice_first + plan.slice_chunk) - plan.slice_first;
  }
  return plans;
}

}  // namespace zosched
