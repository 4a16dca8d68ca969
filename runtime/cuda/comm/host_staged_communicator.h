// Collectives for ranks that share a GPU (NCCL refuses two ranks on one):
// each all-gather goes through pinned host memory and MPI, driven by a
// communicator thread, while the CUDA stream waits on the device.
//
// How one all-gather runs. EnqueueAllGather enqueues on the caller's stream,
// and returns at once:
//   1. cudaMemcpyAsync D2H of this rank's chunk into the pinned staging
//      buffer (one for all calls, of the largest call's group.size() chunks,
//      allocated once at Create);
//   2. cudaEventRecord of a "ready" event, then pushes {call, generation k,
//      event} to the communicator thread's queue (k counts this call's
//      enqueues from 1, so it increases across steps);
//   3. a one-thread wait kernel (wait_flag.h) that spins until the call's
//      flag word, in mapped pinned host memory, reaches k (or the abort
//      value);
//   4. cudaMemcpyAsync H2D of the whole gathered staging buffer into
//      device_recv.
// The communicator thread takes the queue in order: cudaEventSynchronize
// (ready) (the chunk is in staging), MpiCollectives::AllGather in place on
// the staging buffer, then a release store of k to the flag, which the
// spinning kernel sees over PCIe. Each queue entry has its own ready event,
// taken from a pool and given back once the thread has consumed it: an event
// is never re-recorded before its last record was waited for
// (cudaEventSynchronize waits for the latest record only), however many
// steps the host enqueues ahead.
//
// One staging buffer serves every call because all of them run on one
// stream, in enqueue order, and the thread takes them in that order too.
// Call i's H2D copy, the last reader of staging for call i, comes before
// call i+1's D2H copy on the stream, and call i+1's all-gather starts only
// once call i+1's ready event (recorded behind that D2H copy) has completed;
// call i's all-gather has returned before its flag is stored, so before
// call i's H2D copy and call i+1's D2H copy run. So no two calls ever use
// staging at once (until an error: see below).
//
// After the first error (a timeout, an MPI or CUDA error) the thread records
// it, sets every flag to kWaitFlagAbort (so that every pending and later wait
// kernel returns at once and the streams drain, with recv unspecified), and
// keeps consuming the queue without MPI. A timed-out all-gather may still
// write into staging then, under later calls' copies.
//
// Requirements on the caller:
// - one host thread at a time calls EnqueueAllGather (the device's executor
//   thread), with the device of Create current;
// - every enqueue is on one stream, that of the first (the ordering above
//   rests on it; EnqueueAllGather refuses another stream);
// - MPI was initialised with MPI_THREAD_MULTIPLE (the communicator thread
//   calls MPI while other threads may), which Create checks.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/cuda/comm/device_communicator.h"
#include "runtime/cuda/comm/registered_calls.h"
#include "runtime/mpi_world.h"

namespace zosched {

class HostStagedCommunicator : public DeviceCommunicator {
 public:
  // `calls`: every all-gather this device runs (each op once, not once per
  // step); the pinned staging buffer they share (the largest group.size() *
  // chunk_bytes among them) is allocated here with cudaHostAlloc, once.
  // `mpi` must have a communicator for every call's group, outlives this,
  // and is used only by the communicator thread while this lives; its
  // timeout bounds each collective. Call with the device of the calls'
  // buffers current. Errors: InvalidArgument for a malformed call or a
  // repeated op_id, FailedPrecondition if MPI lacks MPI_THREAD_MULTIPLE,
  // Internal for CUDA errors.
  static absl::StatusOr<std::unique_ptr<HostStagedCommunicator>> Create(
      const std::vector<AllGatherCall>& calls, MpiCollectives* mpi);

  // Lets the communicator thread finish the queue (each pending collective
  // runs, or ends at once after an error), waits until the device has
  // finished with the staging and flag memory, then frees it. After an error
  // the staging memory is left allocated: a timed-out MPI all-gather cannot
  // be cancelled and may still write into it when a late rank arrives.
  ~HostStagedCommunicator() override;

  // As DeviceCommunicator's, and FailedPrecondition when `stream` is not the
  // stream of the first enqueue (see the file comment).
  absl::Status EnqueueAllGather(const AllGatherCall& call, cudaStream_t stream) override;
  absl::Status AsyncError() override;

 private:
  // One registered call and its enqueue count.
  struct CallState {
    AllGatherCall call;
    uint32_t generation = 0;  // enqueues so far (host thread only)
  };
  // One enqueued all-gather, waiting for the communicator thread.
  struct Pending {
    int call = 0;  // index into calls_
    uint32_t generation = 0;
    cudaEvent_t ready = nullptr;
  };

  HostStagedCommunicator() = default;
  void ThreadMain();
  // Runs one pending all-gather; after the first error only releases it.
  void Process(const Pending& pending);
  absl::Status Gather(const Pending& pending);

  int device_ = 0;
  MpiCollectives* mpi_ = nullptr;
  std::vector<CallState> calls_;
  RegisteredCalls registered_;  // calls_[i].call is registered at index i
  // Pinned, the largest group.size() * chunk_bytes among calls_; null when
  // there are no calls.
  char* staging_ = nullptr;
  cudaEvent_t done_ = nullptr;          // recorded after each H2D (for the destructor)
  std::optional<cudaStream_t> stream_;  // of the first enqueue (host thread only)
  // One flag word per call, in mapped pinned host memory: the last generation
  // gathered, or kWaitFlagAbort after an error. Written by the communicator
  // thread only.
  uint32_t* flags_host_ = nullptr;
  uint32_t* flags_device_ = nullptr;
  bool failed_ = false;  // the communicator thread's; read by ~ after join

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;             // guarded by mu_
  std::vector<cudaEvent_t> free_events_;  // guarded by mu_
  std::vector<cudaEvent_t> all_events_;   // guarded by mu_; destroyed by ~
  bool stopping_ = false;                 // guarded by mu_
  absl::Status error_;                    // guarded by mu_: the first error
  std::thread thread_;
};

}  // namespace zosched
