#include "sim/flows_in_flight.h"

#include <algorithm>

namespace zosched {

void FlowsInFlight::Reset(const Network& network, int max_flows) {
  std::vector<double> capacities;
  for (const SimLink& link : network.links()) capacities.push_back(link.capacity);
  sharing_.Reset(capacities);
  active_.clear();
  active_.reserve(max_flows);
  active_paths_.clear();
  active_paths_.reserve(max_flows);
  changed_ = false;
  since_ = 0;
  link_bytes_.assign(capacities.size(), 0);
  link_busy_.assign(capacities.size(), 0);
  link_flows_.assign(capacities.size(), 0);
}

int FlowsInFlight::Start(int op, const Path* const* paths, int count, double bytes, int64_t now) {
  changed_ = true;
  if (bytes <= 0) return 0;
  for (int p = 0; p < count; ++p) {
    Flow flow;
    flow.op = op;
    flow.remaining = bytes;
    active_.push_back(flow);
    active_paths_.push_back(&paths[p]->links);
    for (int l : paths[p]->links) {
      if (link_flows_[l]++ == 0) link_busy_[l] -= now;
    }
  }
  return count;
}

void FlowsInFlight::Reshare(int64_t now) {
  sharing_.Share(active_paths_, &rates_);
  int64_t queued = -1;  // the last wake-up queued here
  for (size_t i = 0; i < active_.size(); ++i) {
    Flow& flow = active_[i];
    flow.rate = rates_[i];
    const double ns = flow.remaining / flow.rate;
    const int64_t end = now + CeilToInt64(std::max(0.0, ns) - 1e-6);
    // A second wake-up at the same time would change nothing: not for it,
    // nor for the flows before it that end then too (a collective's ring
    // edges, flows of equal size and share).
    if (end == flow.end_wakeup) continue;
    flow.end_wakeup = end;
    if (end == queued) continue;
    queued = end;
    wakeups_.push(end);
  }
  changed_ = false;
}

int FlowsInFlight::PopWakeups(int64_t now) {
  int popped = 0;
  while (!wakeups_.empty() && wakeups_.top() == now) {
    wakeups_.pop();
    ++popped;
  }
  return popped;
}

void FlowsInFlight::Advance(int64_t now) {
  const int64_t dt = now - since_;
  since_ = now;
  if (dt <= 0) return;
  for (size_t i = 0; i < active_.size(); ++i) {
    const double moved = active_[i].rate * dt;
    active_[i].remaining -= moved;
    for (int l : *active_paths_[i]) link_bytes_[l] += moved;
  }
}

void FlowsInFlight::TakeDone(int64_t now, std::vector<int>* ops) {
  for (size_t i = 0; i < active_.size();) {
    const Flow& flow = active_[i];
    if (flow.remaining <= 1e-6 * std::max(1.0, flow.rate)) {
      ops->push_back(flow.op);
      for (int l : *active_paths_[i]) {
        if (--link_flows_[l] == 0) link_busy_[l] += now;
      }
      active_[i] = active_.back();
      active_.pop_back();
      active_paths_[i] = active_paths_.back();
      active_paths_.pop_back();
      changed_ = true;
    } else {
      ++i;
    }
  }
}

}  // namespace zosched
