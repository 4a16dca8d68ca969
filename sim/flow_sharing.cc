#include "sim/flow_sharing.h"

#include <algorithm>
#include <limits>

namespace zosched {

FlowSharing::FlowSharing(std::vector<double> capacities) { Reset(capacities); }

void FlowSharing::Reset(const std::vector<double>& capacities) {
  capacity_ = capacities;
  residual_.assign(capacity_.size(), 0);
  unfrozen_.assign(capacity_.size(), 0);
  crossing_begin_.assign(capacity_.size(), 0);
  crossing_fill_.assign(capacity_.size(), 0);
  active_links_.clear();
  active_links_.reserve(capacity_.size());
  pattern_of_hash_.clear();
  patterns_.clear();
  pattern_paths_.clear();
  pattern_rates_.clear();
}

namespace {

// The most flows that the patterns keep in all: 16 bytes each.
constexpr int kMaxPatternFlows = 1 << 16;

}  // namespace

uint64_t FlowSharing::Hash(const std::vector<const std::vector<int>*>& flow_links) {
  uint64_t hash = flow_links.size();
  for (const std::vector<int>* path : flow_links) {
    hash = (hash ^ reinterpret_cast<uintptr_t>(path)) * 0x9e3779b97f4a7c15ULL;
  }
  return hash ^ (hash >> 29);
}

bool FlowSharing::Matches(const Pattern& pattern,
                          const std::vector<const std::vector<int>*>& flow_links) const {
  return pattern.end - pattern.begin == static_cast<int>(flow_links.size()) &&
         std::equal(flow_links.begin(), flow_links.end(), pattern_paths_.begin() + pattern.begin);
}

void FlowSharing::Share(const std::vector<const std::vector<int>*>& flow_links,
                        std::vector<double>* rates) {
  const uint64_t hash = Hash(flow_links);
  const auto seen = pattern_of_hash_.find(hash);
  if (seen != pattern_of_hash_.end()) {
    const Pattern& pattern = patterns_[seen->second];
    if (Matches(pattern, flow_links)) {
      const double* first = pattern_rates_.data() + pattern.begin;
      rates->assign(first, first + flow_links.size());
      return;
    }
  }
  Fill(flow_links, rates);
  // Keep it, unless its hash is another pattern's (too rare to matter) or
  // the patterns are full.
  if (seen != pattern_of_hash_.end() || pattern_paths_.size() >= kMaxPatternFlows) return;
  Pattern pattern;
  pattern.begin = pattern_paths_.size();
  pattern_paths_.insert(pattern_paths_.end(), flow_links.begin(), flow_links.end());
  pattern_rates_.insert(pattern_rates_.end(), rates->begin(), rates->end());
  pattern.end = pattern_paths_.size();
  pattern_of_hash_.emplace(hash, patterns_.size());
  patterns_.push_back(pattern);
}

void FlowSharing::Fill(const std::vector<const std::vector<int>*>& flow_links,
                       std::vector<double>* rates) {
  const int flows = flow_links.size();
  rates->assign(flows, 0);
  active_links_.clear();
  int crossings = 0;
  for (const std::vector<int>* path : flow_links) {
    for (int l : *path) {
      if (unfrozen_[l]++ == 0) {
        residual_[l] = capacity_[l];
        active_links_.push_back(l);
      }
    }
    crossings += path->size();
  }
  // Each link's crossing flows, in flow order.
  int at = 0;
  for (int l : active_links_) {
    crossing_begin_[l] = crossing_fill_[l] = at;
    at += unfrozen_[l];
  }
  crossing_.resize(crossings);
  for (int f = 0; f < flows; ++f) {
    for (int l : *flow_links[f]) crossing_[crossing_fill_[l]++] = f;
  }
  frozen_.assign(flows, 0);
  int remaining = flows;
  while (remaining > 0) {
    // The link with the smallest fair share; ties go to the lower index.
    int bottleneck = -1;
    double share = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < active_links_.size();) {
      const int l = active_links_[i];
      if (unfrozen_[l] == 0) {  // every flow through it is frozen: done with it
        active_links_[i] = active_links_.back();
        active_links_.pop_back();
        continue;
      }
      const double s = residual_[l] / unfrozen_[l];
      if (s < share || (s == share && l < bottleneck)) {
        share = s;
        bottleneck = l;
      }
      ++i;
    }
    if (bottleneck < 0) break;  // the flows left cross no link: rate 0
    for (int k = crossing_begin_[bottleneck]; k < crossing_fill_[bottleneck]; ++k) {
      const int f = crossing_[k];
      if (frozen_[f]) continue;
      frozen_[f] = 1;
      --remaining;
      (*rates)[f] = share;
      for (int l : *flow_links[f]) {
        residual_[l] -= share;
        --unfrozen_[l];
      }
    }
  }
}

}  // namespace zosched
