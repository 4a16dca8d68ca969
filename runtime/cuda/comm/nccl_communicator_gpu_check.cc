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
// GPU or no NVIDIA driver it prints "fewer than 2 GPUs: skipped" and exits 0
// without MPI. Prints "rank R: ok" when every check that ran passed; exits 1
// at the first failure, and where CUDA cannot tell whether there is a GPU
// (VisibleGpusOrExit).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "runtime/cuda/comm/gpu_identity_gather.h"
#include "runtime/cuda/comm/gpu_check_util.h"
#include "runtime/cuda/comm/nccl_communicator.h"
#include "runtime/cuda/device_test_util.h"
#include "runtime/mpi_world.h"
#include "runtime/rank_check.h"

namespace zosched {
namespace {

using gpu_check::Check;
using gpu_check::CheckCuda;
using gpu_check::CheckOk;
using gpu_check::g_rank;

void ExpectDistinct(const std::vector<std::vector<int>>& groups, int gpu, bool expected,
                    const std::string& what) {
  absl::StatusOr<bool> distinct = GroupsHaveDistinctGpus(groups, gpu);
  CheckOk(distinct.status(), "GroupsHaveDistinctGpus " + what);
  Check(*distinct == expected,
        absl::StrFormat("GroupsHaveDistinctGpus %s is %d, expected %d", what, *distinct, expected));
}

// 20 steps of two all-gathers among `first` and `second` (groups that hold
// this rank; `mpi_groups`, the same on every rank, holds them), back to back.
// `late_rank` (or -1) starts enqueuing 2 s after the others.
void BackToBack(const std::vector<std::vector<int>>& mpi_groups, const std::vector<int>& first,
                const std::vector<int>& second, int late_rank) {
  absl::StatusOr<std::unique_ptr<MpiCollectives>> mpi =
      MpiCollectives::Create(mpi_groups, std::chrono::seconds(60));
  CheckOk(mpi.status(), "MpiCollectives::Create");
  const auto position = [](const std::vector<int>& group) {
    for (int p = 0; p < static_cast<int>(group.size()); ++p) {
      if (group[p] == g_rank) return p;
    }
    return -1;
  };
  gpu_check::CheckBackToBack(
      {{1, absl::StrFormat("device %d op 1 'allgather first'", g_rank), first, position(first),
        nullptr, 1000},
       {2, absl::StrFormat("device %d op 2 'allgather second'", g_rank), second, position(second),
        nullptr, 65536 + 8}},
      /*steps=*/20, late_rank,
      [&](const std::vector<AllGatherCall>& calls) -> std::unique_ptr<DeviceCommunicator> {
        absl::StatusOr<std::unique_ptr<NcclCommunicator>> comm =
            NcclCommunicator::Create(calls, mpi->get(), std::chrono::seconds(60));
        CheckOk(comm.status(), "NcclCommunicator::Create");
        return *std::move(comm);
      });
}

void MissingRank(int world) {
  constexpr int kTimeoutSeconds = 3;
  const AllGatherCall call = gpu_check::MissingRankCall(world);
  absl::StatusOr<std::unique_ptr<MpiCollectives>> mpi =
      MpiCollectives::Create({call.group}, std::chrono::seconds(60));
  CheckOk(mpi.status(), "MpiCollectives::Create");
  absl::StatusOr<std::unique_ptr<NcclCommunicator>> comm =
      NcclCommunicator::Create({call}, mpi->get(), std::chrono::seconds(kTimeoutSeconds));
  CheckOk(comm.status(), "NcclCommunicator::Create");

  if (g_rank != 1) {
    // The communicator was aborted: every pending collective ends.
    gpu_check::CheckMissingRankReported(
        **comm, call, kTimeoutSeconds, [&](absl::string_view message) {
          return message.find(call.label + ", step 1 of this op: did not complete within 3 s") ==
                 0;
        });
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
  const int devices = zosched::VisibleGpusOrExit("nccl_communicator_gpu_check: cudaGetDeviceCount");
  if (devices == 0) {
    std::printf("fewer than 2 GPUs: skipped\n");
    return 0;
  }
  const int world = zosched::rank_check::StartRanks("nccl_communicator_gpu_check", &argc, &argv);
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
