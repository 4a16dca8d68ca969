// CoreTurns among threads sharing one region (the futex protocol is the
// same between processes, which the training tests run it across).
#include "runtime/core_turns.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace zosched {
namespace {

// A zeroed region for `cores` at an address 8 bytes past a 64-byte
// boundary, as an MPI shared window may be mapped.
std::vector<char> Region(int cores, char** region) {
  std::vector<char> memory(CoreTurns::RegionBytes(cores) + 128, 0);
  *region = memory.data() + (64 - reinterpret_cast<uintptr_t>(memory.data()) % 64) % 64 + 8;
  return memory;
}

TEST(CoreTurnsTest, OneTurnAtATimeOnACoreAndTheCoresAreIndependent) {
  constexpr int kThreadsPerCore = 3;
  constexpr int kTurns = 3000;
  char* region = nullptr;
  std::vector<char> memory = Region(2, &region);
  std::atomic<int> inside[2] = {0, 0};
  std::atomic<int> overlaps{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int core = 0; core < 2; ++core) {
    for (int t = 0; t < kThreadsPerCore; ++t) {
      threads.emplace_back([&, core] {
        CoreTurns turns(region, 2);
        for (int i = 0; i < kTurns; ++i) {
          if (!turns.Take(core, std::chrono::seconds(60)).ok()) {
            ++failures;
            return;
          }
          if (inside[core].fetch_add(1) != 0) ++overlaps;
          inside[core].fetch_sub(1);
          turns.Give(core);
        }
      });
    }
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(overlaps.load(), 0);
}

TEST(CoreTurnsTest, TurnsComeInTheOrderTheyWereAskedFor) {
  char* region = nullptr;
  std::vector<char> memory = Region(1, &region);
  CoreTurns turns(region, 1);
  ASSERT_TRUE(turns.Take(0, std::chrono::seconds(1)).ok());  // held while the others line up
  constexpr int kWaiters = 4;
  std::mutex mutex;
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int w = 0; w < kWaiters; ++w) {
    threads.emplace_back([&, w] {
      ASSERT_TRUE(turns.Take(0, std::chrono::seconds(60)).ok());
      {
        std::lock_guard<std::mutex> lock(mutex);
        order.push_back(w);
      }
      turns.Give(0);
    });
    // The next asks only once this one waits: its ticket is taken.
    while (reinterpret_cast<std::atomic<uint32_t>*>(region)->load() != static_cast<uint32_t>(w + 2)) {
      std::this_thread::yield();
    }
  }
  turns.Give(0);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(CoreTurnsTest, EachRoundsOrderedTicketsGoInPositionOrderWhoeverAsksFirst) {
  constexpr int kTakers = 3;
  constexpr int kRounds = 300;
  char* region = nullptr;
  std::vector<char> memory = Region(1, &region);
  std::mutex mutex;
  std::vector<int> order;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  // The last position starts first.
  for (int position = kTakers - 1; position >= 0; --position) {
    threads.emplace_back([&, position] {
      CoreTurns turns(region, 1);
      for (int round = 0; round < kRounds; ++round) {
        const absl::StatusOr<uint32_t> ticket =
            turns.TicketInOrder(0, round, position, kTakers, std::chrono::seconds(60));
        if (!ticket.ok() || !turns.Await(0, *ticket, std::chrono::seconds(60)).ok()) {
          ++failures;
          return;
        }
        {
          std::lock_guard<std::mutex> lock(mutex);
          order.push_back(position);
        }
        turns.Give(0);
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(failures.load(), 0);
  ASSERT_EQ(order.size(), static_cast<size_t>(kTakers * kRounds));
  for (size_t i = 0; i < order.size(); ++i) {
    ASSERT_EQ(order[i], static_cast<int>(i % kTakers)) << "turn " << i;
  }
}

TEST(CoreTurnsTest, AnOrderedTicketWhoseTurnToAskNeverComesIsAnError) {
  char* region = nullptr;
  std::vector<char> memory = Region(1, &region);
  CoreTurns turns(region, 1);
  // Position 0 never asks (its rank died before the step).
  const absl::StatusOr<uint32_t> ticket =
      turns.TicketInOrder(0, 0, 1, 2, std::chrono::milliseconds(250));
  EXPECT_EQ(ticket.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(ticket.status().message().find("(1 of 2 there)"), std::string::npos)
      << ticket.status();
}

TEST(CoreTurnsTest, ATurnThatNeverComesIsAnErrorNotAHang) {
  char* region = nullptr;
  std::vector<char> memory = Region(1, &region);
  CoreTurns turns(region, 1);
  ASSERT_TRUE(turns.Take(0, std::chrono::seconds(1)).ok());  // and never given: its holder died
  const auto start = std::chrono::steady_clock::now();
  const absl::Status late = turns.Take(0, std::chrono::milliseconds(250));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(late.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(late.message().find("core 0 behind 1 device op"), std::string::npos) << late;
}

}  // namespace
}  // namespace zosched
