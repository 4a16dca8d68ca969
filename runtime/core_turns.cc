#include "runtime/core_turns.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "runtime/futex.h"

namespace zosched {
namespace {

// Sleeps on `word` while `done(value)` is false, waking now and then to
// check `deadline` even if no one wakes it. Returns whether it became true.
template <typename Done>
bool WaitFor(std::atomic<uint32_t>* word, Done done,
             std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const uint32_t seen = word->load();
    if (done(seen)) return true;
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::nanoseconds(0)) return false;
    FutexWait(word, seen, std::min<std::chrono::nanoseconds>(left, std::chrono::milliseconds(100)));
  }
}

}  // namespace

int64_t CoreTurns::RegionBytes(int cores) {
  return static_cast<int64_t>(std::max(cores, 0)) * sizeof(Line);
}

CoreTurns::CoreTurns(char* region, int cores)
    : lines_(reinterpret_cast<Line*>(region)), cores_(cores) {}

uint32_t CoreTurns::Ticket(int core) { return lines_[core].next.fetch_add(1); }

absl::StatusOr<uint32_t> CoreTurns::TicketInOrder(int core, uint32_t round, int position,
                                                  int count, std::chrono::milliseconds limit) {
  Line& line = lines_[core];
  const uint32_t mine = round * static_cast<uint32_t>(count) + static_cast<uint32_t>(position);
  // Wrapping arithmetic: `ordered` has reached `mine` when their difference,
  // read as signed, is not negative.
  const bool reached = WaitFor(
      &line.ordered, [mine](uint32_t seen) { return static_cast<int32_t>(seen - mine) >= 0; },
      std::chrono::steady_clock::now() + limit);
  if (!reached) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "waited %d ms on core %d for the device before this one (%d of %d there) to take its "
        "first turn of the step: it stopped or died (its rank's error says why)",
        limit.count(), core, position, count));
  }
  const uint32_t ticket = Ticket(core);
  line.ordered.fetch_add(1);
  FutexWakeAll(&line.ordered);
  return ticket;
}

absl::Status CoreTurns::Await(int core, uint32_t ticket, std::chrono::milliseconds limit) {
  Line& line = lines_[core];
  uint32_t before = 0;
  const bool came = WaitFor(
      &line.serving,
      [ticket, &before](uint32_t serving) {
        before = ticket - serving;
        return serving == ticket;
      },
      std::chrono::steady_clock::now() + limit);
  if (came) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrFormat(
      "waited %d ms for a turn on core %d behind %u device op(s) of this machine: a "
      "device computing there stopped or died (its rank's error says why)",
      limit.count(), core, before));
}

void CoreTurns::Give(int core) {
  Line& line = lines_[core];
  // Sequentially consistent, as Ticket's and Await's are: a taker this load
  // misses read `serving` after the increment, and does not sleep.
  const uint32_t served = line.serving.fetch_add(1) + 1;
  // Someone holds a later ticket: wake the waiters (one of them is next).
  if (line.next.load() != served) FutexWakeAll(&line.serving);
}

}  // namespace zosched
