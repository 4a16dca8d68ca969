// Running gnuplot, which draws every picture of the experiments (Debian's
// gnuplot-nox; ./bazelw installs it).
#pragma once

#include <string>

#include "absl/status/status.h"

namespace zosched {

// Gnuplot lines that set `here` to the directory of the running script
// (with its trailing '/'; '' when run from standard input), so that a
// script finds its data and writes its picture next to itself from any
// working directory.
extern const char kGnuplotHere[];

// `s` as a single-quoted gnuplot string (nothing is escaped inside one but
// the quote, which is doubled). A control character would end the script
// line: each becomes a space.
std::string GnuplotString(const std::string& s);

// Runs `gnuplot script_path` (no shell), its standard output and error going
// to a log next to the script (removed afterwards); then checks that it
// wrote `png_path`.
//
// Errors: FailedPrecondition when gnuplot is not installed; Internal when it
// fails or writes no PNG, with the tail of what it printed.
absl::Status RunGnuplot(const std::string& script_path, const std::string& png_path);

}  // namespace zosched
