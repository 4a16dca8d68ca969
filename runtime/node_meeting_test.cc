// NodeMeeting among threads sharing one region (the futex protocol is the
// same between processes; mpi_world_test runs it across MPI ranks).
#include "runtime/node_meeting.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace zosched {
namespace {

// A zeroed, 64-byte aligned region for `members`.
std::vector<char> Region(int members, char** aligned) {
  std::vector<char> memory(NodeMeeting::RegionBytes(members) + 64, 0);
  *aligned = memory.data() + (64 - reinterpret_cast<uintptr_t>(memory.data()) % 64) % 64;
  return memory;
}

// The vote member `m` brings to meeting `i`: mostly 0, sometimes larger,
// so that the largest comes from different members.
int Vote(int i, int m) { return (i * 7 + m * 3) % 5 == 0 ? (i + m) % 4 + 1 : 0; }

TEST(NodeMeetingTest, EveryMemberGetsTheLargestVoteOfEachMeeting) {
  constexpr int kMembers = 4;
  constexpr int kMeetings = 2000;
  char* region = nullptr;
  std::vector<char> memory = Region(kMembers, &region);
  std::vector<std::string> failures(kMembers);
  std::vector<std::thread> threads;
  for (int m = 0; m < kMembers; ++m) {
    threads.emplace_back([&, m] {
      NodeMeeting meeting(region, kMembers, m);
      for (int i = 0; i < kMeetings; ++i) {
        const absl::StatusOr<int> got =
            meeting.Meet("meeting " + std::to_string(i), Vote(i, m), std::chrono::seconds(30));
        int expected = 0;
        for (int other = 0; other < kMembers; ++other) expected = std::max(expected, Vote(i, other));
        if (!got.ok() || *got != expected) {
          failures[m] = "meeting " + std::to_string(i) + ": " +
                        (got.ok() ? "got " + std::to_string(*got) + ", expected " +
                                        std::to_string(expected)
                                  : std::string(got.status().message()));
          return;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int m = 0; m < kMembers; ++m) EXPECT_EQ(failures[m], "") << "member " << m;
}

TEST(NodeMeetingTest, RanksThatNeverComeAreNamedAtTheDeadline) {
  constexpr int kMembers = 4;
  char* region = nullptr;
  std::vector<char> memory = Region(kMembers, &region);
  // Ranks 0 and 2 arrive; ranks 1 and 3 never do.
  std::vector<absl::StatusOr<int>> results(kMembers, 0);
  std::vector<std::thread> threads;
  for (int m : {0, 2}) {
    threads.emplace_back([&, m] {
      results[m] = NodeMeeting(region, kMembers, m)
                       .Meet("the meeting at step 7", 0, std::chrono::milliseconds(200));
    });
  }
  for (std::thread& t : threads) t.join();
  for (int m : {0, 2}) {
    EXPECT_EQ(results[m].status().code(), absl::StatusCode::kDeadlineExceeded);
    EXPECT_EQ(results[m].status().message(),
              "the meeting at step 7: ranks 1, 3 did not arrive within 200 ms (stalled or died)");
  }
}

// The scheduler state of this process's thread `tid` ('R' running, 'S'
// asleep, ...), from /proc; 0 when it cannot be read.
char ThreadState(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');  // the name may hold spaces and parentheses
  return paren == std::string::npos || paren + 2 >= line.size() ? 0 : line[paren + 2];
}

// Member 1 comes only once member 0 has gone to sleep in its wait, and then
// after a further 0.5 s: however fast or loaded the machine, member 0 waited
// all that time. Waiting must cost no CPU and mean one sleep, not polls.
TEST(NodeMeetingTest, AWaitingMemberTakesNoCpu) {
  char* region = nullptr;
  std::vector<char> memory = Region(2, &region);
  std::atomic<pid_t> waiter_tid{0};
  double cpu_s = -1;
  long sleeps = -1;  // voluntary context switches during the wait
  absl::Status waited;
  std::thread waiter([&] {
    rusage before{}, after{};
    getrusage(RUSAGE_THREAD, &before);
    waiter_tid = static_cast<pid_t>(syscall(SYS_gettid));
    waited = NodeMeeting(region, 2, 0).Meet("the wait", 0, std::chrono::seconds(30)).status();
    getrusage(RUSAGE_THREAD, &after);
    auto seconds = [](const rusage& r) {
      return r.ru_utime.tv_sec + r.ru_stime.tv_sec + 1e-6 * (r.ru_utime.tv_usec + r.ru_stime.tv_usec);
    };
    cpu_s = seconds(after) - seconds(before);
    sleeps = after.ru_nvcsw - before.ru_nvcsw;
  });
  // Event-driven: until the waiter is asleep (a deadline only against a hang).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool asleep = false;
  while (!asleep && std::chrono::steady_clock::now() < give_up) {
    asleep = waiter_tid != 0 && ThreadState(waiter_tid) == 'S';
    if (!asleep) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const absl::Status came = NodeMeeting(region, 2, 1).Meet("the wait", 0, std::chrono::seconds(30)).status();
  waiter.join();
  ASSERT_TRUE(asleep) << "member 0 never went to sleep in its wait";
  ASSERT_TRUE(came.ok()) << came;
  EXPECT_TRUE(waited.ok()) << waited;
  // Polling every 20 us for 0.5 s costs far more than 50 ms of CPU on this
  // kind of machine, and thousands of sleeps on any.
  EXPECT_LT(cpu_s, 0.05);
  EXPECT_LE(sleeps, 10) << "the waiting member woke up and slept again " << sleeps << " times";
}

TEST(NodeMeetingTest, ANegativeVoteIsRefused) {
  char* region = nullptr;
  std::vector<char> memory = Region(1, &region);
  const absl::StatusOr<int> got = NodeMeeting(region, 1, 0).Meet("the meeting", -2, std::chrono::seconds(1));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(), "the meeting: rank 0 brought the vote -2; votes are >= 0");
}

}  // namespace
}  // namespace zosched
