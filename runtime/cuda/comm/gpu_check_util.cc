#include "runtime/cuda/comm/gpu_check_util.h"

#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "runtime/mpi_world.h"

namespace zosched {
namespace gpu_check {
namespace {

// One all-gather of CheckBackToBack and its device memory.
struct Gather {
  AllGatherCall call;
  char* patterns = nullptr;  // this rank's chunk at each step
  char* history = nullptr;   // the gathered buffer after each step
};

}  // namespace

void CheckCuda(cudaError_t e, const std::string& what) {
  Check(e == cudaSuccess, what + ": " + cudaGetErrorString(e));
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

char Pattern(int call, int rank, int step, int64_t i) {
  return static_cast<char>(call * 97 + rank * 31 + step * 13 + i * 7 + 1);
}

void CheckHistory(const AllGatherCall& call, int call_index, const char* history, int steps) {
  const int world = call.group.size();
  const int64_t chunk = call.chunk_bytes, whole = world * chunk;
  std::vector<char> host(steps * whole);
  CheckCuda(cudaMemcpy(host.data(), history, host.size(), cudaMemcpyDeviceToHost),
            "cudaMemcpy of the history");
  for (int s = 0; s < steps; ++s) {
    for (int p = 0; p < world; ++p) {
      const int rank = call.group[p];
      for (int64_t i = 0; i < chunk; ++i) {
        if (host[s * whole + p * chunk + i] == Pattern(call_index, rank, s, i)) continue;
        Check(false, absl::StrFormat("%s, step %d: chunk %d byte %d is not rank %d's", call.label,
                                     s + 1, p, i, rank));
      }
    }
  }
}

void CheckBackToBack(std::vector<AllGatherCall> calls, int steps, int late_rank,
                     MakeCommunicator make) {
  std::vector<Gather> gathers(calls.size());
  for (size_t c = 0; c < calls.size(); ++c) {
    Gather& g = gathers[c];
    g.call = calls[c];
    const int64_t chunk = g.call.chunk_bytes;
    const int64_t whole = g.call.group.size() * chunk;
    CheckCuda(cudaMalloc(&g.call.device_recv, whole), "cudaMalloc");
    CheckCuda(cudaMemset(g.call.device_recv, 0, whole), "cudaMemset");
    CheckCuda(cudaMalloc(&g.patterns, steps * chunk), "cudaMalloc");
    CheckCuda(cudaMalloc(&g.history, steps * whole), "cudaMalloc");
    std::vector<char> patterns(steps * chunk);
    for (int s = 0; s < steps; ++s) {
      for (int64_t i = 0; i < chunk; ++i) patterns[s * chunk + i] = Pattern(c, g_rank, s, i);
    }
    CheckCuda(cudaMemcpy(g.patterns, patterns.data(), patterns.size(), cudaMemcpyHostToDevice),
              "cudaMemcpy");
    calls[c] = g.call;
  }
  std::unique_ptr<DeviceCommunicator> comm = make(calls);
  cudaStream_t stream;
  CheckCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

  CheckOk(SleepingBarrier(std::chrono::microseconds(100)), "SleepingBarrier");
  if (g_rank == late_rank) std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) {
    for (Gather& g : gathers) {
      const int64_t chunk = g.call.chunk_bytes;
      const int64_t whole = g.call.group.size() * chunk;
      CheckCuda(cudaMemcpyAsync(g.call.device_recv + g.call.rank_in_group * chunk,
                                g.patterns + s * chunk, chunk, cudaMemcpyDeviceToDevice, stream),
                "cudaMemcpyAsync of the pattern");
      CheckOk(comm->EnqueueAllGather(g.call, stream), "EnqueueAllGather");
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
  CheckOk(comm->AsyncError(), "AsyncError");

  for (size_t c = 0; c < gathers.size(); ++c) {
    CheckHistory(gathers[c].call, c, gathers[c].history, steps);
  }
  comm.reset();
  CheckCuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
  for (Gather& g : gathers) {
    cudaFree(g.call.device_recv);
    cudaFree(g.patterns);
    cudaFree(g.history);
  }
}

AllGatherCall MissingRankCall(int world) {
  constexpr int64_t kChunk = 256;
  AllGatherCall call{7, absl::StrFormat("device %d op 7 'allgather missing'", g_rank), {}, g_rank,
                     nullptr, kChunk};
  for (int r = 0; r < world; ++r) call.group.push_back(r);
  CheckCuda(cudaMalloc(&call.device_recv, world * kChunk), "cudaMalloc");
  return call;
}

void CheckMissingRankReported(DeviceCommunicator& comm, const AllGatherCall& call,
                              int timeout_seconds,
                              absl::FunctionRef<bool(absl::string_view message)> names_call) {
  cudaStream_t stream;
  CheckCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  const auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < 5; ++step) {
    CheckOk(comm.EnqueueAllGather(call, stream), "EnqueueAllGather");
  }
  absl::Status error;
  while ((error = comm.AsyncError()).ok() && SecondsSince(start) < 30) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double waited = SecondsSince(start);
  Check(absl::IsDeadlineExceeded(error),
        "a missing rank is DeadlineExceeded, got: " + error.ToString());
  Check(names_call(error.message()), "the error names the call and its step: " + error.ToString());
  Check(waited >= timeout_seconds && waited < timeout_seconds + 5,
        absl::StrFormat("the error came after the %d s timeout, not %.1f s", timeout_seconds,
                        waited));
  // Every pending collective ends at once: the stream drains.
  cudaError_t drained = cudaErrorNotReady;
  while ((drained = cudaStreamQuery(stream)) == cudaErrorNotReady && SecondsSince(start) < 60) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CheckCuda(drained, "the stream drains after the error");
  // A collective enqueued after the error completes at once too.
  CheckOk(comm.EnqueueAllGather(call, stream), "EnqueueAllGather after the error");
  CheckCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize after the error");
  Check(comm.AsyncError().message() == error.message(), "the first error stays");
  CheckCuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

}  // namespace gpu_check
}  // namespace zosched
