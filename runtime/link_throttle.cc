#include "runtime/link_throttle.h"

#include <algorithm>
#include <thread>

namespace zosched {

EmulatedLink::Clock::time_point EmulatedLink::Reserve(Clock::time_point start,
                                                      int64_t bytes) {
  if (rate_gbps_ <= 0) return start;
  const auto duration = std::chrono::nanoseconds(
      latency_ns_ + static_cast<int64_t>(bytes / rate_gbps_ + 0.5));
  std::lock_guard<std::mutex> lock(mu_);
  const Clock::time_point begin = std::max(start, free_at_);
  free_at_ = begin + duration;
  return free_at_;
}

void EmulatedLink::SleepUntil(Clock::time_point end) {
  std::this_thread::sleep_until(end);
}

}  // namespace zosched
