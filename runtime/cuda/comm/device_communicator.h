// The interface through which the CUDA backend runs a schedule's
// collectives (docs/ARCHITECTURE.md, 'Runtime'): NCCL when every rank has
// its own GPU, MPI over pinned host memory when several ranks share one
// (host_staged_communicator.h). The executor's host thread enqueues a
// collective on a CUDA stream like any other op and goes on; whatever waits
// for the other ranks waits on the device or on a thread of the
// communicator, never on the host thread that enqueues.
//
// Only ALL_GATHER, in place, as the schedule IR writes it (schedule.proto,
// CollectiveOp): `recv` holds one chunk per participant, and this rank's chunk
// (its `send`) is already at its position among the participants.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace zosched {

// One all-gather op of a schedule, as resolved once at set-up.
struct AllGatherCall {
  int64_t op_id = 0;  // the schedule op's id: identifies the call
  // Names the op in errors, e.g. "device 1 op 57 'allgather block 3'".
  std::string label;
  std::vector<int> group;  // participant ranks, in the op's order
  int rank_in_group = 0;   // this rank's position in `group`
  // Device memory of group.size() chunks; this rank's chunk is at
  // rank_in_group * chunk_bytes.
  char* device_recv = nullptr;
  int64_t chunk_bytes = 0;
};

// Runs a schedule's collectives for one device's CUDA streams.
//
// EnqueueAllGather never blocks the calling thread on other ranks or on the
// GPU. Every rank must enqueue the collectives that it shares with another
// rank in the same relative order (as with MPI and NCCL), or they deadlock
// until the timeout.
class DeviceCommunicator {
 public:
  virtual ~DeviceCommunicator() = default;

  // Enqueues on `stream` the all-gather `call` (one registered when the
  // communicator was created: same op_id, group, buffer and size). Work
  // enqueued later on `stream` runs after it has completed, with every
  // participant's chunk in call.device_recv. Returns errors of the enqueue
  // itself (an unknown call, a failed CUDA launch); failures that happen
  // later are reported by AsyncError.
  virtual absl::Status EnqueueAllGather(const AllGatherCall& call, cudaStream_t stream) = 0;

  // The first error met asynchronously, or OK: a timeout (DeadlineExceeded)
  // or an MPI or CUDA error, its message naming the call's label and which
  // call of that op it was (the step, counted from 1 since set-up). After an
  // error every pending and later collective completes at once on the device
  // without data (its recv buffer is then unspecified), so that streams drain
  // and the process can report and exit instead of hanging. Thread-safe.
  virtual absl::Status AsyncError() = 0;
};

}  // namespace zosched
