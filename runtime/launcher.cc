#include "runtime/launcher.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

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

absl::Status ExecUnderMpirun(int ranks, const std::vector<std::string>& args) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return absl::InternalError("cannot find this program's path (/proc/self/exe)");
  self[n] = '\0';
  std::vector<std::string> command = {"mpirun", "-np", absl::StrCat(ranks), "--oversubscribe"};
  if (geteuid() == 0) command.push_back("--allow-run-as-root");
  command.push_back(self);
  command.insert(command.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& c : command) argv.push_back(c.data());
  argv.push_back(nullptr);
  execvp("mpirun", argv.data());
  if (errno == ENOENT) {
    return absl::FailedPreconditionError(
        "mpirun not found: install Open MPI (Debian: openmpi-bin; ./bazelw installs it)");
  }
  return absl::InternalError(absl::StrFormat("cannot run mpirun: %s", std::strerror(errno)));
}

}  // namespace zosched
