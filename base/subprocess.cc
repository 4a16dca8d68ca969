#include "base/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

extern char** environ;

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

// This process's environment with `program.environment` set on top, as
// "NAME=VALUE" strings.
std::vector<std::string> ChildEnvironment(const Subprocess& program) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const absl::string_view entry(*e);
    bool replaced = false;
    for (const auto& [name, value] : program.environment) {
      replaced |= entry.size() > name.size() && entry.substr(0, name.size()) == name &&
                  entry[name.size()] == '=';
    }
    if (!replaced) env.emplace_back(entry);
  }
  for (const auto& [name, value] : program.environment) env.push_back(absl::StrCat(name, "=", value));
  return env;
}

// Reads the program's stderr from `pipe` line by line into `lines` until the
// pipe ends, or until the program `pid` has ended and nothing more is
// buffered, killing it (its group `-pid` when `group`) once `give_up` says
// so; reaps the program into `status`. Returns errno on failure, else 0.
int ReadLinesUntilExit(int pipe, pid_t pid, const std::function<void(absl::string_view)>& lines,
                       const std::function<bool()>& give_up, bool group, int* status) {
  std::string pending;
  bool exited = false;
  bool killed = false;
  char buffer[4096];
  for (;;) {
    if (give_up && !killed && !exited && give_up()) {
      kill(group ? -pid : pid, SIGKILL);
      killed = true;
    }
    pollfd readable = {pipe, POLLIN, 0};
    const int ready = poll(&readable, 1, exited ? 0 : 100);
    if (ready < 0 && errno != EINTR) return errno;
    if (ready > 0) {
      const ssize_t got = read(pipe, buffer, sizeof(buffer));
      if (got > 0) {
        pending.append(buffer, got);
        size_t start = 0;
        for (size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1) {
          lines(absl::string_view(pending).substr(start, end - start));
        }
        pending.erase(0, start);
        continue;
      }
      if (got == 0) break;  // every writer has closed it
      if (errno != EINTR) return errno;
      continue;
    }
    if (exited) break;  // ended, and nothing left to read now
    const pid_t done = waitpid(pid, status, WNOHANG);
    if (done < 0 && errno != EINTR) return errno;
    exited = done == pid;
  }
  if (!pending.empty()) lines(pending);
  if (!exited) {
    while (waitpid(pid, status, 0) < 0) {
      if (errno != EINTR) return errno;
    }
  }
  return 0;
}

// In the child between fork and exec: only async-signal-safe calls. On
// failure writes errno to `report` and exits 127.
[[noreturn]] void ExecChild(const Subprocess& program, char* const* argv, char* const* envp,
                            int error_pipe, int report) {
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
  } else if (error_pipe >= 0) {
    if (dup2(error_pipe, STDERR_FILENO) < 0) fail();
    signal(SIGPIPE, SIG_IGN);
  }
  execvpe(argv[0], argv, envp);
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
  std::vector<std::string> env = ChildEnvironment(program);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const bool read_stderr = program.stderr_lines && program.output_path.empty();
  int errors[2] = {-1, -1};  // the program's stderr, when read_stderr
  if (read_stderr && pipe2(errors, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrFormat("cannot run %s: pipe: %s", name, std::strerror(errno)));
  }
  auto close_errors = [&errors] {
    for (int& fd : errors) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
  };
  int report[2];  // the child's exec failure, if any; closed by a successful exec
  if (pipe2(report, O_CLOEXEC) != 0) {
    close_errors();
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
    ExecChild(program, argv.data(), envp.data(), errors[1], report[1]);
  }
  const int fork_error = errno;
  close(report[1]);
  if (errors[1] >= 0) {
    close(errors[1]);
    errors[1] = -1;
  }
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
    close_errors();
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
  int wait_error = 0;
  if (read_stderr) {
    wait_error = ReadLinesUntilExit(errors[0], pid, program.stderr_lines, program.give_up,
                                    program.own_process_group, &status);
    close_errors();
  } else {
    while (waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) {
        wait_error = errno;
        break;
      }
    }
  }
  restore();
  if (wait_error != 0) {
    return absl::InternalError(absl::StrFormat("waiting for %s: %s", name, std::strerror(wait_error)));
  }
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
