#include "experiments/gnuplot.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/subprocess.h"

namespace zosched {
namespace {

constexpr size_t kStderrTailBytes = 2000;

}  // namespace

const char kGnuplotHere[] =
    "dir_of(s, i) = i < 1 ? '' : s[i:i] eq '/' ? s[1:i] : dir_of(s, i - 1)\n"
    "here = exists('ARG0') ? dir_of(ARG0, strlen(ARG0)) : ''\n";

std::string GnuplotString(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') {
      out += "''";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "'";
}

absl::Status RunGnuplot(const std::string& script_path, const std::string& png_path) {
  const std::string log_path = script_path + ".log";
  // A path starting with '-' would be read as an option.
  const std::string script_arg = script_path[0] == '-' ? "./" + script_path : script_path;
  const absl::StatusOr<int> status =
      RunSubprocess({{"gnuplot", script_arg}, log_path, /*stdin_from_dev_null=*/true});
  // The tail of what gnuplot printed.
  std::string tail;
  if (std::string log; ReadFileToString(log_path, &log).ok()) {
    tail = log.substr(log.size() - std::min<size_t>(log.size(), kStderrTailBytes));
  }
  std::remove(log_path.c_str());
  if (absl::IsNotFound(status.status())) {
    return absl::FailedPreconditionError(
        "gnuplot not found; install the Debian package gnuplot-nox (./bazelw installs it)");
  }
  std::string failure;
  if (!status.ok()) {
    failure = absl::StrCat("gnuplot ", script_path, ": ", status.status().message());
  } else if (*status != 0) {
    failure = absl::StrCat("gnuplot ", script_path, " exited with status ", *status);
  } else {
    struct stat png_stat;
    if (stat(png_path.c_str(), &png_stat) != 0 || png_stat.st_size == 0) {
      failure = absl::StrCat("gnuplot ", script_path, " succeeded but wrote no ", png_path);
    }
  }
  if (failure.empty()) return absl::OkStatus();
  return absl::InternalError(tail.empty() ? absl::StrCat(failure, " (no output)")
                                          : absl::StrCat(failure, "; its output ends:\n", tail));
}

}  // namespace zosched
