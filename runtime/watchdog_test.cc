#include "runtime/watchdog.h"

#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace zosched {
namespace {

using std::chrono::seconds;

TEST(Watchdog, WatchesThatEndInTimeDoNothing) {
  // Ended in any order, the earliest first too, while the watchdog waits for
  // that very deadline (ASan checks it never reads a watch that has gone).
  for (int i = 0; i < 50; ++i) {
    auto late = std::make_unique<Watch>("late", seconds(60));
    auto early = std::make_unique<Watch>("early", seconds(30));
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    early.reset();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    late.reset();
  }
}

TEST(WatchdogDeathTest, AWaitPastItsLimitEndsTheProcessNamingIt) {
  EXPECT_EXIT(
      {
        Watch watch("the test's wait", seconds(1));
        std::this_thread::sleep_for(seconds(30));
      },
      ::testing::ExitedWithCode(1), "the test's wait did not finish within 1 s");
}

}  // namespace
}  // namespace zosched
