#include "runtime/link_throttle.h"

#include "gtest/gtest.h"

namespace zosched {
namespace {

using Clock = EmulatedLink::Clock;
using std::chrono::nanoseconds;

TEST(EmulatedLink, EndIsLatencyPlusBytesOverRate) {
  EmulatedLink link(/*rate_gbps=*/2.0, /*latency_ns=*/1000);
  const Clock::time_point t0 = Clock::now();
  EXPECT_EQ(link.Reserve(t0, 1000000) - t0, nanoseconds(1000 + 500000));
}

TEST(EmulatedLink, TransfersOnOneLinkQueue) {
  EmulatedLink link(1.0, 0);
  const Clock::time_point t0 = Clock::now();
  EXPECT_EQ(link.Reserve(t0, 1000) - t0, nanoseconds(1000));
  // Starting at the same time, the second waits for the first.
  EXPECT_EQ(link.Reserve(t0, 1000) - t0, nanoseconds(2000));
  // Starting after the link is free again, it does not.
  EXPECT_EQ(link.Reserve(t0 + nanoseconds(5000), 500) - t0, nanoseconds(5500));
}

TEST(EmulatedLink, UnthrottledEndsAtItsStart) {
  EmulatedLink link(0, 1000);
  const Clock::time_point t0 = Clock::now();
  EXPECT_EQ(link.Reserve(t0, 1 << 30), t0);
}

TEST(EmulatedLink, SleepUntilWaitsAtLeastThatLong) {
  const Clock::time_point t0 = Clock::now();
  EmulatedLink::SleepUntil(t0 + std::chrono::milliseconds(2));
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(2));
}

}  // namespace
}  // namespace zosched
