// Emulated links of the CPU testbed: a copy or collective that crossed a link
// of `rate_gbps` (GB/s = bytes per ns) with fixed `latency_ns` should not end
// before latency + bytes / rate after it started. Transfers on one link
// direction queue behind each other (first come, first served), so a link
// never carries more than its rate. Waiting sleeps; it never spins.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace zosched {

class EmulatedLink {
 public:
  using Clock = std::chrono::steady_clock;

  // rate_gbps <= 0: not throttled.
  EmulatedLink(double rate_gbps, int64_t latency_ns)
      : rate_gbps_(rate_gbps), latency_ns_(latency_ns) {}

  // Reserves the link for `bytes` from `start` (or from when the previous
  // reservation ends, whichever is later) and returns when that transfer may
  // end: reservation start + latency + bytes / rate.
  Clock::time_point Reserve(Clock::time_point start, int64_t bytes);

  // Sleeps until `end` (returns at once if it has passed).
  static void SleepUntil(Clock::time_point end);

  double rate_gbps() const { return rate_gbps_; }

 private:
  const double rate_gbps_;
  const int64_t latency_ns_;
  std::mutex mu_;
  Clock::time_point free_at_{};
};

}  // namespace zosched
