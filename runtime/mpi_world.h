// The MPI side of the CPU runtime: the world of ranks (one per schedule
// device), the node-shared memory that holds a node's host buffers, and
// the communicator that runs the schedule's collectives.
//
// MPI is initialised with MPI_THREAD_MULTIPLE (the collective stream thread
// calls MPI while the main thread may too); errors are returned, not fatal.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/core_turns.h"
#include "runtime/node_all_gather.h"
#include "runtime/node_meeting.h"

namespace zosched {

// Initialises MPI for threads (once per process) and returns the world rank
// and size. Errors: Internal if MPI cannot give at least
// MPI_THREAD_SERIALIZED.
absl::Status InitMpi(int* argc, char*** argv, int* rank, int* size);

// Aborts every rank of the job with `code` after printing `message` (the
// way one failing rank stops the others instead of letting them hang), as
// "rank N: MESSAGE", or "PROGRAM: MESSAGE" when the job is this one rank.
[[noreturn]] void AbortWorld(const std::string& message, int code);

// MPI_Barrier on MPI_COMM_WORLD that waits by polling with sleeps of
// `pause` (a blocking MPI_Barrier spins, stealing a core from ranks that are
// still computing). Errors: Internal for MPI errors.
absl::Status SleepingBarrier(std::chrono::microseconds pause);

// A meeting of every rank of the world, with a deadline, that carries a
// vote: each rank brings `vote` (>= 0) and every rank gets the largest (how
// the ranks agree to stop after a signal reached only some of them). Rank 0
// collects the votes and then releases the others, point to point on a
// communicator of its own; every wait polls with sleeps of `pause`, so no
// core spins. `what` names the meeting in errors ("the barrier before step
// 12").
//
// `machines`: each world rank's hostname, when known (MpiCollectives has
// them once set up); where the ranks span machines, a deadline error then
// also names the machine of the ranks waited for, whose link may have
// failed.
//
// Errors: DeadlineExceeded when the meeting is not complete within `limit`.
// Rank 0 names the ranks that did not arrive; the others wait 5 s longer
// (so that rank 0, which knows who is missing, speaks first) and then say
// that rank 0 did not release them. Internal for MPI errors.
absl::StatusOr<int> MeetAll(const std::string& what, int vote, std::chrono::milliseconds limit,
                            std::chrono::microseconds pause,
                            const std::vector<std::string>& machines = {});

// For an error after rank `self`'s wait on `ranks` ran out, where some of
// them run on another machine than `self` (`machines`: hostname per world
// rank): ", or the link to its machine failed (the ranks are on node1
// (ranks 0,1, this one), node2 (ranks 2,3))", the ranks grouped by machine
// in order of first rank, "this one" marking `self`'s. "" where they all
// share `self`'s machine (no link between them), or `machines` is empty.
std::string LinkFailureHint(const std::vector<std::string>& machines, const std::vector<int>& ranks,
                            int self);

// Collective over MPI_COMM_WORLD: every rank's `bytes`, in rank order, on
// rank 0; the other ranks get an empty list. Blocking (a caller that must
// not wait forever holds a Watch, runtime/watchdog.h). Errors: Internal for
// MPI errors.
absl::StatusOr<std::vector<std::string>> GatherToRankZero(const std::string& bytes);

// Collective over `comm`: every rank's `text`, in `comm`'s rank order, on
// every rank. Blocking. Errors: Internal for MPI errors.
absl::StatusOr<std::vector<std::string>> AllGatherStrings(MPI_Comm comm, const std::string& text);

// Collective over MPI_COMM_WORLD: each world rank's machine (its hostname),
// in rank order, on every rank. Errors: Internal for MPI errors.
absl::StatusOr<std::vector<std::string>> MachineOfEachRank();

// Memory shared by the ranks of one node (an MPI-3 shared window): the node's
// host parameter store lives here once, whichever ranks read and write it.
class NodeSharedMemory {
 public:
  // Collective over MPI_COMM_WORLD: every rank passes the same `bytes`; the
  // node's first rank allocates, the others map the same memory (data(),
  // zeroed; the world meeting's region and the turns on the machine's
  // cores lie before it).
  static absl::StatusOr<std::unique_ptr<NodeSharedMemory>> Allocate(int64_t bytes);
  ~NodeSharedMemory();

  char* data() const { return data_; }
  int64_t size() const { return bytes_; }
  int node_rank() const { return node_rank_; }
  int node_size() const { return node_size_; }
  MPI_Comm node() const { return node_; }
  // Blocks until every rank of the node has reached it.
  absl::Status NodeBarrier() const;
  // MeetAll's meeting through this memory (runtime/node_meeting.h: waiting
  // ranks sleep on a futex instead of polling) when this node holds every
  // rank of the world; nullptr when the world spans machines (then
  // MeetAll). Every rank gets the same answer.
  NodeMeeting* world_meeting() const { return meeting_.get(); }
  // Turns on the node's usable cores (runtime/core_turns.h), for the
  // node's ranks that compute on the same cores; each allocation has its own.
  CoreTurns* core_turns() const { return core_turns_.get(); }
  // Collective over the world: world rank 0 reads the steady clock, and
  // every rank returns that instant in its machine's steady clock. The
  // steady clock is CLOCK_MONOTONIC, one clock for every process of a
  // machine, so times measured from this epoch by different ranks of a node
  // compare exactly (each rank reading its own clock after a barrier left
  // them apart by the barrier's release skew, 1.5 ms with four ranks on two
  // cores). Each other node's first rank learns how far its clock reads
  // ahead of rank 0's from 16 round trips of a message, the shortest taken,
  // its reading put at that trip's midpoint: its epoch is then within half
  // that trip of rank 0's, where each node reading its own clock left the
  // nodes' timelines apart by their start-up skew (2.8 ms on the two-node
  // testbed). Errors: Internal.
  absl::StatusOr<std::chrono::steady_clock::time_point> SharedEpoch() const;

 private:
  NodeSharedMemory() = default;
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  char* data_ = nullptr;
  int64_t bytes_ = 0;
  int node_rank_ = 0;
  int node_size_ = 1;
  std::unique_ptr<NodeMeeting> meeting_;
  std::unique_ptr<CoreTurns> core_turns_;
};

// Runs the schedule's collectives: among ranks of one machine through
// node-shared memory (runtime/node_all_gather.h), among ranks of several
// over MPI, one sub-communicator per participant group either way.
class MpiCollectives {
 public:
  // Collective over MPI_COMM_WORLD: creates a communicator for each group in
  // `groups` (participant ranks in order) that contains this rank, in the
  // given order (every rank must pass the same list). `timeout`: how long a
  // collective may wait for the others before it fails.
  static absl::StatusOr<std::unique_ptr<MpiCollectives>> Create(
      const std::vector<std::vector<int>>& groups, std::chrono::seconds timeout);
  ~MpiCollectives();

  // In-place all-gather among `group` (one of those given to Create):
  // `buffer` holds group.size() chunks of `chunk_bytes`; this rank's chunk is
  // at its position in the group. A group on one machine goes through its
  // shared memory, a waiting rank asleep until the last one arrives; a
  // group spanning machines through non-blocking MPI, polled with short
  // sleeps. Neither burns a core while waiting. Errors: DeadlineExceeded
  // after the timeout (a participant died or never came), Internal for MPI
  // errors.
  absl::Status AllGather(const std::vector<int>& group, void* buffer, int64_t chunk_bytes);

  // The MPI communicator of `group` (one given to Create that contains this
  // rank): its ranks are the group's positions, in the group's order. Owned
  // by this (freed by ~MpiCollectives); for bootstrapping other libraries
  // (NCCL). Errors: NotFound when no communicator was created for `group`.
  absl::StatusOr<MPI_Comm> Comm(const std::vector<int>& group) const;

  // How long a collective may wait for the others (given to Create).
  std::chrono::seconds timeout() const { return timeout_; }
  // Each world rank's machine (its hostname), in rank order.
  const std::vector<std::string>& machines() const { return machines_; }

 private:
  MpiCollectives() = default;
  // Maps node-shared memory for the groups (of `groups`) whose ranks are
  // all on this rank's machine and sets up their NodeAllGather. Collective
  // over MPI_COMM_WORLD.
  absl::Status ShareNodeGroups(const std::vector<std::vector<int>>& groups);

  std::map<std::vector<int>, MPI_Comm> comms_;
  std::map<std::vector<int>, NodeAllGather> node_groups_;
  std::vector<std::string> machines_;  // per world rank: its machine's hostname
  int rank_ = 0;
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  std::chrono::seconds timeout_{0};
};

}  // namespace zosched
