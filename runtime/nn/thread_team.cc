#include "runtime/nn/thread_team.h"

#include <algorithm>

#include "base/check.h"

namespace zosched {

ThreadTeam::ThreadTeam(int threads, std::function<void(int worker)> prepare) {
  CHECK(threads >= 1) << threads;
  for (int w = 1; w < threads; ++w) {
    workers_.emplace_back([this, w, prepare] { WorkerLoop(w, prepare); });
  }
}

ThreadTeam::~ThreadTeam() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadTeam::WorkerLoop(int worker, const std::function<void(int)>& prepare) {
  if (prepare) prepare(worker);
  uint64_t seen = 0;
  while (true) {
    const RangeFn* fn;
    int64_t begin, end;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      fn = fn_;
      begin = std::min(n_, worker * chunk_);
      end = std::min(n_, begin + chunk_);
    }
    if (begin < end) (*fn)(begin, end, worker);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
}

void ThreadTeam::ParallelFor(int64_t n, int64_t grain, RangeFn fn) {
  CHECK(n >= 0 && grain >= 1) << n << " " << grain;
  const int64_t per_member = (n + size() - 1) / size();
  const int64_t chunk = std::max<int64_t>(grain, (per_member + grain - 1) / grain * grain);
  if (workers_.empty() || n <= chunk) {
    if (n > 0) fn(0, n, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    chunk_ = chunk;
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  start_.notify_all();
  fn(0, chunk, 0);
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });
}

void ParallelFor(ThreadTeam* team, int64_t n, int64_t grain, ThreadTeam::RangeFn fn) {
  if (team != nullptr) {
    team->ParallelFor(n, grain, fn);
  } else if (n > 0) {
    fn(0, n, 0);
  }
}

}  // namespace zosched
