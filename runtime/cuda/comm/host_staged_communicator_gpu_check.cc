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
// Prints "no GPU: skipped" and exits 0 when there is no GPU or no NVIDIA
// driver, else "rank R: ok" when every check passed; exits 1 at the first
// failure, and where CUDA cannot tell whether there is a GPU
// (VisibleGpusOrExit).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "runtime/cuda/comm/gpu_check_util.h"
#include "runtime/cuda/comm/host_staged_communicator.h"
#include "runtime/cuda/device_test_util.h"
#include "runtime/mpi_world.h"
#include "runtime/rank_check.h"

namespace zosched {
namespace {

using gpu_check::Check;
using gpu_check::CheckCuda;
using gpu_check::CheckOk;
using gpu_check::g_rank;

void Gathers(int world) {
  std::vector<int> forward, reverse;
  for (int r = 0; r < world; ++r) forward.push_back(r);
  reverse.assign(forward.rbegin(), forward.rend());
  absl::StatusOr<std::unique_ptr<MpiCollectives>> mpi =
      MpiCollectives::Create({forward, reverse}, std::chrono::seconds(60));
  CheckOk(mpi.status(), "MpiCollectives::Create");
  gpu_check::CheckBackToBack(
      {{1, absl::StrFormat("device %d op 1 'allgather forward'", g_rank), forward, g_rank, nullptr,
        1000},
       {2, absl::StrFormat("device %d op 2 'allgather reverse'", g_rank), reverse,
        world - 1 - g_rank, nullptr, 65536 + 8}},
      /*steps=*/25, /*late_rank=*/world - 1,
      [&](const std::vector<AllGatherCall>& calls) -> std::unique_ptr<DeviceCommunicator> {
        absl::StatusOr<std::unique_ptr<HostStagedCommunicator>> comm =
            HostStagedCommunicator::Create(calls, mpi->get());
        CheckOk(comm.status(), "HostStagedCommunicator::Create");
        return *std::move(comm);
      });
}

void MissingRank(int world) {
  constexpr int kTimeoutSeconds = 3;
  const AllGatherCall call = gpu_check::MissingRankCall(world);
  absl::StatusOr<std::unique_ptr<MpiCollectives>> mpi =
      MpiCollectives::Create({call.group}, std::chrono::seconds(kTimeoutSeconds));
  CheckOk(mpi.status(), "MpiCollectives::Create");
  absl::StatusOr<std::unique_ptr<HostStagedCommunicator>> comm =
      HostStagedCommunicator::Create({call}, mpi->get());
  CheckOk(comm.status(), "HostStagedCommunicator::Create");

  if (g_rank != 1) {
    gpu_check::CheckMissingRankReported(
        **comm, call, kTimeoutSeconds, [&](absl::string_view message) {
          return message.find(call.label + ", step 1 of this op: all-gather among ranks") !=
                 absl::string_view::npos;
        });
  }
  comm->reset();
  cudaFree(call.device_recv);
  // Everyone has reported; rank 1 now posts its part of the timed-out
  // all-gather, which completes while the others drive MPI in the barrier.
  CheckOk(SleepingBarrier(std::chrono::microseconds(100)), "SleepingBarrier");
  if (g_rank == 1) {
    std::vector<char> buffer(world * call.chunk_bytes);
    CheckOk((*mpi)->AllGather(call.group, buffer.data(), call.chunk_bytes), "the late AllGather");
  }
  CheckOk(SleepingBarrier(std::chrono::microseconds(100)), "SleepingBarrier");
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  if (zosched::VisibleGpusOrExit("host_staged_communicator_gpu_check: cudaGetDeviceCount") == 0) {
    std::printf("no GPU: skipped\n");
    return 0;
  }
  const int world =
      zosched::rank_check::StartRanks("host_staged_communicator_gpu_check", &argc, &argv);
  if (world < 2) zosched::Check(false, "needs at least 2 ranks");
  zosched::CheckCuda(cudaSetDevice(0), "cudaSetDevice(0)");  // every rank shares GPU 0
  zosched::Gathers(world);
  zosched::MissingRank(world);
  std::printf("rank %d: ok\n", zosched::g_rank);
  MPI_Finalize();
  return 0;
}
