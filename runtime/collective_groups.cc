#include "runtime/collective_groups.h"

#include <algorithm>

namespace zosched {

std::vector<std::vector<int>> CollectiveGroups(const Schedule& schedule) {
  std::vector<std::vector<int>> groups;
  for (const Op& op : schedule.ops()) {
    if (!op.has_collective()) continue;
    std::vector<int> g(op.collective().participants().begin(),
                       op.collective().participants().end());
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
  }
  return groups;
}

}  // namespace zosched
