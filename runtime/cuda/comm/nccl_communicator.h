// Collectives on NCCL, for ranks that each have their own GPU within every
// collective group (gpu_identity_gather.h decides; NCCL refuses two ranks of
// one communicator on the same GPU, and host_staged_communicator.h serves
// that case).
//
// Set-up (Create, collective over each group): one NCCL communicator per
// distinct group among the calls (a group is its rank list in order:
// {0, 1} and {1, 0} are two communicators), the NCCL rank being the position
// in the group. Each is bootstrapped over the group's MPI communicator from
// MpiCollectives: the group's first rank calls ncclGetUniqueId, MPI_Bcast
// sends the id to the others, every rank calls ncclCommInitRank (blocking).
// The groups are initialised in sorted order, the same on every rank, so
// that ranks that share several groups cannot wait for each other in a cycle.
// NCCL (since 2.22) by default connects peers lazily, inside the first
// collective call that needs a connection, which blocks that call until the
// peers make it too; Create sets NCCL_RUNTIME_CONNECT=0 (unless the
// environment already sets it) so that every connection is made inside the
// init and an all-gather call only launches work.
//
// How one all-gather runs. EnqueueAllGather, on the caller's stream, records
// a "start" event, enqueues ncclAllGather in place (send = recv +
// rank_in_group * chunk_bytes, which NCCL allows), records a "done" event,
// hands both to the watchdog thread and returns: it never waits for the GPU
// or for other ranks.
//
// The watchdog thread, every 1 ms while collectives are pending, queries
// their events and every communicator's ncclCommGetAsyncError. A collective
// whose start event has completed (its stream reached it) but whose done
// event has not within `timeout` is DeadlineExceeded; an asynchronous NCCL
// error or a CUDA error is Internal. On the first error it records the
// error for AsyncError, forgets the pending collectives (later enqueues
// enqueue nothing) and takes every communicator of this rank out of use,
// all under the lock; then, without the lock, so that AsyncError and
// EnqueueAllGather need not wait for it, it aborts them (ncclCommAbort:
// NCCL's kernels return, so the streams drain, leaving the recv buffers
// unspecified). Events come from a pool and go back once their collective
// has completed, so an event is never re-recorded while pending.
//
// Requirements on the caller:
// - one host thread at a time calls EnqueueAllGather, with the device of
//   Create current;
// - every rank enqueues the collectives of a group in the same order (NCCL
//   matches them by order): the CUDA backend enqueues them on one collective
//   stream per device, in schedule order;
// - every rank of every group reaches Create: a rank that never does leaves
//   the others waiting in the init (the trainer aborts every rank when one
//   fails at set-up).
#pragma once

#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/cuda/comm/device_communicator.h"
#include "runtime/cuda/comm/registered_calls.h"
#include "runtime/mpi_world.h"

namespace zosched {

class NcclCommunicator : public DeviceCommunicator {
 public:
  // `calls`: every all-gather this device runs (each op once, not once per
  // step). `mpi` must have a communicator for every call's group (it is used
  // only inside Create). `timeout` (> 0): how long one collective may run
  // after its stream reached it. Call with the device of the calls' buffers
  // current; every rank of every group must call it (see the file comment).
  // Errors: InvalidArgument for a malformed call, a repeated op_id or a
  // non-positive timeout; NotFound when `mpi` lacks a group's communicator;
  // Internal for MPI, NCCL or CUDA errors.
  static absl::StatusOr<std::unique_ptr<NcclCommunicator>> Create(
      const std::vector<AllGatherCall>& calls, MpiCollectives* mpi, std::chrono::seconds timeout);

  // Waits until every enqueued collective has completed or the watchdog has
  // aborted the communicators (at most `timeout` after it started), stops
  // the watchdog, then ncclCommDestroy on each communicator (after an error
  // they have been aborted instead).
  ~NcclCommunicator() override;

  absl::Status EnqueueAllGather(const AllGatherCall& call, cudaStream_t stream) override;
  absl::Status AsyncError() override;

 private:
  struct Group {
    std::vector<int> ranks;     // world ranks in the group's order
    ncclComm_t comm = nullptr;  // null once taken out for aborting
  };
  struct CallState {
    AllGatherCall call;
    int group = 0;      // index into groups_
    int64_t steps = 0;  // enqueues so far (the enqueuing thread only)
  };
  // One enqueued all-gather, watched until it completes.
  struct Pending {
    int call = 0;      // index into calls_
    int64_t step = 0;  // counted from 1 per call
    cudaEvent_t start = nullptr, done = nullptr;
    bool started = false;  // start has completed
    std::chrono::steady_clock::time_point started_at;
  };

  NcclCommunicator() = default;
  // With mu_ held: a pooled event, or a new one.
  absl::StatusOr<cudaEvent_t> TakeEvent();
  absl::Status Launch(const CallState& state, cudaStream_t stream, cudaEvent_t start,
                      cudaEvent_t done);
  void WatchdogMain();
  // With mu_ held: the first error among the pending collectives and the
  // communicators, or OK.
  absl::Status Poll();
  // With mu_ held, once, on the first error: records `status`, sets failed_,
  // forgets the pending collectives, and takes every communicator out of
  // groups_, returning them for the caller to abort after releasing mu_.
  std::vector<ncclComm_t> Fail(const absl::Status& status);

  int device_ = 0;
  std::chrono::seconds timeout_{0};
  std::vector<Group> groups_;  // comm taken out for aborting only with mu_ held
  std::vector<CallState> calls_;
  RegisteredCalls registered_;  // calls_[i].call is registered at index i

  // Also keeps NCCL calls of the two threads apart; the aborts alone run
  // without it, on communicators that Fail took out of groups_.
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Pending> pending_;           // guarded by mu_, in enqueue order
  std::vector<cudaEvent_t> free_events_;  // guarded by mu_
  std::vector<cudaEvent_t> all_events_;   // guarded by mu_; destroyed by ~
  bool stopping_ = false;                 // guarded by mu_
  bool failed_ = false;                   // guarded by mu_
  absl::Status error_;                    // guarded by mu_: the first error
  std::thread watchdog_;
};

}  // namespace zosched
