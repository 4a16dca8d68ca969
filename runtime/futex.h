// Futex waits and wake-ups on a 32-bit word in memory that processes share
// (an MPI shared window): how a process that waits for others of its
// machine sleeps in the kernel instead of polling. Shared futexes (no
// FUTEX_PRIVATE_FLAG), so the word may be mapped by several processes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace zosched {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "a futex word must be a plain, lock-free 32-bit word");

// Wakes every thread (of any process) sleeping in FutexWait on `word`.
void FutexWakeAll(std::atomic<uint32_t>* word);

// Sleeps while *word == seen, at most `wait`. Returns at a wake-up, when the
// word differs from `seen`, at a signal or at the timeout alike: the caller
// re-checks its condition and its deadline.
void FutexWait(std::atomic<uint32_t>* word, uint32_t seen, std::chrono::nanoseconds wait);

}  // namespace zosched
