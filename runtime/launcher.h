// Starting the ranks of a run: `bazel run //runtime:train -- --ranks=4 ...`
// re-executes the program under `mpirun -np 4`; programs started by mpirun
// (or with one rank) run directly.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace zosched {

// True if this process was started by an MPI launcher (Open MPI sets
// OMPI_COMM_WORLD_SIZE; PMI-based launchers set PMI_SIZE).
bool StartedByMpiLauncher();

// Replaces this process by `mpirun -np <ranks> <program> <args...>` (adding
// --oversubscribe, and --allow-run-as-root when running as root), where
// `program` is /proc/self/exe and `args` the original arguments without the
// --ranks flag. Returns only on failure: FailedPrecondition when mpirun is
// not found (install openmpi-bin; ./bazelw does), Internal otherwise.
absl::Status ExecUnderMpirun(int ranks, const std::vector<std::string>& args);

// `argv[1..]` without any "--ranks=N" / "--ranks N" argument.
std::vector<std::string> ArgsWithoutRanks(int argc, char** argv);

}  // namespace zosched
