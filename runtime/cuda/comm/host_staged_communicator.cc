#include "runtime/cuda/comm/host_staged_communicator.h"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/gpu_check.h"
#include "runtime/cuda/comm/wait_flag.h"

namespace zosched {
namespace {

// Events only order and signal; the communicator thread sleeps in
// cudaEventSynchronize instead of spinning on a core that ranks share.
constexpr unsigned kEventFlags = cudaEventDisableTiming | cudaEventBlockingSync;

}  // namespace

absl::StatusOr<std::unique_ptr<HostStagedCommunicator>> HostStagedCommunicator::Create(
    const std::vector<AllGatherCall>& calls, MpiCollectives* mpi) {
  if (mpi == nullptr) return absl::InvalidArgumentError("HostStagedCommunicator needs MPI");
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "MPI provides thread level %d; the host-staged communicator's thread calls MPI "
        "while others may, which needs MPI_THREAD_MULTIPLE",
        provided));
  }
  // The destructor frees whatever was allocated when a later step fails.
  std::unique_ptr<HostStagedCommunicator> c(new HostStagedCommunicator());
  c->mpi_ = mpi;
  GPU_RETURN_IF_ERROR(cudaGetDevice(&c->device_));
  absl::StatusOr<RegisteredCalls> registered =
      RegisteredCalls::Register(calls, RegisteredCalls::ChunkLimit::kMpiCount);
  if (!registered.ok()) return registered.status();
  c->registered_ = *std::move(registered);
  c->calls_.resize(calls.size());
  int64_t staging_bytes = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    const AllGatherCall& call = calls[i];
    c->calls_[i].call = call;
    staging_bytes = std::max<int64_t>(staging_bytes,
                                      static_cast<int64_t>(call.group.size()) * call.chunk_bytes);
    // Two ready events per call cover two steps in flight; the pool grows if
    // the host runs further ahead.
    for (int k = 0; k < 2; ++k) {
      cudaEvent_t event = nullptr;
      GPU_RETURN_IF_ERROR(cudaEventCreateWithFlags(&event, kEventFlags));
      c->all_events_.push_back(event);
      c->free_events_.push_back(event);
    }
  }
  if (staging_bytes > 0) {
    GPU_RETURN_IF_ERROR(
        cudaHostAlloc(reinterpret_cast<void**>(&c->staging_), staging_bytes, cudaHostAllocDefault));
  }
  GPU_RETURN_IF_ERROR(cudaEventCreateWithFlags(&c->done_, kEventFlags));
  const size_t flag_bytes = std::max<size_t>(calls.size(), 1) * sizeof(uint32_t);
  GPU_RETURN_IF_ERROR(cudaHostAlloc(reinterpret_cast<void**>(&c->flags_host_), flag_bytes,
                                    cudaHostAllocMapped));
  std::memset(c->flags_host_, 0, flag_bytes);
  GPU_RETURN_IF_ERROR(
      cudaHostGetDevicePointer(reinterpret_cast<void**>(&c->flags_device_), c->flags_host_, 0));
  c->thread_ = std::thread(&HostStagedCommunicator::ThreadMain, c.get());
  return c;
}

HostStagedCommunicator::~HostStagedCommunicator() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  // Every flag is now published (or aborted), so the last H2D, the last
  // device work that reads staging or flags, completes; it follows every
  // earlier one on the one stream, so done_'s latest record stands for all.
  if (done_ != nullptr) {
    cudaEventSynchronize(done_);
    cudaEventDestroy(done_);
  }
  for (cudaEvent_t event : all_events_) cudaEventDestroy(event);
  if (flags_host_ != nullptr) cudaFreeHost(flags_host_);
  if (failed_) return;  // staging stays allocated: see the header
  if (staging_ != nullptr) cudaFreeHost(staging_);
}

absl::Status HostStagedCommunicator::EnqueueAllGather(const AllGatherCall& call,
                                                      cudaStream_t stream) {
  const absl::StatusOr<int> found = registered_.IndexOf(call);
  if (!found.ok()) return found.status();
  const int index = *found;
  CallState& state = calls_[index];
  if (!stream_.has_value()) stream_ = stream;
  if (stream != *stream_) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "all-gather %s: enqueued on another stream than the earlier all-gathers; the "
        "host-staged communicator's all-gathers share one staging buffer and must all run "
        "on one stream",
        call.label));
  }
  if (state.generation + 1 >= kWaitFlagAbort) {
    return absl::OutOfRangeError(
        absl::StrFormat("all-gather %s: ran out of generations", call.label));
  }
  cudaEvent_t ready = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_events_.empty()) {
      ready = free_events_.back();
      free_events_.pop_back();
    }
  }
  if (ready == nullptr) {
    GPU_RETURN_IF_ERROR(cudaEventCreateWithFlags(&ready, kEventFlags));
    std::lock_guard<std::mutex> lock(mu_);
    all_events_.push_back(ready);
  }
  const int64_t chunk = state.call.chunk_bytes;
  const int64_t mine = state.call.rank_in_group * chunk;
  // Behind the previous all-gather's H2D copy on this stream: staging is free.
  GPU_RETURN_IF_ERROR(cudaMemcpyAsync(staging_ + mine, state.call.device_recv + mine, chunk,
                                      cudaMemcpyDeviceToHost, stream));
  GPU_RETURN_IF_ERROR(cudaEventRecord(ready, stream));
  // Pushed only after the record: the thread must not wait on an event that
  // does not yet stand for this chunk.
  const uint32_t generation = ++state.generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(Pending{index, generation, ready});
  }
  wake_.notify_one();
  GPU_RETURN_IF_ERROR(LaunchWaitFlag(flags_device_ + index, generation, kWaitFlagAbort, stream));
  GPU_RETURN_IF_ERROR(cudaMemcpyAsync(state.call.device_recv, staging_,
                                      state.call.group.size() * chunk, cudaMemcpyHostToDevice,
                                      stream));
  GPU_RETURN_IF_ERROR(cudaEventRecord(done_, stream));
  return absl::OkStatus();
}

absl::Status HostStagedCommunicator::AsyncError() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void HostStagedCommunicator::ThreadMain() {
  // CUDA's current device is per thread; the events live on device_. A
  // failure here shows again, with a call's label, in the first Gather.
  cudaSetDevice(device_);
  for (;;) {
    Pending pending;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and drained
      pending = queue_.front();
      queue_.pop_front();
    }
    Process(pending);
    std::lock_guard<std::mutex> lock(mu_);
    free_events_.push_back(pending.ready);
  }
}

absl::Status HostStagedCommunicator::Gather(const Pending& pending) {
  const CallState& state = calls_[pending.call];
  // The chunk is in staging, and the previous all-gather's H2D copy (before
  // it on the stream) has finished reading staging.
  GPU_RETURN_IF_ERROR(cudaEventSynchronize(pending.ready));
  return mpi_->AllGather(state.call.group, staging_, state.call.chunk_bytes);
}

void HostStagedCommunicator::Process(const Pending& pending) {
  // After an error every flag already holds kWaitFlagAbort: this pending
  // collective's wait kernel has returned or will at once.
  if (failed_) return;
  const absl::Status status = Gather(pending);
  if (status.ok()) {
    // Release: the staging bytes MPI wrote are visible before the flag
    // (the device's H2D reads them after it sees the flag).
    __atomic_store_n(&flags_host_[pending.call], pending.generation, __ATOMIC_RELEASE);
    return;
  }
  failed_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = absl::Status(status.code(),
                          absl::StrFormat("%s, step %d of this op: %s",
                                          calls_[pending.call].call.label, pending.generation,
                                          status.message()));
  }
  for (size_t i = 0; i < calls_.size(); ++i) {
    __atomic_store_n(&flags_host_[i], kWaitFlagAbort, __ATOMIC_RELEASE);
  }
}

}  // namespace zosched
