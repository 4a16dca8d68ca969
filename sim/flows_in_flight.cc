#include "sim/flows_in_flight.h"

#include <algorithm>
#include <cmath>

namespace zosched {

void FlowsInFlight::Reset(const Network& network, int max_flows) {
  std::vector<double> capacities;
  for (const SimLink& link : network.links()) capacities.push_back(link.capacity);
  sharing_.Reset(capacities);
  flows_.clear();
  flows_.reserve(max_flows);
  active_.clear();
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
    flow.links = &paths[p]->links;
    flow.remaining = bytes;
    flows_.push_back(flow);
    active_.push_back(flows_.size() - 1);
    for (int l : paths[p]->links) {
      if (link_flows_[l]++ == 0) link_busy_[l] -= now;
    }
  }
  return count;
}

void FlowsInFlight::Reshare(int64_t now) {
  active_paths_.clear();
  for (int f : active_) active_paths_.push_back(flows_[f].links);
  sharing_.Share(active_paths_, &rates_);
  int64_t queued = -1;  // the last wake-up queued here
  for (size_t i = 0; i < active_.size(); ++i) {
    Flow& flow = flows_[active_[i]];
    flow.rate = rates_[i];
    const double ns = flow.remaining / flow.rate;
    const int64_t end = now + static_cast<int64_t>(std::ceil(std::max(0.0, ns) - 1e-6));
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
  for (int f : active_) {
    Flow& flow = flows_[f];
    const double moved = flow.rate * dt;
    flow.remaining -= moved;
    for (int l : *flow.links) link_bytes_[l] += moved;
  }
}

void FlowsInFlight::TakeDone(int64_t now, std::vector<int>* ops) {
  for (size_t i = 0; i < active_.size();) {
    Flow& flow = flows_[active_[i]];
    if (flow.remaining <= 1e-6 * std::max(1.0, flow.rate)) {
      ops->push_back(flow.op);
      for (int l : *flow.links) {
        if (--link_flows_[l] == 0) link_busy_[l] += now;
      }
      active_[i] = active_.back();
      active_.pop_back();
      changed_ = true;
    } else {
      ++i;
    }
  }
}

}  // namespace zosched
