#include "sim/flow_sharing.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace zosched {

FlowSharing::FlowSharing(std::vector<double> capacities)
    : capacity_(std::move(capacities)),
      residual_(capacity_.size(), 0),
      unfrozen_(capacity_.size(), 0) {
  active_links_.reserve(capacity_.size());
}

void FlowSharing::Share(const std::vector<const std::vector<int>*>& flow_links,
                        std::vector<double>* rates) {
  const int flows = flow_links.size();
  rates->assign(flows, 0);
  active_links_.clear();
  for (const std::vector<int>* path : flow_links) {
    for (int l : *path) {
      if (unfrozen_[l]++ == 0) {
        residual_[l] = capacity_[l];
        active_links_.push_back(l);
      }
    }
  }
  std::sort(active_links_.begin(), active_links_.end());
  frozen_.assign(flows, 0);
  int remaining = flows;
  while (remaining > 0) {
    int bottleneck = -1;
    double share = std::numeric_limits<double>::infinity();
    for (int l : active_links_) {
      if (unfrozen_[l] == 0) continue;
      const double s = residual_[l] / unfrozen_[l];
      if (s < share) {
        share = s;
        bottleneck = l;
      }
    }
    if (bottleneck < 0) break;  // the flows left cross no link: rate 0
    for (int f = 0; f < flows; ++f) {
      if (frozen_[f]) continue;
      const std::vector<int>& path = *flow_links[f];
      if (std::find(path.begin(), path.end(), bottleneck) == path.end()) continue;
      frozen_[f] = 1;
      --remaining;
      (*rates)[f] = share;
      for (int l : path) {
        residual_[l] -= share;
        --unfrozen_[l];
      }
    }
  }
}

}  // namespace zosched
