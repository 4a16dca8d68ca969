#include "runtime/launcher.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/subprocess.h"
#include "base/temporary_directory.h"
#include "runtime/mpirun_output.h"

namespace zosched {

namespace {

constexpr char kLauncherVariable[] = "ZOSCHED_LAUNCHER";

}  // namespace

absl::StatusOr<MpiJobDirectory> MpiJobDirectory::Create() {
  ASSIGN_OR_RETURN(std::string path,
                   MakeTemporaryDirectory("zosched-job", "Open MPI's files of the job"));
  return MpiJobDirectory(std::move(path));
}

MpiJobDirectory::~MpiJobDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::vector<std::pair<std::string, std::string>> MpiJobDirectory::Environment() const {
  return {{"OMPI_MCA_orte_top_session_dir", path_},
          {"OMPI_MCA_btl_vader_backing_directory", path_}};
}

bool StartedByMpiLauncher() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

bool StartedByZoschedLauncher() {
  return StartedByMpiLauncher() && std::getenv(kLauncherVariable) != nullptr;
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
                                   int* stop_signal, const MpiJobDirectory* job_directory) {
  Subprocess mpirun;
  ASSIGN_OR_RETURN(mpirun.argv, MpirunArgv(ranks, args));
  ASSIGN_OR_RETURN(const std::string self, ThisProgramPath());
  const std::string program = std::filesystem::path(self).filename();
  // Its own process group: a terminal's Ctrl-C reaches the launcher only.
  // Then it must not read the terminal (a background group would be
  // stopped), and the ranks need no stdin.
  mpirun.own_process_group = true;
  mpirun.stdin_from_dev_null = true;
  mpirun.forward_signals = {{SIGINT, SIGUSR1}, {SIGTERM, SIGUSR1}};
  mpirun.parent_death_signal = SIGUSR1;
  std::optional<MpiJobDirectory> own_directory;
  if (job_directory == nullptr) {
    ASSIGN_OR_RETURN(MpiJobDirectory created, MpiJobDirectory::Create());
    job_directory = &own_directory.emplace(std::move(created));
  }
  mpirun.environment = job_directory->Environment();
  mpirun.environment.push_back({kLauncherVariable, "1"});
  MpirunOutputFilter filter;
  mpirun.stderr_lines = [&filter](absl::string_view line) {
    for (const std::string& shown : filter.Take(line)) std::fprintf(stderr, "%s\n", shown.c_str());
  };
  absl::StatusOr<int> status = RunSubprocess(mpirun, stop_signal);
  for (const std::string& shown : filter.Finish()) std::fprintf(stderr, "%s\n", shown.c_str());
  if (!filter.killed_rank().empty()) {
    std::fprintf(stderr, "%s: %s; mpirun ended the other ranks\n", program.c_str(),
                 filter.killed_rank().c_str());
  }
  if (absl::IsNotFound(status.status())) {
    return absl::FailedPreconditionError(
        "mpirun not found: install Open MPI (Debian: openmpi-bin; ./bazelw installs it)");
  }
  if (absl::IsAborted(status.status())) {
    return absl::AbortedError(
        absl::StrCat(status.status().message(), "; its ranks went with it"));
  }
  return status;
}

}  // namespace zosched
