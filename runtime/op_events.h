// Completion events of one device's ops, step by step: a stream thread marks
// an op done for step t; other stream threads wait for it. The CPU backend's
// "cross-stream edges are events" (DESIGN section 5).
//
// Thread-safe. Waiting blocks on a condition variable (no spinning). Abort()
// wakes every waiter so that one failing stream stops the others.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

namespace zosched {

class OpEvents {
 public:
  // `ops`: how many ops the device has (indices 0..ops-1).
  explicit OpEvents(int ops) : done_step_(ops, -1) {}

  // Marks op `op` done for step `step`.
  void Done(int op, int64_t step);

  // Blocks until op `op` is done for step `step` (or a later one), or until
  // Abort(). Returns false if aborted.
  bool WaitFor(int op, int64_t step);

  // Wakes all waiters; every later WaitFor returns false at once.
  void Abort();
  bool aborted() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int64_t> done_step_;
  bool aborted_ = false;
};

}  // namespace zosched
