// Turns on the cores that several devices of one machine compute on: a
// ticket lock per core in memory the machine's processes share, so that the
// devices pinned to one core (the CPU testbed with more devices than cores)
// run their compute ops one at a time, each op to its end, in the order
// they asked. Without turns the kernel's scheduler interleaves the devices'
// compute threads where it decides (EEVDF: lags, deadlines, ticks), which
// moved the breakdown of one schedule's steps by 50 points from step to
// step; with turns the order is the one the simulator models
// (sim/host_cores.h): the device whose op became ready first runs next.
// A step's first turns are handed out in device order before the step
// starts (TakeInOrder), since which device's op is ready first at a step's
// start is the ranks' race out of their step meeting.
//
// Shared-memory layout (RegionBytes): one 64-byte line per core, holding
// the next ticket to hand out, the ticket now served, and how many ordered
// tickets were taken (32-bit words, wrapping). A waiter sleeps on a futex
// on the word it waits for.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace zosched {

class CoreTurns {
 public:
  // Bytes of shared memory the turns of `cores` cores need.
  static int64_t RegionBytes(int cores);

  // `region`: RegionBytes(cores) bytes shared by the processes (or threads)
  // that take turns, 4-byte aligned and zeroed before anyone's first call.
  CoreTurns(char* region, int cores);

  int cores() const { return cores_; }

  // A place in `core`'s line (in [0, cores)), behind everyone who asked
  // before: pass it to Await.
  uint32_t Ticket(int core);
  // Takes a ticket in round `round` of `count` takers (the devices on the
  // core, each taking one ticket a round, rounds counted from 0 alike by
  // all): once the `position` takers before this one (in [0, count)) have
  // taken theirs for the round. Every taker must call it once a round.
  // Errors: DeadlineExceeded when they have not within `limit`, naming the
  // position waited for.
  absl::StatusOr<uint32_t> TicketInOrder(int core, uint32_t round, int position, int count,
                                         std::chrono::milliseconds limit);
  // Waits until `ticket`'s turn on `core` has come. Errors: DeadlineExceeded
  // when it has not within `limit` (the holder died or hangs; the core's
  // turns are unusable afterwards, as the job is), saying how many are
  // before it.
  absl::Status Await(int core, uint32_t ticket, std::chrono::milliseconds limit);
  // Ticket and Await.
  absl::Status Take(int core, std::chrono::milliseconds limit) {
    return Await(core, Ticket(core), limit);
  }
  // Ends the caller's turn on `core`: the next in line runs.
  void Give(int core);

 private:
  // 64 bytes, a cache line where the region is 64-byte aligned; only 4-byte
  // alignment is required (MPI maps a shared window at any 8-byte address).
  struct Line {
    std::atomic<uint32_t> next;     // tickets handed out
    std::atomic<uint32_t> serving;  // the ticket whose turn it is
    std::atomic<uint32_t> ordered;  // tickets TicketInOrder handed out
    char padding[64 - 3 * sizeof(std::atomic<uint32_t>)];
  };
  static_assert(sizeof(Line) == 64 && alignof(Line) == 4,
                "a line is 64 bytes of 32-bit words, shared between processes");
  Line* lines_;
  int cores_;
};

}  // namespace zosched
