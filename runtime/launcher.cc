#include "runtime/launcher.h"

#include <unistd.h>

#include <csignal>

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/subprocess.h"

namespace zosched {

bool StartedByMpiLauncher() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

std::vector<std::string> ArgsWithoutRanks(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (absl::StartsWith(a, "--ranks=") || absl::StartsWith(a, "-ranks=")) continue;
    if (a == "--ranks" || a == "-ranks") {
      ++i;  // and its value
      continue;
    }
    args.push_back(a);
  }
  return args;
}

absl::StatusOr<std::vector<std::string>> MpirunArgv(int ranks,
                                                    const std::vector<std::string>& args) {
  ASSIGN_OR_RETURN(const std::string self, ThisProgramPath());
  std::vector<std::string> argv = {"mpirun", "-np", absl::StrCat(ranks), "--oversubscribe"};
  if (geteuid() == 0) argv.push_back("--allow-run-as-root");
  argv.push_back(self);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

absl::StatusOr<int> RunUnderMpirun(int ranks, const std::vector<std::string>& args,
                                   int* stop_signal) {
  Subprocess mpirun;
  ASSIGN_OR_RETURN(mpirun.argv, MpirunArgv(ranks, args));
  // Its own process group: a terminal's Ctrl-C reaches the launcher only.
  // Then it must not read the terminal (a background group would be
  // stopped), and the ranks need no stdin.
  mpirun.own_process_group = true;
  mpirun.stdin_from_dev_null = true;
  mpirun.forward_signals = {{SIGINT, SIGUSR1}, {SIGTERM, SIGUSR1}};
  mpirun.parent_death_signal = SIGTERM;
  absl::StatusOr<int> status = RunSubprocess(mpirun, stop_signal);
  if (absl::IsNotFound(status.status())) {
    return absl::FailedPreconditionError(
        "mpirun not found: install Open MPI (Debian: openmpi-bin; ./bazelw installs it)");
  }
  return status;
}

}  // namespace zosched
