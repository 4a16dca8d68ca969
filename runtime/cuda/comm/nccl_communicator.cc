#include "runtime/cuda/comm/nccl_communicator.h"

#include <mpi.h>

#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/gpu_check.h"

namespace zosched {
namespace {

// How often the watchdog looks at pending collectives: bounds how late it
// sees a timeout or an error, and how long a completed collective's events
// stay out of the pool.
constexpr std::chrono::milliseconds kPollInterval(1);

// ncclCommAbort on every one of `comms` at once, one thread each (NCCL
// allows calls on distinct communicators from distinct threads), and waits
// for them all: an abort waits for its communicator's kernels, which may sit
// on the collective stream behind another communicator's stuck kernel that
// only that one's abort releases, so aborting them in turn could wait for
// ever. The caller makes sure that no other NCCL call runs on them
// meanwhile (NCCL requires that of ncclCommAbort).
void AbortAtOnce(const std::vector<ncclComm_t>& comms, int device) {
  std::vector<std::thread> aborts;
  for (ncclComm_t comm : comms) {
    aborts.emplace_back([comm, device] {
      cudaSetDevice(device);  // the current device is per thread
      ncclCommAbort(comm);
    });
  }
  for (std::thread& abort : aborts) abort.join();
}

absl::Status MpiError(int code, const std::string& what) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return absl::InternalError(absl::StrFormat("%s failed: %s", what, std::string(text, length)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<NcclCommunicator>> NcclCommunicator::Create(
    const std::vector<AllGatherCall>& calls, MpiCollectives* mpi, std::chrono::seconds timeout) {
  if (mpi == nullptr) return absl::InvalidArgumentError("NcclCommunicator needs MPI");
  if (timeout.count() <= 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the collective timeout must be positive, not %d s", timeout.count()));
  }
  // Before the first NCCL call of the process, which reads its parameters
  // once (see the header).
  setenv("NCCL_RUNTIME_CONNECT", "0", /*overwrite=*/0);

  // The destructor releases whatever was made when a later step fails.
  std::unique_ptr<NcclCommunicator> c(new NcclCommunicator());
  c->timeout_ = timeout;
  GPU_RETURN_IF_ERROR(cudaGetDevice(&c->device_));
  absl::StatusOr<RegisteredCalls> registered =
      RegisteredCalls::Register(calls, RegisteredCalls::ChunkLimit::kPositive);
  if (!registered.ok()) return registered.status();
  c->registered_ = *std::move(registered);
  // Each distinct group and this rank's position in it; a std::map, so that
  // every rank initialises the groups in the same (sorted) order.
  std::map<std::vector<int>, int> position;
  for (const AllGatherCall& call : calls) {
    const auto [it, added] = position.emplace(call.group, call.rank_in_group);
    if (!added && it->second != call.rank_in_group) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "all-gather %s: this rank is at position %d of ranks %s, but at %d in another call",
          call.label, call.rank_in_group, absl::StrJoin(call.group, ","), it->second));
    }
    c->calls_.push_back(CallState{call, 0, 0});
  }
  for (const auto& [ranks, me] : position) {
    const int size = static_cast<int>(ranks.size());
    const std::string name = absl::StrJoin(ranks, ",");
    absl::StatusOr<MPI_Comm> comm = mpi->Comm(ranks);
    if (!comm.ok()) return comm.status();
    int mpi_rank = -1, mpi_size = 0;
    MPI_Comm_rank(*comm, &mpi_rank);
    MPI_Comm_size(*comm, &mpi_size);
    if (mpi_rank != me || mpi_size != size) {
      return absl::InternalError(absl::StrFormat(
          "the MPI communicator of ranks %s has this rank at %d of %d; the group at %d of %d",
          name, mpi_rank, mpi_size, me, size));
    }
    ncclUniqueId id{};
    if (me == 0) GPU_RETURN_IF_ERROR(ncclGetUniqueId(&id));
    if (const int code = MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, *comm); code != MPI_SUCCESS) {
      return MpiError(code, "MPI_Bcast of the NCCL id of ranks " + name);
    }
    ncclComm_t nccl = nullptr;
    GPU_RETURN_IF_ERROR(ncclCommInitRank(&nccl, size, id, me));
    c->groups_.push_back(Group{ranks, nccl});
  }
  for (CallState& state : c->calls_) {
    for (size_t g = 0; g < c->groups_.size(); ++g) {
      if (c->groups_[g].ranks == state.call.group) state.group = static_cast<int>(g);
    }
  }
  c->watchdog_ = std::thread(&NcclCommunicator::WatchdogMain, c.get());
  return c;
}

NcclCommunicator::~NcclCommunicator() {
  if (watchdog_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    // Also waits for the aborts, which the watchdog runs and joins.
    watchdog_.join();
  }
  // Nothing is pending now: every collective completed, or all were aborted
  // (and their communicators taken out of groups_).
  for (Group& group : groups_) {
    if (group.comm != nullptr) ncclCommDestroy(group.comm);
  }
  // Events of collectives forgotten after an abort may still be recorded;
  // CUDA releases those once they complete.
  for (cudaEvent_t event : all_events_) cudaEventDestroy(event);
}

absl::StatusOr<cudaEvent_t> NcclCommunicator::TakeEvent() {
  if (!free_events_.empty()) {
    cudaEvent_t event = free_events_.back();
    free_events_.pop_back();
    return event;
  }
  cudaEvent_t event = nullptr;
  GPU_RETURN_IF_ERROR(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  all_events_.push_back(event);
  return event;
}

absl::Status NcclCommunicator::Launch(const CallState& state, cudaStream_t stream,
                                      cudaEvent_t start, cudaEvent_t done) {
  const AllGatherCall& call = state.call;
  char* mine = call.device_recv + call.rank_in_group * call.chunk_bytes;
  GPU_RETURN_IF_ERROR(cudaEventRecord(start, stream));
  GPU_RETURN_IF_ERROR(ncclAllGather(mine, call.device_recv, static_cast<size_t>(call.chunk_bytes),
                                    ncclInt8, groups_[state.group].comm, stream));
  GPU_RETURN_IF_ERROR(cudaEventRecord(done, stream));
  return absl::OkStatus();
}

absl::Status NcclCommunicator::EnqueueAllGather(const AllGatherCall& call, cudaStream_t stream) {
  const absl::StatusOr<int> found = registered_.IndexOf(call);
  if (!found.ok()) return found.status();
  const int index = *found;
  CallState& state = calls_[index];
  // Held across the NCCL call: the watchdog must not take the communicator
  // out for aborting while it runs.
  std::lock_guard<std::mutex> lock(mu_);
  // After an error the collective completes at once, without data: nothing
  // is enqueued (the communicators are being aborted, or gone).
  if (failed_) return absl::OkStatus();
  absl::StatusOr<cudaEvent_t> start = TakeEvent();
  if (!start.ok()) return start.status();
  absl::StatusOr<cudaEvent_t> done = TakeEvent();
  if (!done.ok()) {
    free_events_.push_back(*start);
    return done.status();
  }
  if (absl::Status s = Launch(state, stream, *start, *done); !s.ok()) {
    free_events_.push_back(*start);
    free_events_.push_back(*done);
    return absl::Status(s.code(), absl::StrFormat("all-gather %s: %s", call.label, s.message()));
  }
  pending_.push_back(Pending{index, ++state.steps, *start, *done});
  wake_.notify_all();
  return absl::OkStatus();
}

absl::Status NcclCommunicator::AsyncError() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void NcclCommunicator::WatchdogMain() {
  // CUDA's current device is per thread; the events live on device_.
  cudaSetDevice(device_);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (pending_.empty()) {
      if (stopping_) return;
      wake_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      continue;
    }
    const absl::Status error = Poll();
    if (!error.ok()) {
      const std::vector<ncclComm_t> comms = Fail(error);
      // Not under mu_: AsyncError reports the error, and EnqueueAllGather
      // returns, while the aborts run (however long they take).
      lock.unlock();
      AbortAtOnce(comms, device_);
      lock.lock();
      continue;
    }
    if (!pending_.empty()) wake_.wait_for(lock, kPollInterval);
  }
}

absl::Status NcclCommunicator::Poll() {
  const auto now = std::chrono::steady_clock::now();
  // NCCL's own errors (a network failure, a peer that died).
  for (size_t g = 0; g < groups_.size(); ++g) {
    ncclResult_t async = ncclSuccess;
    const ncclResult_t result = ncclCommGetAsyncError(groups_[g].comm, &async);
    if (result != ncclSuccess) async = result;
    if (async == ncclSuccess || async == ncclInProgress) continue;
    const absl::Status nccl = gpu_check_internal::ToStatus(
        async, "ncclCommGetAsyncError", __FILE__, __LINE__);
    std::string what = absl::StrFormat("the NCCL communicator of ranks %s",
                                       absl::StrJoin(groups_[g].ranks, ","));
    for (const Pending& p : pending_) {  // name its oldest pending collective
      if (calls_[p.call].group != static_cast<int>(g)) continue;
      what = absl::StrFormat("%s, step %d of this op", calls_[p.call].call.label, p.step);
      break;
    }
    return absl::InternalError(absl::StrFormat(
        "%s: %s; every NCCL communicator of this rank was aborted", what, nccl.message()));
  }
  for (auto it = pending_.begin(); it != pending_.end();) {
    Pending& p = *it;
    const AllGatherCall& call = calls_[p.call].call;
    const auto cuda_error = [&](cudaError_t e) {
      return absl::InternalError(absl::StrFormat(
          "%s, step %d of this op: CUDA error %s while waiting for it: %s; every NCCL "
          "communicator of this rank was aborted",
          call.label, p.step, cudaGetErrorName(e), cudaGetErrorString(e)));
    };
    if (!p.started) {
      const cudaError_t e = cudaEventQuery(p.start);
      if (e == cudaSuccess) {
        p.started = true;
        p.started_at = now;
      } else if (e != cudaErrorNotReady) {
        return cuda_error(e);
      }
    }
    if (p.started) {
      const cudaError_t e = cudaEventQuery(p.done);
      if (e == cudaSuccess) {
        free_events_.push_back(p.start);
        free_events_.push_back(p.done);
        it = pending_.erase(it);
        continue;
      }
      if (e != cudaErrorNotReady) return cuda_error(e);
      if (now - p.started_at > timeout_) {
        return absl::DeadlineExceededError(absl::StrFormat(
            "%s, step %d of this op: did not complete within %d s (NCCL all-gather among "
            "ranks %s: a participant died or never reached it); every NCCL communicator of "
            "this rank was aborted",
            call.label, p.step, timeout_.count(), absl::StrJoin(call.group, ",")));
      }
    }
    ++it;
  }
  return absl::OkStatus();
}

std::vector<ncclComm_t> NcclCommunicator::Fail(const absl::Status& status) {
  failed_ = true;
  error_ = status;
  // Their events are never re-recorded (they stay out of the pool).
  pending_.clear();
  // Taken out under mu_, with failed_ set, no NCCL call but the aborts runs
  // on them from now on: EnqueueAllGather holds mu_ across its NCCL call and
  // sees failed_ once it gets mu_; Poll runs only while collectives are
  // pending, and none are from now on; the destructor destroys only what is
  // left in groups_. So the caller aborts them without mu_.
  std::vector<ncclComm_t> comms;
  for (Group& group : groups_) {
    comms.push_back(group.comm);
    group.comm = nullptr;
  }
  return comms;
}

}  // namespace zosched
