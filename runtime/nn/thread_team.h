// A fixed team of threads that splits a loop over [0, n) into contiguous
// ranges and runs them at once: how a CPU testbed device computes on more
// than one core (train --threads). The split never changes a result's bits
// as long as each index's work is independent of which range holds it,
// which is what every caller guarantees (per-token rows, per-element z).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace zosched {

class ThreadTeam {
 public:
  // fn(begin, end, worker): one range [begin, end) of a loop, run by team
  // member `worker` in [0, size()).
  using RangeFn = absl::FunctionRef<void(int64_t begin, int64_t end, int worker)>;

  // A team of `threads` >= 1: the thread that calls ParallelFor (member 0)
  // and threads - 1 workers started here, each of which first runs
  // prepare(worker) (pinning, priority), when given.
  explicit ThreadTeam(int threads, std::function<void(int worker)> prepare = nullptr);
  ~ThreadTeam();  // stops and joins the workers
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Splits [0, n) into size() ranges of ceil(n / size()) indices rounded up
  // to a multiple of `grain` >= 1 (the last range ends at n; ranges past it
  // are empty), runs fn on each non-empty one, member w taking range w, and
  // returns when all have returned. One call at a time, from one thread.
  void ParallelFor(int64_t n, int64_t grain, RangeFn fn);

 private:
  void WorkerLoop(int worker, const std::function<void(int)>& prepare);

  std::mutex mu_;
  std::condition_variable start_, done_;
  uint64_t generation_ = 0;  // ParallelFor calls so far
  int pending_ = 0;          // workers still running the current call
  bool stop_ = false;
  // The current call, valid while pending_ > 0.
  const RangeFn* fn_ = nullptr;
  int64_t n_ = 0, chunk_ = 0;
  std::vector<std::thread> workers_;
};

// team->ParallelFor(n, grain, fn), or fn(0, n, 0) on the calling thread
// when `team` is null.
void ParallelFor(ThreadTeam* team, int64_t n, int64_t grain, ThreadTeam::RangeFn fn);

}  // namespace zosched
