// An in-place all-gather among processes of one machine, through memory
// they share: each member copies its chunk into its staging slot, the last
// to arrive wakes the others (a futex on a shared arrival counter), and each
// copies the others' chunks out. A member that waits sleeps in the kernel
// until the group is complete: no polling, no CPU taken from the members
// still computing, and no poll interval between the last arrival and the
// others' return (MPI's non-blocking all-gather progresses only while each
// member polls it: on the testbed the waiting ranks' polls took 22 % of the
// cores and returned up to a poll interval late).
//
// Shared-memory layout (RegionBytes): a 64-byte header holding the arrival
// counter, then two sets of `members` staging slots of `slot_bytes` each,
// used by alternate rounds. A chunk larger than a slot goes through in
// slot-sized rounds. Every member must make the same sequence of calls with
// the same chunk sizes (as with any collective).
//
// Why two sets suffice: a member writes round r + 2's slot (round r's set)
// only after round r + 1 completed, which needs every member to have
// arrived at round r + 1, which each does only after it copied round r out.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "absl/status/status.h"

namespace zosched {

class NodeAllGather {
 public:
  // Bytes of shared memory a group of `members` needs with slots of
  // `slot_bytes`.
  static int64_t RegionBytes(int members, int64_t slot_bytes);

  // `region`: RegionBytes(members, slot_bytes) bytes shared by the group's
  // processes (or threads), 64-byte aligned, its first 64 bytes zeroed
  // before any member's first call. `member`: this caller's position in the
  // group, in [0, members).
  NodeAllGather(char* region, int members, int member, int64_t slot_bytes);

  // `buffer` holds `members` chunks of `chunk_bytes`; this member's chunk is
  // at position `member`. On return every chunk holds its owner's bytes.
  // Errors: DeadlineExceeded when the group is not complete by `deadline`
  // (a member died or never came; the group is unusable afterwards).
  absl::Status AllGather(void* buffer, int64_t chunk_bytes,
                         std::chrono::steady_clock::time_point deadline);

 private:
  // One round: `bytes` at `offset` of every chunk.
  absl::Status Round(char* buffer, int64_t chunk_bytes, int64_t offset, int64_t bytes,
                     std::chrono::steady_clock::time_point deadline);
  char* Slot(uint32_t round, int member) const;

  std::atomic<uint32_t>* arrivals_;  // members * rounds arrived so far (wraps)
  char* slots_;
  int members_, member_;
  int64_t slot_bytes_;
  uint32_t rounds_ = 0;  // rounds this member has completed
};

}  // namespace zosched
