#include "runtime/core_sharing_probe.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/median.h"
#include "base/status_macros.h"
#include "runtime/threaded_backend.h"

namespace zosched {
namespace {

// A copy that keeps its core busy for more than this share of the time it
// runs, its own CPU time over its wall time, would starve the compute
// (which yields to it) on the core they share; the share is judged once
// the copy has run this many times.
constexpr double kMaxCopyBusyShare = 2.0 / 3;
constexpr int64_t kRunsBeforeBusyCheck = 8;

// A thread that, once prepared, runs `work` back to back while it is
// switched on, and sleeps on a condition variable while it is off: off, it
// takes nothing from the core it shares. It switches itself off for good at
// its work's first error, or once its work, counted over every run so far,
// keeps the thread busy more than kMaxCopyBusyShare of the time: so
// whatever the work, a compute sharing its core gets at least the rest.
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
            const int64_t cpu_start_ns = ThreadCpuNs();
            const auto wall_start = std::chrono::steady_clock::now();
            absl::Status s = work.run();
            const int64_t cpu_ns = ThreadCpuNs() - cpu_start_ns;
            const int64_t wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now() - wall_start)
                                        .count();
            lock.lock();
            ++runs_;
            cpu_ns_ += cpu_ns;
            wall_ns_ += wall_ns;
            if (s.ok() && runs_ >= kRunsBeforeBusyCheck &&
                cpu_ns_ > kMaxCopyBusyShare * wall_ns_) {
              s = absl::ResourceExhaustedError(absl::StrFormat(
                  "the copy keeps its thread busy %.0f%% of the time it runs (%.1f us of CPU "
                  "per %.1f us run, over %d runs): back to back it would starve the compute "
                  "sharing its core; it must sleep at least %.0f%% of each run (throttle it "
                  "as a longer transfer)",
                  100.0 * cpu_ns_ / wall_ns_, 1e-3 * cpu_ns_ / runs_, 1e-3 * wall_ns_ / runs_,
                  runs_, 100 * (1 - kMaxCopyBusyShare)));
            }
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
  // Switches the loop on (unless it has failed) or off; returns how many
  // runs it has finished.
  int64_t Switch(bool on) {
    std::lock_guard<std::mutex> lock(mu_);
    on_ = on && status_.ok();
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
  int64_t cpu_ns_ = 0, wall_ns_ = 0;  // summed over the runs
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
    for (int r = 0; r < rounds && status.ok() && other.status().ok(); ++r) {
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
