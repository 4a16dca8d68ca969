// What the communicators' multi-rank GPU checks (the *_gpu_check binaries
// run under mpirun) share: failing the whole job with a message naming the
// rank, the byte pattern each rank gathers, and the gathered history
// verified byte for byte.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "runtime/cuda/comm/device_communicator.h"

namespace zosched {
namespace gpu_check {

// This process's MPI rank, for messages (set it first thing in main).
extern int g_rank;

// Unless `ok`: prints "rank R: FAILED: what" and aborts every rank (exit 1).
void Check(bool ok, const std::string& what);
void CheckOk(const absl::Status& status, const std::string& what);
void CheckCuda(cudaError_t e, const std::string& what);

double SecondsSince(std::chrono::steady_clock::time_point start);

// The byte that `rank` puts at offset `i` of its chunk of call `call` at
// `step`.
char Pattern(int call, int rank, int step, int64_t i);

// Checks `history` (device memory: `steps` gathered buffers of `call`, one
// after another) against Pattern(`call_index`, participant, step, byte).
void CheckHistory(const AllGatherCall& call, int call_index, const char* history, int steps);

}  // namespace gpu_check
}  // namespace zosched
