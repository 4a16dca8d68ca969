#include "runtime/cuda/comm/gpu_identity.h"

#include <set>

namespace zosched {

std::string GpuIdentity(const std::string& host, const std::string& pci_bus_id) {
  return host + "/" + pci_bus_id;
}

bool DistinctWithinGroups(const std::vector<std::vector<int>>& groups,
                          const std::vector<std::string>& identity_of_rank) {
  for (const std::vector<int>& group : groups) {
    std::set<std::string> seen;
    for (int rank : group) {
      if (rank < 0 || rank >= static_cast<int>(identity_of_rank.size())) return false;
      // A repeated rank repeats its identity too.
      if (!seen.insert(identity_of_rank[rank]).second) return false;
    }
  }
  return true;
}

}  // namespace zosched
