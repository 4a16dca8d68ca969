#include "runtime/rank_check.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "runtime/mpi_world.h"

namespace zosched {
namespace rank_check {

int g_rank = 0;

int StartRanks(const char* tool, int* argc, char*** argv) {
  int world = 0;
  const absl::Status init = InitMpi(argc, argv, &g_rank, &world);
  if (!init.ok()) {
    std::fprintf(stderr, "%s: %s\n", tool, std::string(init.message()).c_str());
    std::exit(1);
  }
  return world;
}

void Check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "rank %d: FAILED: %s\n", g_rank, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

void CheckOk(const absl::Status& status, const std::string& what) {
  Check(status.ok(), what + ": " + status.ToString());
}

}  // namespace rank_check
}  // namespace zosched
