#include "runtime/cuda/comm/gpu_identity_gather.h"

#include <cuda_runtime.h>
#include <mpi.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "base/gpu_check.h"
#include "runtime/cuda/comm/gpu_identity.h"

namespace zosched {
namespace {

// Each rank's identity travels as a NUL-terminated string in a record of
// this many bytes; an empty record says the rank could not name its GPU.
constexpr int kRecordBytes = 320;

absl::StatusOr<std::string> LocalIdentity(int gpu) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) {
    return absl::InternalError(absl::StrFormat("gethostname failed: %s", std::strerror(errno)));
  }
  char bus[64] = {};
  GPU_RETURN_IF_ERROR(cudaDeviceGetPCIBusId(bus, sizeof(bus), gpu));
  std::string identity = GpuIdentity(host, bus);
  if (identity.empty() || identity.size() >= kRecordBytes) {
    return absl::InternalError(
        absl::StrFormat("the GPU identity '%s' does not fit %d bytes", identity, kRecordBytes));
  }
  return identity;
}

}  // namespace

absl::StatusOr<bool> GroupsHaveDistinctGpus(const std::vector<std::vector<int>>& groups, int gpu) {
  int rank = 0, world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  // A rank that cannot name its GPU still takes part (with an empty record):
  // the others must not wait for it.
  const absl::StatusOr<std::string> mine = LocalIdentity(gpu);
  std::vector<char> record(kRecordBytes, '\0');
  if (mine.ok()) std::memcpy(record.data(), mine->data(), mine->size());
  std::vector<char> all(static_cast<size_t>(world) * kRecordBytes);
  const int code = MPI_Allgather(record.data(), kRecordBytes, MPI_CHAR, all.data(), kRecordBytes,
                                 MPI_CHAR, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    return absl::InternalError(absl::StrFormat("MPI_Allgather of the GPU identities failed: %s",
                                               std::string(text, length)));
  }
  if (!mine.ok()) {
    return absl::Status(mine.status().code(),
                        absl::StrFormat("rank %d cannot name GPU %d: %s", rank, gpu,
                                        mine.status().message()));
  }
  std::vector<std::string> identity_of_rank(world);
  for (int r = 0; r < world; ++r) {
    const char* at = all.data() + static_cast<size_t>(r) * kRecordBytes;
    identity_of_rank[r].assign(at, strnlen(at, kRecordBytes));
    if (identity_of_rank[r].empty()) {
      return absl::InternalError(
          absl::StrFormat("rank %d cannot name its GPU (its own error says why)", r));
    }
  }
  return DistinctWithinGroups(groups, identity_of_rank);
}

}  // namespace zosched
