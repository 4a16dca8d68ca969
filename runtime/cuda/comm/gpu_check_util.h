// What the communicators' multi-rank GPU checks (the *_gpu_check binaries
// run under mpirun) share: the rank's checks (runtime/rank_check.h) and a
// CUDA one, the byte pattern each rank gathers, the gathered history
// verified byte for byte, and the two checks every communicator passes:
// all-gathers enqueued back to back, and a rank that never takes part.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/cuda/comm/device_communicator.h"
#include "runtime/rank_check.h"

namespace zosched {
namespace gpu_check {

using rank_check::Check;
using rank_check::CheckOk;
using rank_check::g_rank;

// Check(e == cudaSuccess), the message followed by ": " and CUDA's.
void CheckCuda(cudaError_t e, const std::string& what);

double SecondsSince(std::chrono::steady_clock::time_point start);

// The byte that `rank` puts at offset `i` of its chunk of call `call` at
// `step`.
char Pattern(int call, int rank, int step, int64_t i);

// Checks `history` (device memory: `steps` gathered buffers of `call`, one
// after another) against Pattern(`call_index`, participant, step, byte).
void CheckHistory(const AllGatherCall& call, int call_index, const char* history, int steps);

// Makes the communicator of `calls` (their buffers allocated), checking
// that it was made.
using MakeCommunicator =
    absl::FunctionRef<std::unique_ptr<DeviceCommunicator>(const std::vector<AllGatherCall>&)>;

// `steps` steps of the all-gathers `calls` (their device_recv unset; call i
// is Pattern's call i), enqueued back to back on one stream of the
// communicator `make` returns: before each, this rank's chunk gets its
// pattern, after each the whole buffer is copied aside on the device; one
// synchronisation at the end, then every chunk of every step is checked.
// After a barrier, `late_rank` (or -1: none) starts enqueuing 2 s after the
// others, which must then finish enqueuing within 1 s and find their stream
// still busy (the enqueue never waits for other ranks).
void CheckBackToBack(std::vector<AllGatherCall> calls, int steps, int late_rank,
                     MakeCommunicator make);

// The all-gather of the missing-rank checks: op 7, "device R op 7 'allgather
// missing'", among ranks 0 .. world - 1 in order, of 256-byte chunks in a
// device buffer allocated here (cudaFree it).
AllGatherCall MissingRankCall(int world);

// On a rank that takes part in `call` while another never does: enqueues it
// 5 times on a fresh stream of `comm` and checks that AsyncError reports
// DeadlineExceeded with a message that `names_call` accepts, between
// `timeout_seconds` and 5 s more after the first enqueue; that the stream
// then drains; and that a later enqueue completes at once, the first error
// staying.
void CheckMissingRankReported(DeviceCommunicator& comm, const AllGatherCall& call,
                              int timeout_seconds,
                              absl::FunctionRef<bool(absl::string_view message)> names_call);

}  // namespace gpu_check
}  // namespace zosched
