#include "runtime/cuda/comm/gpu_check_util.h"

#include <mpi.h>

#include <cstdio>
#include <vector>

#include "absl/strings/str_format.h"

namespace zosched {
namespace gpu_check {

int g_rank = 0;

void Check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "rank %d: FAILED: %s\n", g_rank, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

void CheckOk(const absl::Status& status, const std::string& what) {
  Check(status.ok(), what + ": " + status.ToString());
}

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
        Check(false, absl::StrFormat("%s, step %d: chunk %d byte %d is not rank %d's",
                                     call.label, s + 1, p, i, rank));
      }
    }
  }
}

}  // namespace gpu_check
}  // namespace zosched
