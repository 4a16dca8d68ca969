// The flows a simulation has in flight over the network's links
// (docs/ARCHITECTURE.md, 'Simulator'): each moves its bytes over a path at
// its max-min fair share of every link (sim/flow_sharing.h), recomputed
// when a flow starts or ends. The times at which flows may end are kept in
// a heap of their own, earliest first, for the event loop to wake at: a
// flow's end moves when its rate changes, and the time it was to end at
// still wakes the loop, whose flows then advance in two steps. Also counts
// each link's bytes and busy time for the step's link usage.
//
// Units: time in integer nanoseconds, bytes, rates in bytes per ns. A
// flow is done when it has at most 1e-6 ns of moving left (or 1e-6 bytes,
// if that is more); its end is rounded up to the next ns.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "sim/flow_sharing.h"
#include "sim/network.h"

namespace zosched {

class FlowsInFlight {
 public:
  // Starts again with no flows on `network`'s links (keeping the memory),
  // with room for `max_flows` flows in all. Every simulation's loop ends
  // with no wake-up left, so none is carried over.
  void Reset(const Network& network, int max_flows);

  // For op `op` (a copy, or a collective's first op), flows of `bytes` each
  // start at `now`, one over each of the `count` paths, or none when
  // `bytes` <= 0; either way the shares are recomputed before the loop
  // goes on. Returns how many started. The paths must outlive the flows.
  int Start(int op, const Path* const* paths, int count, double bytes, int64_t now);

  // Whether a flow started or ended since the shares were last computed.
  bool changed() const { return changed_; }
  // Shares the links among the flows at `now` and queues the times at
  // which they will end.
  void Reshare(int64_t now);

  // Whether a time at which a flow may end is queued, and the earliest.
  bool waiting() const { return !wakeups_.empty(); }
  int64_t next_wakeup() const { return wakeups_.top(); }
  // Drops the wake-ups queued for `now`; returns how many.
  int PopWakeups(int64_t now);

  // Moves every flow on to `now` at its rate since the last call.
  void Advance(int64_t now);
  // Removes the flows done by `now` (their end, or a tie with it) and
  // appends their ops, one per flow, to `*ops`.
  void TakeDone(int64_t now, std::vector<int>* ops);

  // Per link (Network::links() order): the bytes carried, and the time with
  // at least one flow on it (complete once no flow is in flight).
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  const std::vector<int64_t>& link_busy_ns() const { return link_busy_; }

 private:
  struct Flow {
    int op = 0;
    double remaining = 0;     // bytes
    double rate = 0;          // bytes per ns
    int64_t end_wakeup = -1;  // its latest time in wakeups_
  };

  FlowSharing sharing_;
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<int64_t>> wakeups_;
  // The flows in flight, in the order they started (a flow that ends takes
  // the last one's place), and each one's path (FlowSharing's input).
  std::vector<Flow> active_;
  std::vector<const std::vector<int>*> active_paths_;
  std::vector<double> rates_;  // Reshare's scratch
  bool changed_ = false;
  int64_t since_ = 0;  // the time the flows were last advanced to
  std::vector<double> link_bytes_;
  // Per link: each span it is busy adds its end and takes away its start
  // (whole ns: exact).
  std::vector<int64_t> link_busy_;
  std::vector<int> link_flows_;  // active flows per link
};

}  // namespace zosched
