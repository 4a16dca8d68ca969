#include "runtime/nn/thread_team.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace zosched {
namespace {

// Every index of [0, n) is visited exactly once, ranges start at multiples
// of the grain, and member w runs range w.
TEST(ThreadTeamTest, CoversEachIndexOnceInGrainAlignedRanges) {
  ThreadTeam team(3);
  ASSERT_EQ(team.size(), 3);
  for (int64_t n : {0, 1, 4, 5, 12, 13, 1000, 4097}) {
    for (int64_t grain : {1, 4, 64}) {
      std::vector<std::atomic<int>> visits(n);
      std::vector<std::atomic<int64_t>> begin_of(3);
      for (auto& b : begin_of) b = -1;
      team.ParallelFor(n, grain, [&](int64_t begin, int64_t end, int worker) {
        EXPECT_EQ(begin % grain, 0) << n << " " << grain;
        EXPECT_LT(begin, end);
        begin_of[worker] = begin;
        for (int64_t i = begin; i < end; ++i) ++visits[i];
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(visits[i], 1) << "n " << n << " index " << i;
      // Ranges are in member order: member w's range starts after member w-1's.
      for (int w = 1; w < 3; ++w) {
        if (begin_of[w] >= 0) EXPECT_GT(begin_of[w], begin_of[w - 1]);
      }
    }
  }
}

TEST(ThreadTeamTest, RunsRangesOnDistinctThreadsAndMemberZeroOnTheCaller) {
  std::vector<std::thread::id> prepared(4);
  ThreadTeam team(4, [&](int worker) { prepared[worker] = std::this_thread::get_id(); });
  std::vector<std::thread::id> ran(4);
  team.ParallelFor(4, 1, [&](int64_t begin, int64_t, int worker) {
    ran[begin] = std::this_thread::get_id();
    EXPECT_EQ(begin, worker);
  });
  EXPECT_EQ(ran[0], std::this_thread::get_id());
  for (int w = 1; w < 4; ++w) {
    EXPECT_EQ(ran[w], prepared[w]) << "worker " << w << " ran on a thread prepare never saw";
    EXPECT_NE(ran[w], ran[0]);
  }
}

TEST(ThreadTeamTest, ManyCallsInARowAllComplete) {
  ThreadTeam team(2);
  int64_t total = 0;
  for (int call = 0; call < 2000; ++call) {
    std::atomic<int64_t> sum{0};
    team.ParallelFor(100, 1, [&](int64_t begin, int64_t end, int) {
      for (int64_t i = begin; i < end; ++i) sum += i;
    });
    total += sum;
  }
  EXPECT_EQ(total, 2000 * 4950);
}

TEST(ThreadTeamTest, NullTeamRunsEverythingOnTheCaller) {
  int calls = 0;
  ParallelFor(nullptr, 10, 4, [&](int64_t begin, int64_t end, int worker) {
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 10);
    EXPECT_EQ(worker, 0);
    ++calls;
  });
  ParallelFor(nullptr, 0, 1, [&](int64_t, int64_t, int) { ++calls; });
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace zosched
