#include "runtime/core_sharing_probe.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "base/median.h"
#include "base/status_macros.h"
#include "runtime/threaded_backend.h"

namespace zosched {
namespace {

// A thread that, once prepared, runs `work` back to back while it is
// switched on, and sleeps on a condition variable while it is off: off, it
// takes nothing from the core it shares.
class BackgroundLoop {
 public:
  explicit BackgroundLoop(const CoreWork& work)
      : thread_([this, work] {
          work.prepare();
          std::unique_lock<std::mutex> lock(mu_);
          while (true) {
            cv_.wait(lock, [this] { return on_ || done_; });
            if (done_) return;
            lock.unlock();
            const absl::Status s = work.run();
            lock.lock();
            ++runs_;
            if (!s.ok() && status_.ok()) {
              status_ = s;
              on_ = false;
            }
          }
        }) {}
  ~BackgroundLoop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // Switches the loop on or off; returns how many runs it has finished.
  int64_t Switch(bool on) {
    std::lock_guard<std::mutex> lock(mu_);
    on_ = on;
    cv_.notify_all();
    return runs_;
  }
  absl::Status status() {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool on_ = false, done_ = false;
  int64_t runs_ = 0;
  absl::Status status_;
  std::thread thread_;  // last: starts once the members above exist
};

// One round: the compute's CPU seconds alone and shared, and the runs the
// other thread finished meanwhile.
struct Round {
  double alone_s, shared_s;
  int64_t runs;
};

// Runs `compute` on a thread of its own (its `prepare` would change the
// caller's pinning and priority): per round, `passes` runs with `other`
// off, then `passes` with it on.
absl::StatusOr<std::vector<Round>> TimeRounds(const CoreWork& compute, BackgroundLoop& other,
                                              int rounds, int passes) {
  std::vector<Round> out;
  absl::Status status;
  std::thread runner([&] {
    compute.prepare();
    auto timed = [&](double* seconds) -> absl::Status {
      const int64_t start = ThreadCpuNs();
      for (int p = 0; p < passes; ++p) RETURN_IF_ERROR(compute.run());
      *seconds = 1e-9 * (ThreadCpuNs() - start);
      return absl::OkStatus();
    };
    status = compute.run();  // warm-up: the operands in this core's caches
    for (int r = 0; r < rounds && status.ok(); ++r) {
      Round round;
      status = timed(&round.alone_s);
      if (!status.ok()) break;
      const int64_t before = other.Switch(true);
      status = timed(&round.shared_s);
      round.runs = other.Switch(false) - before;
      out.push_back(round);
    }
  });
  runner.join();
  RETURN_IF_ERROR(status);
  RETURN_IF_ERROR(other.status());
  return out;
}

}  // namespace

absl::StatusOr<double> PerCopyComputeCpuSeconds(const CoreWork& compute, const CoreWork& copy,
                                                int rounds, int passes) {
  if (rounds < 1 || passes < 1) {
    return absl::InvalidArgumentError("the core-sharing probe needs rounds >= 1 and passes >= 1");
  }
  BackgroundLoop copier(copy);
  ASSIGN_OR_RETURN(const std::vector<Round> measured, TimeRounds(compute, copier, rounds, passes));
  std::vector<double> per_copy;
  for (const Round& r : measured) {
    if (r.runs == 0) {
      return absl::FailedPreconditionError(
          "no copy ran while the compute did: the compute passes are shorter than a copy");
    }
    per_copy.push_back(std::max(0.0, r.shared_s - r.alone_s) / r.runs);
  }
  return Median(per_copy);
}

}  // namespace zosched
