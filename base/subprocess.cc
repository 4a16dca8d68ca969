#include "base/subprocess.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "absl/strings/str_format.h"

namespace zosched {
namespace {

// What the signal handler forwards, and to whom (one program at a time).
volatile std::sig_atomic_t g_child = 0;
volatile std::sig_atomic_t g_first_forwarded = 0;
volatile std::sig_atomic_t g_forward_as[NSIG] = {};

void Forward(int signal) {
  if (g_first_forwarded == 0) g_first_forwarded = signal;
  if (g_child > 0) kill(g_child, g_forward_as[signal]);
}

// Reports errno to the parent through `report` and ends the child.
[[noreturn]] void FailChild(int report) {
  const int error = errno;
  (void)!write(report, &error, sizeof(error));
  _exit(127);
}

// In the child between fork and exec: only async-signal-safe calls. On
// failure writes errno to `report` and exits 127.
[[noreturn]] void ExecChild(const Subprocess& program, char* const* argv, int report) {
  auto fail = [report] { FailChild(report); };
  if (program.own_process_group && setpgid(0, 0) != 0) fail();
  if (program.parent_death_signal != 0) {
    if (prctl(PR_SET_PDEATHSIG, program.parent_death_signal) != 0) fail();
  }
  for (const auto& [from, to] : program.forward_signals) signal(from, SIG_DFL);
  if (program.stdin_from_dev_null) {
    const int in = open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, STDIN_FILENO) < 0) fail();
  }
  if (!program.output_path.empty()) {
    const int out = open(program.output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(out, STDERR_FILENO) < 0) fail();
  }
  execvp(argv[0], argv);
  FailChild(report);
}

}  // namespace

absl::StatusOr<int> RunSubprocess(const Subprocess& program, int* forwarded) {
  if (program.argv.empty()) {
    return absl::InvalidArgumentError("no program to run (empty argv)");
  }
  const std::string& name = program.argv[0];
  std::vector<std::string> args = program.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int report[2];  // the child's exec failure, if any; closed by a successful exec
  if (pipe2(report, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrFormat("cannot run %s: pipe: %s", name, std::strerror(errno)));
  }
  // Forwarded signals are blocked until the child's pid is known.
  sigset_t forwarded_set, old_mask;
  sigemptyset(&forwarded_set);
  for (const auto& [from, to] : program.forward_signals) sigaddset(&forwarded_set, from);
  pthread_sigmask(SIG_BLOCK, &forwarded_set, &old_mask);
  std::vector<struct sigaction> old_actions(program.forward_signals.size());
  g_first_forwarded = 0;
  for (size_t i = 0; i < program.forward_signals.size(); ++i) {
    const auto [from, to] = program.forward_signals[i];
    g_forward_as[from] = to;
    struct sigaction action = {};
    action.sa_handler = Forward;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(from, &action, &old_actions[i]);
  }
  const pid_t pid = fork();
  if (pid == 0) {
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    close(report[0]);
    ExecChild(program, argv.data(), report[1]);
  }
  const int fork_error = errno;
  close(report[1]);
  if (pid > 0) g_child = pid;
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  auto restore = [&] {
    g_child = 0;
    for (size_t i = 0; i < program.forward_signals.size(); ++i) {
      sigaction(program.forward_signals[i].first, &old_actions[i], nullptr);
    }
    if (forwarded != nullptr) *forwarded = g_first_forwarded;
  };
  if (pid < 0) {
    close(report[0]);
    restore();
    return absl::InternalError(
        absl::StrFormat("cannot run %s: fork: %s", name, std::strerror(fork_error)));
  }
  int exec_error = 0;
  ssize_t got;
  while ((got = read(report[0], &exec_error, sizeof(exec_error))) < 0 && errno == EINTR) {
  }
  close(report[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      const int error = errno;
      restore();
      return absl::InternalError(absl::StrFormat("waiting for %s: %s", name, std::strerror(error)));
    }
  }
  restore();
  if (got == sizeof(exec_error)) {
    if (exec_error == ENOENT) return absl::NotFoundError(absl::StrFormat("%s: not found", name));
    return absl::InternalError(
        absl::StrFormat("cannot run %s: %s", name, std::strerror(exec_error)));
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
