#include "runtime/op_events.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(OpEvents, WaiterWakesWhenTheOpIsDoneForThatStep) {
  OpEvents events(2);
  std::atomic<int> reached{0};
  std::thread waiter([&] {
    EXPECT_TRUE(events.WaitFor(1, 0));
    reached = 1;
    EXPECT_TRUE(events.WaitFor(1, 1));
    reached = 2;
  });
  events.Done(0, 0);  // another op: no wake-up for op 1
  events.Done(1, 0);
  while (reached.load() < 1) std::this_thread::yield();
  EXPECT_EQ(reached.load(), 1);
  events.Done(1, 1);
  waiter.join();
  EXPECT_EQ(reached.load(), 2);
  EXPECT_TRUE(events.WaitFor(1, 0));  // an earlier step is done already
}

TEST(OpEvents, AbortReleasesEveryWaiter) {
  OpEvents events(3);
  std::vector<std::thread> waiters;
  std::atomic<int> released{0};
  for (int op = 0; op < 3; ++op) {
    waiters.emplace_back([&, op] {
      EXPECT_FALSE(events.WaitFor(op, 5));
      ++released;
    });
  }
  events.Abort();
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(released.load(), 3);
  EXPECT_TRUE(events.aborted());
  EXPECT_FALSE(events.WaitFor(0, 0));
}

}  // namespace
}  // namespace zosched
