// Turns on the cores that several devices of one machine compute on: a
// ticket lock per core in memory the machine's processes share, so that the
// devices pinned to one core (the CPU testbed with more devices than cores)
// run their compute ops one at a time, each op to its end, in the order
// they asked. Without turns the kernel's scheduler interleaves the devices'
// compute threads where it decides (EEVDF: lags, deadlines, ticks), which
// moved the breakdown of one schedule's steps by 50 points from step to
// step; with turns the order is the one the simulator models
// (sim/host_cores.h): the device whose op became ready first runs next.
//
// Shared-memory layout (RegionBytes): one 64-byte line per core, holding
// the next ticket to hand out and the ticket now served (32-bit words,
// wrapping). A waiter sleeps on a futex on the served word.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "absl/status/status.h"

namespace zosched {

class CoreTurns {
 public:
  // Bytes of shared memory the turns of `cores` cores need.
  static int64_t RegionBytes(int cores);

  // `region`: RegionBytes(cores) bytes shared by the processes (or threads)
  // that take turns, 64-byte aligned and zeroed before anyone's first Take.
  CoreTurns(char* region, int cores);

  int cores() const { return cores_; }

  // Waits for a turn on `core` (in [0, cores)), behind everyone who asked
  // before. Errors: DeadlineExceeded when the turn has not come within
  // `limit` (the holder died or hangs; the core's turns are unusable
  // afterwards, as the job is), saying how many asked before.
  absl::Status Take(int core, std::chrono::milliseconds limit);
  // Ends the caller's turn on `core`: the next in line runs.
  void Give(int core);

 private:
  struct alignas(64) Line {
    std::atomic<uint32_t> next;     // tickets handed out
    std::atomic<uint32_t> serving;  // the ticket whose turn it is
  };
  Line* lines_;
  int cores_;
};

}  // namespace zosched
