// Starting another program and waiting for it: the one way zosched runs a
// program (mpirun for the ranks of a run, gnuplot for pictures, train and
// calibrate from the experiments). Always an argv vector, never a shell
// string.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace zosched {

struct Subprocess {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up on PATH
  // Where the program's stdout and stderr go: "" keeps this process's; a
  // path: that file, created or truncated, both streams into it.
  std::string output_path;
  bool stdin_from_dev_null = false;  // else it shares this process's stdin
  // Start it in a process group of its own, so that a terminal's Ctrl-C
  // (SIGINT to the foreground group) reaches this process only, which
  // decides what the program gets (`forward_signals`).
  bool own_process_group = false;
  // While this process waits for the program: each signal `first` it
  // receives is sent to the program as `second` (e.g. SIGINT -> SIGUSR1).
  // The previous handlers are restored when the program has ended.
  std::vector<std::pair<int, int>> forward_signals;
  // The signal the program gets if this process dies first (Linux
  // PR_SET_PDEATHSIG), so that a kill -9 of this process leaves no program
  // behind; 0: none.
  int parent_death_signal = 0;
  // Variables set (or replaced) in the program's environment, on top of
  // this process's.
  std::vector<std::pair<std::string, std::string>> environment;
  // When set (and `output_path` is empty), the program's stderr is a pipe
  // that this process reads while it waits: each line goes to this
  // function, without its '\n' (a last line without one too). The program
  // ignores SIGPIPE, so that it outlives this process if it must (a write
  // to stderr then fails with EPIPE instead of killing it). Lines still
  // buffered when the program ends are read until the pipe is empty, but
  // a pipe that another process keeps open is not waited for.
  std::function<void(absl::string_view line)> stderr_lines;
  // With `stderr_lines`: asked about every 100 ms while the program runs;
  // once it returns true, the program (its process group, when
  // `own_process_group`) is killed with SIGKILL, and the run ends as one
  // killed by that signal. For a program that may hang where it should
  // end (mpirun waiting on a machine it cannot reach).
  std::function<bool()> give_up;
};

// Runs `program` to its end and returns its exit status (0 to 255). When
// `forwarded` is given it receives the first signal this process forwarded
// (0 if none).
//
// Errors: InvalidArgument for an empty argv; NotFound "NAME: not found"
// when the program does not exist; Internal for any other failure to start
// or wait for it (naming it and the OS reason); Aborted "NAME was killed by
// signal N (SIGNAME)" when a signal ended it.
absl::StatusOr<int> RunSubprocess(const Subprocess& program, int* forwarded = nullptr);

// The absolute path of the running program (/proc/self/exe), to start
// more copies of it. Errors: Internal when it cannot be read.
absl::StatusOr<std::string> ThisProgramPath();

}  // namespace zosched
