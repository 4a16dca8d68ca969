#include "runtime/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

namespace zosched {

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

void FutexWait(std::atomic<uint32_t>* word, uint32_t seen, std::chrono::nanoseconds wait) {
  if (wait <= std::chrono::nanoseconds(0)) return;
  timespec timeout{};
  timeout.tv_sec = static_cast<time_t>(wait.count() / 1000000000);
  timeout.tv_nsec = static_cast<long>(wait.count() % 1000000000);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, seen, &timeout, nullptr, 0);
}

}  // namespace zosched
