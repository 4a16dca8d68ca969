// A meeting of processes of one machine, through memory they share, that
// carries a vote (runtime/mpi_world.h: MeetAll does the same over MPI
// messages): each member brings a vote >= 0 and every member gets the
// largest. The last to arrive wakes the others through a futex on a shared
// generation counter; the others sleep in the kernel until then. MeetAll's
// members poll, every 20 µs at a step meeting, and on a machine whose
// cores the members oversubscribe each poll takes the core from a member
// still computing (about 5 % of a core per waiting rank on the testbed).
//
// Shared-memory layout (RegionBytes): a 64-byte header (the generation,
// the arrival count, two vote slots for alternate meetings), then one
// 32-bit word per member: the generation it last arrived at, plus one
// (how a member that gives up names the ones that did not come).
//
// Why two vote slots suffice: meeting g's slot is cleared for meeting g + 2
// by the last member to arrive at meeting g + 1, when every member has read
// meeting g's result (each reads it before arriving at g + 1).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace zosched {

// The error of a meeting (`what`) that `missing` (ranks, ascending) did not
// reach within `limit`: DeadlineExceeded naming them. Shared with MeetAll.
absl::Status RanksDidNotArrive(const std::string& what, const std::vector<int>& missing,
                               std::chrono::milliseconds limit);

class NodeMeeting {
 public:
  // Bytes of shared memory a meeting of `members` needs.
  static int64_t RegionBytes(int members);

  // `region`: RegionBytes(members) bytes shared by the members' processes
  // (or threads), 64-byte aligned and zeroed before any member's first
  // call. `member`: this caller's position in [0, members); errors name
  // members as "rank N" (the members are a world's ranks).
  NodeMeeting(char* region, int members, int member);

  // Arrives with `vote` (>= 0) and returns the largest vote of the meeting
  // once every member has arrived. `what` names the meeting in errors ("the
  // meeting at step 12"). Errors: DeadlineExceeded when the meeting is not
  // complete within `limit`, naming the ranks that did not arrive (the
  // meeting is unusable afterwards); InvalidArgument for a negative vote.
  absl::StatusOr<int> Meet(const std::string& what, int vote, std::chrono::milliseconds limit);

 private:
  std::atomic<uint32_t>* generation_;  // meetings completed so far (wraps)
  std::atomic<uint32_t>* arrived_;     // members arrived at the current one
  std::atomic<int32_t>* votes_;        // [2]: largest vote, by generation parity
  std::atomic<uint32_t>* last_arrival_;  // [members]: generation + 1 at arrival
  int members_, member_;
};

}  // namespace zosched
