// Starting the ranks of a run: `bazel run //runtime:train -- --ranks=4 ...`
// runs this program again under `mpirun -np 4` and waits for it; programs
// started by mpirun (or with one rank) run directly. Calibration starts its
// multi-process probes the same way.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace zosched {

// True if this process was started by an MPI launcher (Open MPI sets
// OMPI_COMM_WORLD_SIZE; PMI-based launchers set PMI_SIZE).
bool StartedByMpiLauncher();

// The argv of `mpirun -np <ranks> --oversubscribe [--allow-run-as-root]
// <this program> <args...>` (--allow-run-as-root when running as root).
// Errors: those of ThisProgramPath (base/subprocess.h).
absl::StatusOr<std::vector<std::string>> MpirunArgv(int ranks,
                                                    const std::vector<std::string>& args);

// Runs this program with `args` on `ranks` ranks under mpirun, waits, and
// returns mpirun's exit status (the first failing rank's). mpirun runs in a
// process group of its own and dies with this process (SIGTERM, on which it
// stops its ranks and removes its session files), so a kill -9 of the
// launcher leaves no rank behind. A SIGINT or SIGTERM this process receives
// goes to the ranks as SIGUSR1 (mpirun forwards SIGUSR1; it answers SIGINT
// and SIGTERM by killing the ranks at once), for them to stop cleanly
// (runtime/stop_signals.h); `stop_signal` then receives that signal (else
// 0). Errors: FailedPrecondition when mpirun is not installed (Debian:
// openmpi-bin; ./bazelw installs it); RunSubprocess's otherwise.
absl::StatusOr<int> RunUnderMpirun(int ranks, const std::vector<std::string>& args,
                                   int* stop_signal = nullptr);

// `argv[1..]` without any "--ranks=N" / "--ranks N" argument.
std::vector<std::string> ArgsWithoutRanks(int argc, char** argv);

}  // namespace zosched
