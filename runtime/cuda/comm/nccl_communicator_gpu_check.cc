// NcclCommunicator and GroupsHaveDistinctGpus on real MPI processes
// (nccl_communicator_gpu_test.sh runs this under mpirun with 2 ranks).
//
// With one GPU or more (every rank on GPU 0 first):
// - GroupsHaveDistinctGpus: false for a group of all ranks on one GPU, true
//   for one group per rank and for no groups, the same answer on every rank;
// - each rank alone in its own NCCL communicator (one-rank groups may share
//   a GPU): 20 steps of two all-gathers, enqueued back to back with no
//   synchronisation, the rank's chunk intact after each.
// With at least as many GPUs as ranks (rank r on GPU r):
// - GroupsHaveDistinctGpus is true for the group of all ranks;
// - 20 steps of two alternating all-gathers (all ranks in order, and in
//   reverse order with a larger odd chunk), 40 in all, enqueued back to back
//   on one stream; before each the rank's chunk gets a pattern of (call,
//   rank, step), after each the whole buffer is copied aside on the device;
//   one synchronisation at the end, then every chunk of every step is
//   checked byte for byte. The last rank starts 2 s late: the others finish
//   enqueuing well before, and find their stream still busy (the enqueue
//   never waits for other ranks);
// - a rank that stops taking part (rank 1 never enqueues) makes the others
//   report DeadlineExceeded naming the call's label and step within the 3 s
//   timeout, after which their streams drain and later enqueues complete at
//   once.
// Otherwise rank 0 prints "fewer than 2 GPUs: skipped" for that part. With no
// GPU it prints "fewer than 2 GPUs: skipped" and exits 0 without MPI. Prints
// "rank R: ok" when every check that ran passed; exits 1 at the first
// failure.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "runtime/cuda/comm/gpu_identity_gather.h"
#include "runtime/cuda/comm/gpu_check_util.h"
#include "runtime/cuda/comm/nccl_communicator.h"
#include "runtime/mpi_world.h"

namespace zosched {
namespace {

using gpu_check::Check;
using gpu_check::CheckCuda;
using gpu_check::CheckOk;
using gpu_check::g_rank;
using gpu_check::Pattern;
using gpu_check::SecondsSince;

void ExpectDistinct(const std::vector<std::vector<int>>& groups, int gpu, bool expected,
                    const std::string& what) {
  absl::StatusOr<bool> distinct = GroupsHaveDistinctGpus(groups, gpu);
  CheckOk(distinct.status(), "GroupsHaveDistinctGpus " + what);
  Check(*distinct == expected,
        absl::StrFormat("GroupsHaveDistinctGpus %s is %d, expected %d", what, *distinct, expected));
}

// One all-gather of the check and its device memory.
struct Gather {
  AllGatherCall call;
  char* patterns = nullptr;  // this rank's chunk at each step
  char* history = nullptr;   // the gathered buffer after each step
};

// 20 steps of two all-gathers among `first` and `second` (groups that hold
// this rank; `mpi_groups`, the same on every rank, holds them), back to back.
// `late_rank` (or -1) starts enqueuing 2 s after the others.
void BackToBack(const std::vector<std::vector<int>>& mpi_groups, const std::vector<int>& first,
                const std::vector<int>& second, int late_rank) {
  constexpr int kSteps = 20;
  absl::StatusOr<std::unique_ptr<MpiCollectives>> mpi =
      MpiCollectives::Create(mpi_groups, std::chrono::seconds(60));
  CheckOk(mpi.status(), "MpiCollectives::Create");
  const auto position = [](const std::vector<int>& group) {
    for (int p = 0; p < static_cast<int>(group.size()); ++p) {
      if (group[p] == g_rank) return p;
    }
    return -1;
  };
  Gather gathers[2];
  gathers[0].call = {1, absl::StrFormat("device %d op 1 'allgather first'", g_rank), first,
                     position(first), nullptr, 1000};
  gathers[1].call = {2, absl::StrFormat("device %d op 2 'allgather second'", g_rank), second,
                     position(second), nullptr, 65536 + 8};
  for (int c = 0; c < 2; ++c) {
    Gather& g = gathers[c];
    const int64_t chunk = g.call.chunk_bytes;
    const int64_t whole = g.call.group.size() * chunk;
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
  absl::StatusOr<std::unique_ptr<NcclCommunicator>> comm = NcclCommunicator::Create(
      {gathers[0].call, gathers[1].call}, mpi->get(), std::chrono::seconds(60));
  CheckOk(comm.status(), "NcclCommunicator::Create");
  cudaStream_t stream;
  CheckCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

  CheckOk(SleepingBarrier(std::chrono::microseconds(100)), "SleepingBarrier");
  if (g_rank == late_rank) std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < kSteps; ++s) {
    for (Gather& g : gathers) {
      const int64_t chunk = g.call.chunk_bytes;
      const int64_t whole = g.call.group.size() * chunk;
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
  if (late_rank >= 0 && g_rank != late_rank) {
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
      MpiCollectives::Create({all}, std::chrono::seconds(60));
  CheckOk(mpi.status(), "MpiCollectives::Create");
  constexpr int64_t kChunk = 256;
  const std::string label = absl::StrFormat("device %d op 7 'allgather missing'", g_rank);
  AllGatherCall call{7, label, all, g_rank, nullptr, kChunk};
  CheckCuda(cudaMalloc(&call.device_recv, world * kChunk), "cudaMalloc");
  absl::StatusOr<std::unique_ptr<NcclCommunicator>> comm =
      NcclCommunicator::Create({call}, mpi->get(), std::chrono::seconds(kTimeoutSeconds));
  CheckOk(comm.status(), "NcclCommunicator::Create");

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
    Check(error.message().find(label + ", step 1 of this op: did not complete within 3 s") == 0,
          "the error names the call and its step: " + error.ToString());
    Check(waited >= kTimeoutSeconds && waited < kTimeoutSeconds + 5,
          absl::StrFormat("the error came after the %d s timeout, not %.1f s", kTimeoutSeconds,
                          waited));
    // The communicator was aborted: every pending collective ends, the
    // stream drains.
    cudaError_t drained = cudaErrorNotReady;
    while ((drained = cudaStreamQuery(stream)) == cudaErrorNotReady && SecondsSince(start) < 60) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CheckCuda(drained, "the stream drains after the abort");
    // A collective enqueued after the error completes at once too.
    CheckOk((*comm)->EnqueueAllGather(call, stream), "EnqueueAllGather after the error");
    CheckCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize after the error");
    Check((*comm)->AsyncError().message() == error.message(), "the first error stays");
    CheckCuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
  }
  // Everyone has reported before rank 1 lets its communicator go.
  CheckOk(SleepingBarrier(std::chrono::microseconds(100)), "SleepingBarrier");
  comm->reset();
  cudaFree(call.device_recv);
  CheckOk(SleepingBarrier(std::chrono::microseconds(100)), "SleepingBarrier");
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  using zosched::g_rank;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("fewer than 2 GPUs: skipped\n");
    return 0;
  }
  int world = 0;
  const absl::Status init = zosched::InitMpi(&argc, &argv, &g_rank, &world);
  if (!init.ok()) {
    std::fprintf(stderr, "nccl_communicator_gpu_check: %s\n", std::string(init.message()).c_str());
    return 1;
  }
  if (world < 2) zosched::Check(false, "needs at least 2 ranks");
  std::vector<int> all;
  std::vector<std::vector<int>> singletons;
  for (int r = 0; r < world; ++r) {
    all.push_back(r);
    singletons.push_back({r});
  }

  // Every rank on GPU 0.
  zosched::CheckCuda(cudaSetDevice(0), "cudaSetDevice(0)");
  zosched::ExpectDistinct({all}, 0, false, "(all ranks on GPU 0)");
  zosched::ExpectDistinct(singletons, 0, true, "(one group per rank, all on GPU 0)");
  zosched::ExpectDistinct({}, 0, true, "(no groups)");
  zosched::BackToBack(singletons, {g_rank}, {g_rank}, /*late_rank=*/-1);

  if (devices >= world) {
    // Rank r on GPU r.
    zosched::CheckCuda(cudaSetDevice(g_rank), "cudaSetDevice(rank)");
    zosched::ExpectDistinct({all}, g_rank, true, "(each rank on its own GPU)");
    const std::vector<int> reverse(all.rbegin(), all.rend());
    zosched::BackToBack({all, reverse}, all, reverse, /*late_rank=*/world - 1);
    zosched::MissingRank(world);
  } else if (g_rank == 0) {
    std::printf("fewer than 2 GPUs: skipped\n");
  }
  std::printf("rank %d: ok\n", g_rank);
  MPI_Finalize();
  return 0;
}
