#include "runtime/mpirun_output.h"

#include <string.h>

#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace zosched {
namespace {

// Open MPI boxes its notices between lines of dashes (74 of them).
bool IsDashes(absl::string_view line) {
  line = absl::StripAsciiWhitespace(line);
  return line.size() >= 20 && line.find_first_not_of('-') == absl::string_view::npos;
}

// "[host:pid] ..." lines of Open MPI's help aggregation about notices it
// held back, and the errors its help system logs when ranks abort at once.
bool IsAggregationNoise(absl::string_view line) {
  if (!absl::StartsWith(line, "[")) return false;
  return absl::StrContains(line, "has sent help message") ||
         absl::StrContains(line, "have sent help message") ||
         absl::StrContains(line, "orte_base_help_aggregate") ||
         (absl::StrContains(line, "ORTE_ERROR_LOG") && absl::StrContains(line, "show_help.c"));
}

}  // namespace

std::vector<std::string> MpirunOutputFilter::Take(absl::string_view line) {
  if (!in_notice_) {
    if (IsDashes(line)) {
      in_notice_ = true;
      notice_ = {std::string(line)};
      return {};
    }
    if (IsAggregationNoise(line)) return {};
    return {std::string(line)};
  }
  notice_.emplace_back(line);
  if (!IsDashes(line)) return {};
  in_notice_ = false;
  return Replace(notice_);
}

std::vector<std::string> MpirunOutputFilter::Finish() {
  if (!in_notice_) return {};
  in_notice_ = false;
  return notice_;
}

std::vector<std::string> MpirunOutputFilter::Replace(const std::vector<std::string>& lines) {
  const std::string text = absl::StrJoin(lines, "\n");
  // The ranks have said why: a rank called MPI_Abort, or exited non-zero.
  if (absl::StrContains(text, "MPI_ABORT was invoked") ||
      (absl::StrContains(text, "Primary job") && absl::StrContains(text, "terminated normally")) ||
      absl::StrContains(text, "exited with non-zero status")) {
    ending_ = true;
    return {};
  }
  // "mpirun noticed that process rank 1 with PID 0 on node vm exited on
  // signal 9 (Killed)."
  static const std::regex* const kKilled = new std::regex(
      "process rank ([0-9]+) with PID [0-9]+ on node (\\S+) exited on signal ([0-9]+)");
  std::smatch match;
  if (std::regex_search(text, match, *kKilled)) {
    int signal = 0;
    if (!absl::SimpleAtoi(match[3].str(), &signal)) signal = 0;
    const char* name = signal > 0 ? sigabbrev_np(signal) : nullptr;
    const std::string said =
        absl::StrFormat("rank %s (node %s) was killed by signal %d (SIG%s)", match[1].str(),
                        match[2].str(), signal, name != nullptr ? name : "?");
    if (killed_rank_.empty()) killed_rank_ = said;
    ending_ = true;
    return {};
  }
  return lines;
}

}  // namespace zosched
