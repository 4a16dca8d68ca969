// Starting another program and waiting for it: the one way zosched runs a
// program (mpirun for the ranks of a run, gnuplot for pictures, train and
// calibrate from the experiments). Always an argv vector, never a shell
// string.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace zosched {

struct Subprocess {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up on PATH
  // Where the program's stdout and stderr go: "" keeps this process's; a
  // path: that file, created or truncated, both streams into it.
  std::string output_path;
  bool stdin_from_dev_null = false;  // else it shares this process's stdin
};

// Runs `program` to its end and returns its exit status (0 to 255).
//
// Errors: InvalidArgument for an empty argv; NotFound "NAME: not found"
// when the program does not exist; Internal for any other failure to start
// or wait for it (naming it and the OS reason); Aborted "NAME was killed by
// signal N (SIGNAME)" when a signal ended it.
absl::StatusOr<int> RunSubprocess(const Subprocess& program);

// The absolute path of the running program (/proc/self/exe), to start
// more copies of it. Errors: Internal when it cannot be read.
absl::StatusOr<std::string> ThisProgramPath();

}  // namespace zosched
