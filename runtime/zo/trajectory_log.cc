#include "runtime/zo/trajectory_log.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"

namespace zosched {
namespace {

constexpr absl::string_view kHeaderPrefix = "# zosched trajectory v1 base_seed=";

absl::Status LineError(const std::string& path, int line, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ":", line, ": ", message));
}

// Parses a non-empty string of decimal digits that fits in `max`. Strict: no
// sign, no whitespace.
bool ParseDigits(absl::string_view text, uint64_t max, uint64_t* out) {
  if (text.empty()) return false;
  uint64_t value = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(ch - '0');
    if (value > (max - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

// Parses a finite float written by "%.9g" (or any plain decimal/exponent
// form), correctly rounded and locale-independent.
bool ParseFiniteFloat(absl::string_view text, float* out) {
  if (text.empty()) return false;
  for (char ch : text) {
    const bool ok =
        (ch >= '0' && ch <= '9') || ch == '+' || ch == '-' || ch == '.' || ch == 'e' || ch == 'E';
    if (!ok) return false;
  }
  float value = 0.0f;
  if (!absl::SimpleAtof(text, &value) || !std::isfinite(value)) return false;
  *out = value;
  return true;
}

absl::Status ParseHeader(const std::string& path, absl::string_view line,
                         std::optional<uint64_t> expected_base_seed) {
  if (line.substr(0, kHeaderPrefix.size()) != kHeaderPrefix) {
    return LineError(path, 1,
                     absl::StrCat("missing header: expected \"", kHeaderPrefix, "<n>\", got \"",
                                  line.substr(0, 80), "\""));
  }
  uint64_t base_seed = 0;
  if (!ParseDigits(line.substr(kHeaderPrefix.size()), std::numeric_limits<uint64_t>::max(),
                   &base_seed)) {
    return LineError(
        path, 1,
        absl::StrCat("malformed header base_seed \"", line.substr(kHeaderPrefix.size(), 40),
                     "\" (expected a decimal uint64)"));
  }
  if (expected_base_seed.has_value() && base_seed != *expected_base_seed) {
    return LineError(path, 1,
                     absl::StrCat("header base_seed=", base_seed, " does not match the run's ",
                                  *expected_base_seed));
  }
  return absl::OkStatus();
}

absl::StatusOr<TrajectoryEntry> ParseEntry(const std::string& path, int line_number,
                                           absl::string_view line) {
  std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
  if (fields.size() != 4) {
    return LineError(path, line_number,
                     absl::StrCat("expected 4 space-separated fields \"step seed g lr\", got ",
                                  fields.size(), " in \"", line.substr(0, 80), "\""));
  }
  TrajectoryEntry entry;
  uint64_t step = 0;
  if (!ParseDigits(fields[0], std::numeric_limits<int64_t>::max(), &step)) {
    return LineError(path, line_number,
                     absl::StrCat("step \"", fields[0], "\" is not a decimal int64 >= 0"));
  }
  entry.step = static_cast<int64_t>(step);
  if (!ParseDigits(fields[1], std::numeric_limits<uint64_t>::max(), &entry.seed)) {
    return LineError(path, line_number,
                     absl::StrCat("seed \"", fields[1], "\" is not a decimal uint64"));
  }
  if (!ParseFiniteFloat(fields[2], &entry.g)) {
    return LineError(path, line_number,
                     absl::StrCat("g \"", fields[2], "\" is not a finite float"));
  }
  if (!ParseFiniteFloat(fields[3], &entry.lr)) {
    return LineError(path, line_number,
                     absl::StrCat("lr \"", fields[3], "\" is not a finite float"));
  }
  return entry;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::NotFoundError(
        absl::StrFormat("cannot open trajectory log %s: %s", path, std::strerror(errno)));
  }
  std::ostringstream bytes;
  bytes << file.rdbuf();
  if (file.bad()) {
    return absl::DataLossError(absl::StrFormat("error reading %s", path));
  }
  return bytes.str();
}

std::string FormatEntry(int64_t step, uint64_t seed, float g, float lr) {
  return absl::StrFormat("%d %d %.9g %.9g\n", step, seed, static_cast<double>(g),
                         static_cast<double>(lr));
}

}  // namespace

std::string TrajectoryHeader(uint64_t base_seed) { return absl::StrCat(kHeaderPrefix, base_seed); }

absl::StatusOr<std::vector<TrajectoryEntry>> ReadTrajectory(
    const std::string& path, std::optional<uint64_t> expected_base_seed) {
  ASSIGN_OR_RETURN(const std::string bytes, ReadWholeFile(path));
  return ParseTrajectory(bytes, path, expected_base_seed);
}

absl::StatusOr<std::vector<TrajectoryEntry>> ParseTrajectory(
    absl::string_view bytes, const std::string& path,
    std::optional<uint64_t> expected_base_seed) {
  if (bytes.empty()) return LineError(path, 1, "missing header: the file is empty");
  const bool ends_with_newline = bytes.back() == '\n';
  if (ends_with_newline) bytes.remove_suffix(1);
  std::vector<absl::string_view> lines = absl::StrSplit(bytes, '\n');
  if (!ends_with_newline) {
    return LineError(path, static_cast<int>(lines.size()),
                     "last line does not end with a newline (a write cut short?)");
  }
  RETURN_IF_ERROR(ParseHeader(path, lines[0], expected_base_seed));
  std::vector<TrajectoryEntry> entries;
  entries.reserve(lines.size() - 1);
  for (size_t i = 1; i < lines.size(); ++i) {
    const int line_number = static_cast<int>(i) + 1;
    ASSIGN_OR_RETURN(TrajectoryEntry entry, ParseEntry(path, line_number, lines[i]));
    // step - 1, not back + 1: the previous step may be the largest int64.
    if (!entries.empty() && entry.step - 1 != entries.back().step) {
      return LineError(path, line_number,
                       absl::StrCat("step ", entry.step, " does not follow step ",
                                    entries.back().step, " (steps must be consecutive)"));
    }
    entries.push_back(entry);
  }
  return entries;
}

TrajectoryWriter::TrajectoryWriter(std::string path, std::FILE* file,
                                   std::optional<int64_t> last_step)
    : path_(std::move(path)), file_(file), last_step_(last_step) {}

TrajectoryWriter::~TrajectoryWriter() { std::fclose(file_); }

absl::StatusOr<std::unique_ptr<TrajectoryWriter>> TrajectoryWriter::Open(const std::string& path,
                                                                         uint64_t base_seed) {
  std::optional<int64_t> last_step;
  bool is_new = true;
  {
    std::ifstream existing(path, std::ios::binary | std::ios::ate);
    if (existing && existing.tellg() > 0) is_new = false;
  }
  if (!is_new) {
    ASSIGN_OR_RETURN(std::vector<TrajectoryEntry> entries, ReadTrajectory(path, base_seed));
    if (!entries.empty()) last_step = entries.back().step;
  }
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "cannot open trajectory log %s for append: %s", path, std::strerror(errno)));
  }
  std::unique_ptr<TrajectoryWriter> writer(new TrajectoryWriter(path, file, last_step));
  if (is_new) {
    const std::string header = TrajectoryHeader(base_seed) + "\n";
    if (std::fputs(header.c_str(), file) < 0 || std::fflush(file) != 0) {
      return absl::PermissionDeniedError(absl::StrFormat(
          "cannot write the header of trajectory log %s: %s", path, std::strerror(errno)));
    }
  }
  return writer;
}

absl::Status TrajectoryWriter::Append(int64_t step, uint64_t seed, float g, float lr) {
  if (step < 0) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": step ", step, " is negative"));
  }
  // step - 1, not last + 1: the last step may be the largest int64.
  if (last_step_.has_value() && step - 1 != *last_step_) {
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": step ", step, " does not follow the last logged step ", *last_step_));
  }
  if (!std::isfinite(g) || !std::isfinite(lr)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: step %d: g=%g and lr=%g must be finite", path_, step, g, lr));
  }
  const std::string line = FormatEntry(step, seed, g, lr);
  if (std::fputs(line.c_str(), file_) < 0 || std::fflush(file_) != 0) {
    return absl::DataLossError(absl::StrFormat("error writing step %d to trajectory log %s: %s",
                                               step, path_, std::strerror(errno)));
  }
  last_step_ = step;
  return absl::OkStatus();
}

}  // namespace zosched
