#include "base/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "absl/strings/str_format.h"

extern char** environ;

namespace zosched {

absl::StatusOr<int> RunSubprocess(const Subprocess& program) {
  if (program.argv.empty()) {
    return absl::InvalidArgumentError("no program to run (empty argv)");
  }
  const std::string& name = program.argv[0];
  std::vector<std::string> args = program.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (program.stdin_from_dev_null) {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  if (!program.output_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, program.output_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  pid_t pid = 0;
  const int error = posix_spawnp(&pid, name.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error == ENOENT) return absl::NotFoundError(absl::StrFormat("%s: not found", name));
  if (error != 0) {
    return absl::InternalError(absl::StrFormat("cannot run %s: %s", name, std::strerror(error)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return absl::InternalError(
          absl::StrFormat("waiting for %s: %s", name, std::strerror(errno)));
    }
  }
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    return absl::AbortedError(absl::StrFormat("%s was killed by signal %d (%s)", name, signal,
                                              sigabbrev_np(signal) ? sigabbrev_np(signal) : "?"));
  }
  return WEXITSTATUS(status);
}

absl::StatusOr<std::string> ThisProgramPath() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) {
    return absl::InternalError(
        absl::StrFormat("cannot find this program's path (/proc/self/exe): %s",
                        std::strerror(errno)));
  }
  return std::string(path, n);
}

}  // namespace zosched
