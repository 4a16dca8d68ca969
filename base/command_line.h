// The command-line rule every zosched tool follows, in place of
// absl::ParseCommandLine:
//
// - `--help`, `-h` or `--helpfull` prints the usage line, what the tool does
//   and every flag the program defines (name, type, default, help), grouped
//   by the file that defines it, to stdout, and exits 0.
// - Flags are written `--name=VALUE` or `--name VALUE`; a bool also `--name`,
//   `--noname`, `--name=true|false`; one dash works as two; `--` ends the
//   flags (what follows is positional). Abseil's own flags (--flagfile,
//   --fromenv, --tryfromenv, --undefok) and its other help forms (--version,
//   --helpshort, --helpmatch...) are not taken: every flag is given on the
//   command line itself.
// - An unknown flag (with the closest name when one is near), a value that
//   does not parse as the flag's type, a flag given twice, a flag without its
//   value and the wrong number of positional arguments are each refused with
//   one line on stderr, `TOOL: what is wrong and what is right; see TOOL
//   --help`, and exit status 2, before any flag is set.
// - Exit status: 0 on success; 2 for bad usage or bad input (flags, files,
//   schedules, a plan that does not fit); 1 for a failure while running.
//   ExitStatusFor maps a tool's error to 2 or 1 by that rule.
#pragma once

#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace zosched {

// What a tool tells its user about itself.
struct Usage {
  // The name its messages start with, e.g. "inspect".
  std::string tool;
  // The positional arguments' names, space-separated, e.g. "SCHEDULE_FILE"
  // or "A.safetensors B.safetensors"; every one is required. Empty: none.
  std::string args;
  // What the tool does, a sentence or a few, printed under the usage line.
  std::string description;
};

// What a command line asks for.
struct CommandLine {
  bool help = false;              // --help, -h or --helpfull was given
  std::vector<std::string> args;  // the positional arguments, in order
};

// Checks argv[1..argc) against the flags this program defines and `usage`,
// and when it is right, sets the flags from it (absl::ParseCommandLine,
// which then finds nothing to report). With a help flag anywhere before
// `--` it sets nothing and returns help = true, whatever else is there.
//
// Errors: InvalidArgument, the message without the tool's name, e.g.
// "--steps given twice (5 and 7): give it once" or "unknown flag --stratgy
// (did you mean --strategy?)"; then no flag is set.
absl::StatusOr<CommandLine> ParseCommandLineStrict(int argc, char** argv, const Usage& usage);

// The --help text: "usage: TOOL [flags] ARGS", the description, every flag
// outside Abseil's own files grouped by file ("flags of FILE:", files in
// name order, flags in name order within each), and the rule above.
std::string HelpText(const Usage& usage);

// What each main calls first: ParseCommandLineStrict, then for help prints
// HelpText to stdout and exits 0, and for an error prints "TOOL: MESSAGE;
// see TOOL --help" to stderr and exits 2. Returns the positional arguments.
std::vector<std::string> ParseCommandLineOrExit(int argc, char** argv, const Usage& usage);

// Whether `flag` was given on the command line (set by
// ParseCommandLineStrict or absl::ParseCommandLine), as opposed to left at
// its default or set by the program.
bool GivenOnCommandLine(const absl::CommandLineFlag& flag);

// The exit status for a tool's run that ended with `status` (not OK): 2 for
// errors in what the user gave: InvalidArgument (a flag, file or schedule),
// NotFound (a file or name), FailedPrecondition (something the flags ask
// for is missing: a cluster figure, a CUDA build, a program), OutOfRange,
// ResourceExhausted (a plan that does not fit), PermissionDenied and
// AlreadyExists (a path given); 1 for every other code (a failure while
// running: Internal, DataLoss, Aborted, Unavailable, DeadlineExceeded...).
int ExitStatusFor(const absl::Status& status);

// Prints "TOOL: MESSAGE" for `status` (not OK) to stderr and returns
// ExitStatusFor(status).
int ReportError(const std::string& tool, const absl::Status& status);

// How a main ends after its work: 0 when `status` is OK, else
// ReportError(tool, status). E.g. `return ExitWith("lower", Run());`.
int ExitWith(const std::string& tool, const absl::Status& status);

}  // namespace zosched
