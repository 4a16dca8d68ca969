// The simulator's pending events: a min-priority queue keyed by (time, order
// of pushing), so that events at the same time come out in the order they
// were pushed and a simulation is deterministic (docs/ARCHITECTURE.md,
// 'Simulator'). Keys are unique, so the order of pops is fully determined.
//
// A 4-ary heap in one vector: half the levels of a binary heap, and its
// comparisons compile to flags rather than branches on data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace zosched {

template <typename Payload>
class EventQueue {
 public:
  struct Event {
    int64_t time;
    int64_t seq;  // pushes before this one
    Payload payload;
  };

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // The earliest event. Requires !empty().
  const Event& top() const { return heap_[0]; }
  // Events pushed so far.
  int64_t pushed() const { return seq_; }

  void Reserve(size_t events) { heap_.reserve(events); }
  // Drops every event and starts the count of pushes again (keeps the memory).
  void Clear() {
    heap_.clear();
    seq_ = 0;
  }

  void Push(int64_t time, const Payload& payload) {
    const Event event{time, seq_++, payload};
    size_t at = heap_.size();
    heap_.push_back(event);
    while (at > 0) {
      const size_t parent = (at - 1) / kArity;
      if (!Before(event, heap_[parent])) break;
      heap_[at] = heap_[parent];
      at = parent;
    }
    heap_[at] = event;
  }

  // Removes the earliest event. Requires !empty().
  void Pop() {
    const Event last = heap_.back();
    heap_.pop_back();
    const size_t n = heap_.size();
    if (n == 0) return;
    size_t at = 0;
    for (;;) {
      const size_t first = kArity * at + 1;
      if (first >= n) break;
      size_t least = first;
      const size_t end = first + kArity < n ? first + kArity : n;
      for (size_t child = first + 1; child < end; ++child) {
        least = Before(heap_[child], heap_[least]) ? child : least;
      }
      if (!Before(heap_[least], last)) break;
      heap_[at] = heap_[least];
      at = least;
    }
    heap_[at] = last;
  }

 private:
  static constexpr size_t kArity = 4;

  static bool Before(const Event& a, const Event& b) {
    return (a.time < b.time) | ((a.time == b.time) & (a.seq < b.seq));
  }

  std::vector<Event> heap_;
  int64_t seq_ = 0;
};

}  // namespace zosched
