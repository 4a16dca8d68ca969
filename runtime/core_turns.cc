#include "runtime/core_turns.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "runtime/futex.h"

namespace zosched {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
              "the turns' words are shared between processes");

int64_t CoreTurns::RegionBytes(int cores) {
  return static_cast<int64_t>(std::max(cores, 0)) * 64;
}

CoreTurns::CoreTurns(char* region, int cores)
    : lines_(reinterpret_cast<Line*>(region)), cores_(cores) {}

absl::Status CoreTurns::Take(int core, std::chrono::milliseconds limit) {
  Line& line = lines_[core];
  const uint32_t ticket = line.next.fetch_add(1);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const uint32_t serving = line.serving.load();
    if (serving == ticket) return absl::OkStatus();
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::nanoseconds(0)) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "waited %d ms for a turn on core %d behind %u device op(s) of this machine: a "
          "device computing there stopped or died (its rank's error says why)",
          limit.count(), core, ticket - serving));
    }
    // Wake up now and then to check the deadline even if no one gives.
    FutexWait(&line.serving, serving,
              std::min<std::chrono::nanoseconds>(left, std::chrono::milliseconds(100)));
  }
}

void CoreTurns::Give(int core) {
  Line& line = lines_[core];
  // Sequentially consistent, as Take's are: a taker this load misses read
  // `serving` after the increment, and does not sleep.
  const uint32_t served = line.serving.fetch_add(1) + 1;
  // Someone holds a later ticket: wake the waiters (one of them is next).
  if (line.next.load() != served) FutexWakeAll(&line.serving);
}

}  // namespace zosched
