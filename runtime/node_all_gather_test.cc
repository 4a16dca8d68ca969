// NodeAllGather among threads sharing one region (the futex protocol is the
// same between processes; mpi_world_test runs it across MPI ranks).
#include "runtime/node_all_gather.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

namespace zosched {
namespace {

using Clock = std::chrono::steady_clock;

// The byte member `m` puts at offset `i` of its chunk in call `call`.
char Pattern(int call, int m, int64_t i) { return static_cast<char>(call * 13 + m * 31 + i * 7 + 1); }

// A zeroed, 64-byte aligned region for `members` with `slot_bytes` slots.
std::vector<char> Region(int members, int64_t slot_bytes, char** aligned) {
  std::vector<char> memory(NodeAllGather::RegionBytes(members, slot_bytes) + 64, 0);
  *aligned = memory.data() + (64 - reinterpret_cast<uintptr_t>(memory.data()) % 64) % 64;
  return memory;
}

TEST(NodeAllGatherTest, EveryMemberGetsEveryChunkOverManyCallsAndRounds) {
  constexpr int kMembers = 3;
  constexpr int64_t kSlot = 64;  // small, so that most calls take several rounds
  // Chunk sizes: empty, one byte, a slot exactly, a slot and one, many slots.
  const std::vector<int64_t> sizes = {0, 1, 17, kSlot, kSlot + 1, 5 * kSlot + 3, 1000};
  constexpr int kRepeats = 60;
  char* region = nullptr;
  std::vector<char> memory = Region(kMembers, kSlot, &region);
  std::vector<std::string> failures(kMembers);
  std::vector<std::thread> threads;
  for (int m = 0; m < kMembers; ++m) {
    threads.emplace_back([&, m] {
      NodeAllGather gather(region, kMembers, m, kSlot);
      int call = 0;
      for (int repeat = 0; repeat < kRepeats; ++repeat) {
        for (int64_t chunk : sizes) {
          std::vector<char> buffer(kMembers * chunk, 0);
          for (int64_t i = 0; i < chunk; ++i) buffer[m * chunk + i] = Pattern(call, m, i);
          const absl::Status s = gather.AllGather(buffer.data(), chunk, Clock::now() + std::chrono::seconds(30));
          if (!s.ok()) {
            failures[m] = std::string(s.message());
            return;
          }
          for (int owner = 0; owner < kMembers; ++owner) {
            for (int64_t i = 0; i < chunk; ++i) {
              if (buffer[owner * chunk + i] != Pattern(call, owner, i)) {
                failures[m] = "call " + std::to_string(call) + ": member " + std::to_string(owner) +
                              "'s byte " + std::to_string(i) + " is wrong";
                return;
              }
            }
          }
          ++call;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int m = 0; m < kMembers; ++m) EXPECT_EQ(failures[m], "") << "member " << m;
}

TEST(NodeAllGatherTest, MemberThatNeverComesEndsTheWaitAtTheDeadline) {
  constexpr int kMembers = 3;
  char* region = nullptr;
  std::vector<char> memory = Region(kMembers, 128, &region);
  // Members 0 and 1 arrive; member 2 never does.
  std::vector<absl::Status> results(2);
  std::vector<std::thread> threads;
  const auto deadline = Clock::now() + std::chrono::milliseconds(200);
  for (int m = 0; m < 2; ++m) {
    threads.emplace_back([&, m] {
      NodeAllGather gather(region, kMembers, m, 128);
      std::vector<char> buffer(kMembers * 8, static_cast<char>(m));
      results[m] = gather.AllGather(buffer.data(), 8, deadline);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_GE(Clock::now(), deadline);
  for (const absl::Status& s : results) EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
}

}  // namespace
}  // namespace zosched
