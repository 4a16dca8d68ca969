// HostStagedCommunicator on real MPI processes that share GPU 0
// (host_staged_communicator_gpu_test.sh runs this under mpirun with 2 and 4
// ranks):
// - 25 steps of two alternating all-gathers (all ranks in order, and in
//   reverse order with a larger odd chunk), 50 in all, enqueued back to back
//   on one stream with no synchronisation between them; before each, the
//   rank's chunk gets a pattern of (call, rank, step), after each the whole
//   buffer is copied aside on the device; one synchronisation at the end,
//   then every chunk of every step is checked byte for byte;
// - the enqueuing never waits for the other ranks: the last rank starts 2 s
//   late, and the others finish enqueuing well before and find their stream
//   still busy;
// - a rank that stops taking part (rank 1 never enqueues the collective, as
//   if it had died) makes the others report DeadlineExceeded naming the
//   call's label and step within the 3 s timeout, and their streams drain.
//   (A rank that really exits makes mpirun kill the job; here rank 1 posts
//   its part late, after the others have reported, so that MPI ends cleanly.)
// Prints "no GPU: skipped" and exits 0 when no GPU is visible, else
// "rank R: ok" when every check passed; exits 1 at the first failure.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "runtime/cuda/comm/gpu_check_util.h"
#include "runtime/cuda/comm/host_staged_communicator.h"
#include "runtime/mpi_world.h"

namespace zosched {
namespace {

using gpu_check::Check;
using gpu_check::CheckCuda;
using gpu_check::CheckOk;
using gpu_check::g_rank;
using gpu_check::Pattern;
using gpu_check::SecondsSince;

// One all-gather of the check and its device memory.
struct Gather {
  AllGatherCall call;
  char* patterns = nullptr;  // this rank's chunk at each step
  char* history = nullptr;   // the gathered buffer after each step
};

void Gathers(int world) {
  constexpr int kSteps = 25;
  std::vector<int> forward, reverse;
  for (int r = 0; r < world; ++r) forward.push_back(r);
  reverse.assign(forward.rbegin(), forward.rend());
  absl::StatusOr<std::unique_ptr<MpiCollectives>> mpi =
      MpiCollectives::Create({forward, reverse}, std::chrono::seconds(60));
  CheckOk(mpi.status(), "MpiCollectives::Create");

  Gather gathers[2];
  gathers[0].call = {1, absl::StrFormat("device %d op 1 'allgather forward'", g_rank), forward,
                     g_rank, nullptr, 1000};
  gathers[1].call = {2, absl::StrFormat("device %d op 2 'allgather reverse'", g_rank), reverse,
                     world - 1 - g_rank, nullptr, 65536 + 8};
  for (int c = 0; c < 2; ++c) {
    Gather& g = gathers[c];
    const int64_t chunk = g.call.chunk_bytes;
    const int64_t whole = world * chunk;
    CheckCuda(cudaMalloc(&g.call.device_recv, whole), "cudaMalloc");
    CheckCuda(cudaMemset(g.call.device_recv, 0, whole), "cudaMemset");
    CheckCuda(cudaMalloc(&g.patterns, kSteps * chunk), "cudaMalloc");
    CheckCuda(cudaMalloc(&g.history, kSteps * whole), "cudaMalloc");
    std::vector<char> patterns(kSteps * chunk);
    for (int s = 0; s < kSteps; ++s) {
      for (int64_t i = 0; i < chunk; ++i) patterns[s * chunk + i] = Pattern(c, g_rank, s, i);
    }
    CheckCuda(cudaMemcpy(g.patterns, patterns.data(), patterns.size(), cudaMemcpyHostToDevice),
              "cudaMemcpy");
  }
  absl::StatusOr<std::unique_ptr<HostStagedCommunicator>> comm =
      HostStagedCommunicator::Create({gathers[0].call, gathers[1].call}, mpi->get());
  CheckOk(comm.status(), "HostStagedCommunicator::Create");
  cudaStream_t stream;
  CheckCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

  CheckOk(SleepingBarrier(std::chrono::microseconds(100)), "SleepingBarrier");
  const bool late = g_rank == world - 1;
  if (late) std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < kSteps; ++s) {
    for (Gather& g : gathers) {
      const int64_t chunk = g.call.chunk_bytes;
      const int64_t whole = world * chunk;
      CheckCuda(cudaMemcpyAsync(g.call.device_recv + g.call.rank_in_group * chunk,
                                g.patterns + s * chunk, chunk, cudaMemcpyDeviceToDevice, stream),
                "cudaMemcpyAsync of the pattern");
      CheckOk((*comm)->EnqueueAllGather(g.call, stream), "EnqueueAllGather");
      CheckCuda(cudaMemcpyAsync(g.history + s * whole, g.call.device_recv, whole,
                                cudaMemcpyDeviceToDevice, stream),
                "cudaMemcpyAsync to the history");
    }
  }
  const double enqueued = SecondsSince(start);
  if (!late) {
    // No collective can complete before the late rank arrives.
    Check(enqueued < 1.0, absl::StrFormat("enqueuing took %.3f s: it waited", enqueued));
    Check(cudaStreamQuery(stream) == cudaErrorNotReady,
          "the stream is still waiting for the late rank after the enqueues");
  }
  CheckCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  CheckOk((*comm)->AsyncError(), "AsyncError");

  for (int c = 0; c < 2; ++c) {
    gpu_check::CheckHistory(gathers[c].call, c, gathers[c].history, kSteps);
  }
  comm->reset();
  CheckCuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
  for (Gather& g : gathers) {
    cudaFree(g.call.device_recv);
    cudaFree(g.patterns);
    cudaFree(g.history);
  }
}

void MissingRank(int world) {
  constexpr int kTimeoutSeconds = 3;
  std::vector<int> all;
  for (int r = 0; r < world; ++r) all.push_back(r);
  absl::StatusOr<std::unique_ptr<MpiCollectives>> mpi =
      MpiCollectives::Create({all}, std::chrono::seconds(kTimeoutSeconds));
  CheckOk(mpi.status(), "MpiCollectives::Create");
  constexpr int64_t kChunk = 256;
  const std::string label = absl::StrFormat("device %d op 7 'allgather missing'", g_rank);
  AllGatherCall call{7, label, all, g_rank, nullptr, kChunk};
  CheckCuda(cudaMalloc(&call.device_recv, world * kChunk), "cudaMalloc");
  absl::StatusOr<std::unique_ptr<HostStagedCommunicator>> comm =
      HostStagedCommunicator::Create({call}, mpi->get());
  CheckOk(comm.status(), "HostStagedCommunicator::Create");

  if (g_rank != 1) {
    cudaStream_t stream;
    CheckCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    const auto start = std::chrono::steady_clock::now();
    for (int step = 0; step < 5; ++step) {
      CheckOk((*comm)->EnqueueAllGather(call, stream), "EnqueueAllGather");
    }
    absl::Status error;
    while ((error = (*comm)->AsyncError()).ok() && SecondsSince(start) < 30) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const double waited = SecondsSince(start);
    Check(absl::IsDeadlineExceeded(error),
          "a missing rank is DeadlineExceeded, got: " + error.ToString());
    Check(error.message().find(label + ", step 1 of this op: all-gather among ranks") !=
              std::string::npos,
          "the error names the call and its step: " + error.ToString());
    Check(waited >= kTimeoutSeconds && waited < kTimeoutSeconds + 5,
          absl::StrFormat("the error came after the %d s timeout, not %.1f s", kTimeoutSeconds,
                          waited));
    // Every pending collective completes at once: the stream drains.
    cudaError_t drained = cudaErrorNotReady;
    while ((drained = cudaStreamQuery(stream)) == cudaErrorNotReady && SecondsSince(start) < 60) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CheckCuda(drained, "the stream drains after the error");
    // A collective enqueued after the error completes at once too.
    CheckOk((*comm)->EnqueueAllGather(call, stream), "EnqueueAllGather after the error");
    CheckCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize after the error");
    Check((*comm)->AsyncError().message() == error.message(), "the first error stays");
    CheckCuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
  }
  comm->reset();
  cudaFree(call.device_recv);
  // Everyone has reported; rank 1 now posts its part of the timed-out
  // all-gather, which completes while the others drive MPI in the barrier.
  CheckOk(SleepingBarrier(std::chrono::microseconds(100)), "SleepingBarrier");
  if (g_rank == 1) {
    std::vector<char> buffer(world * kChunk);
    CheckOk((*mpi)->AllGather(all, buffer.data(), kChunk), "the late AllGather");
  }
  CheckOk(SleepingBarrier(std::chrono::microseconds(100)), "SleepingBarrier");
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU: skipped\n");
    return 0;
  }
  int world = 0;
  const absl::Status init = zosched::InitMpi(&argc, &argv, &zosched::g_rank, &world);
  if (!init.ok()) {
    std::fprintf(stderr, "host_staged_communicator_gpu_check: %s\n",
                 std::string(init.message()).c_str());
    return 1;
  }
  if (world < 2) zosched::Check(false, "needs at least 2 ranks");
  zosched::CheckCuda(cudaSetDevice(0), "cudaSetDevice(0)");  // every rank shares GPU 0
  zosched::Gathers(world);
  zosched::MissingRank(world);
  std::printf("rank %d: ok\n", zosched::g_rank);
  MPI_Finalize();
  return 0;
}
