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

constexpr absl::string_view kHeaderV1Prefix = "# zosched trajectory v1 base_seed=";
constexpr absl::string_view kHeaderV2Prefix = "# zosched trajectory v2 base_seed=";
constexpr absl::string_view kHeaderV2Directions = " directions=";

// What to do about a log whose header is not the run's.
constexpr absl::string_view kAnotherRunsLog =
    "the log was written by another run: continue it with the settings it was written with "
    "(its base seed and directions), or start a new --out_dir";

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

// What a header line says.
struct Header {
  uint64_t base_seed = 0;
  int directions = 1;  // q: 1 for v1, >= 2 for v2
};

absl::Status ParseBaseSeed(const std::string& path, absl::string_view text, uint64_t* out) {
  if (!ParseDigits(text, std::numeric_limits<uint64_t>::max(), out)) {
    return LineError(path, 1,
                     absl::StrCat("malformed header base_seed \"", text.substr(0, 40),
                                  "\" (expected a decimal uint64)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Header> ParseHeaderLine(const std::string& path, absl::string_view line) {
  Header header;
  if (line.substr(0, kHeaderV1Prefix.size()) == kHeaderV1Prefix) {
    RETURN_IF_ERROR(ParseBaseSeed(path, line.substr(kHeaderV1Prefix.size()), &header.base_seed));
    return header;
  }
  if (line.substr(0, kHeaderV2Prefix.size()) != kHeaderV2Prefix) {
    return LineError(
        path, 1,
        absl::StrCat("missing header: expected \"", kHeaderV1Prefix, "<n>\" or \"", kHeaderV2Prefix,
                     "<n>", kHeaderV2Directions, "<q>\", got \"", line.substr(0, 80), "\""));
  }
  const absl::string_view rest = line.substr(kHeaderV2Prefix.size());
  const size_t at = rest.find(kHeaderV2Directions);
  if (at == absl::string_view::npos) {
    return LineError(path, 1,
                     absl::StrCat("malformed v2 header \"", line.substr(0, 80), "\": expected \"",
                                  kHeaderV2Prefix, "<n>", kHeaderV2Directions, "<q>\""));
  }
  RETURN_IF_ERROR(ParseBaseSeed(path, rest.substr(0, at), &header.base_seed));
  const absl::string_view directions_text = rest.substr(at + kHeaderV2Directions.size());
  uint64_t directions = 0;
  if (!ParseDigits(directions_text, std::numeric_limits<int>::max(), &directions)) {
    return LineError(path, 1,
                     absl::StrCat("malformed header directions \"", directions_text.substr(0, 40),
                                  "\" (expected a decimal int >= 2)"));
  }
  if (directions < 2) {
    return LineError(path, 1,
                     absl::StrCat("header directions=", directions,
                                  " is not a v2 count: a v2 log has directions >= 2 (a "
                                  "one-direction log has the v1 header \"",
                                  kHeaderV1Prefix, "<n>\")"));
  }
  header.directions = static_cast<int>(directions);
  return header;
}

absl::StatusOr<Header> ParseHeader(const std::string& path, absl::string_view line,
                                   std::optional<uint64_t> expected_base_seed,
                                   std::optional<int> expected_directions) {
  ASSIGN_OR_RETURN(const Header header, ParseHeaderLine(path, line));
  if (expected_base_seed.has_value() && header.base_seed != *expected_base_seed) {
    return LineError(path, 1,
                     absl::StrCat("header base_seed=", header.base_seed,
                                  " does not match the run's base_seed=", *expected_base_seed, "; ",
                                  kAnotherRunsLog));
  }
  if (expected_directions.has_value() && header.directions != *expected_directions) {
    return LineError(path, 1,
                     absl::StrCat("header directions=", header.directions,
                                  header.directions == 1 ? " (a v1 header)" : "",
                                  " does not match the run's directions=", *expected_directions,
                                  "; ", kAnotherRunsLog));
  }
  return header;
}

// The names of an entry's fields for q = `directions`, for errors.
std::string FieldNames(int directions) {
  if (directions == 1) return "step seed g lr";
  if (directions == 2) return "step seed_0 g_0 seed_1 g_1 lr";
  return absl::StrFormat("step seed_0 g_0 ... seed_%d g_%d lr", directions - 1, directions - 1);
}

// The name of direction `i`'s field `name` ("seed" or "g") for errors: bare
// in a v1 log, "name_i" in a v2 one.
std::string DirectionField(absl::string_view name, int directions, size_t i) {
  return directions == 1 ? std::string(name) : absl::StrCat(name, "_", i);
}

absl::StatusOr<TrajectoryEntry> ParseEntry(const std::string& path, int line_number,
                                           absl::string_view line, int directions) {
  std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
  const size_t expected_fields = 2 + 2 * static_cast<size_t>(directions);
  if (fields.size() != expected_fields) {
    return LineError(
        path, line_number,
        absl::StrCat("expected ", expected_fields, " space-separated fields \"",
                     FieldNames(directions), "\"",
                     directions == 1 ? "" : absl::StrCat(" for directions=", directions), ", got ",
                     fields.size(), " in \"", line.substr(0, 80), "\""));
  }
  TrajectoryEntry entry;
  uint64_t step = 0;
  if (!ParseDigits(fields[0], std::numeric_limits<int64_t>::max(), &step)) {
    return LineError(path, line_number,
                     absl::StrCat("step \"", fields[0], "\" is not a decimal int64 >= 0"));
  }
  entry.step = static_cast<int64_t>(step);
  entry.directions.resize(static_cast<size_t>(directions));
  for (size_t i = 0; i < entry.directions.size(); ++i) {
    DirectionGradient& d = entry.directions[i];
    const absl::string_view seed = fields[1 + 2 * i];
    const absl::string_view g = fields[2 + 2 * i];
    if (!ParseDigits(seed, std::numeric_limits<uint64_t>::max(), &d.seed)) {
      return LineError(path, line_number,
                       absl::StrCat(DirectionField("seed", directions, i), " \"",
                                    seed.substr(0, 40), "\" is not a decimal uint64"));
    }
    if (!ParseFiniteFloat(g, &d.g)) {
      return LineError(path, line_number,
                       absl::StrCat(DirectionField("g", directions, i), " \"", g.substr(0, 40),
                                    "\" is not a finite float"));
    }
  }
  const absl::string_view lr = fields.back();
  if (!ParseFiniteFloat(lr, &entry.lr)) {
    return LineError(path, line_number,
                     absl::StrCat("lr \"", lr.substr(0, 40), "\" is not a finite float"));
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

// The line of one step, '\n' included: for q = 1 exactly v1's
// "%d %d %.9g %.9g\n".
std::string FormatEntry(int64_t step, const std::vector<DirectionGradient>& directions, float lr) {
  std::string line = absl::StrFormat("%d", step);
  for (const DirectionGradient& d : directions) {
    absl::StrAppendFormat(&line, " %d %.9g", d.seed, static_cast<double>(d.g));
  }
  absl::StrAppendFormat(&line, " %.9g\n", static_cast<double>(lr));
  return line;
}

}  // namespace

std::string TrajectoryHeader(uint64_t base_seed, int directions) {
  if (directions <= 1) return absl::StrCat(kHeaderV1Prefix, base_seed);
  return absl::StrCat(kHeaderV2Prefix, base_seed, kHeaderV2Directions, directions);
}

absl::StatusOr<std::vector<TrajectoryEntry>> ReadTrajectory(
    const std::string& path, std::optional<uint64_t> expected_base_seed,
    std::optional<int> expected_directions) {
  ASSIGN_OR_RETURN(const std::string bytes, ReadWholeFile(path));
  return ParseTrajectory(bytes, path, expected_base_seed, expected_directions);
}

absl::StatusOr<std::vector<TrajectoryEntry>> ParseTrajectory(
    absl::string_view bytes, const std::string& path, std::optional<uint64_t> expected_base_seed,
    std::optional<int> expected_directions) {
  if (bytes.empty()) return LineError(path, 1, "missing header: the file is empty");
  const bool ends_with_newline = bytes.back() == '\n';
  if (ends_with_newline) bytes.remove_suffix(1);
  std::vector<absl::string_view> lines = absl::StrSplit(bytes, '\n');
  if (!ends_with_newline) {
    return LineError(path, static_cast<int>(lines.size()),
                     "last line does not end with a newline (a write cut short?)");
  }
  ASSIGN_OR_RETURN(const Header header,
                   ParseHeader(path, lines[0], expected_base_seed, expected_directions));
  std::vector<TrajectoryEntry> entries;
  entries.reserve(lines.size() - 1);
  for (size_t i = 1; i < lines.size(); ++i) {
    const int line_number = static_cast<int>(i) + 1;
    ASSIGN_OR_RETURN(TrajectoryEntry entry,
                     ParseEntry(path, line_number, lines[i], header.directions));
    // step - 1, not back + 1: the previous step may be the largest int64.
    if (!entries.empty() && entry.step - 1 != entries.back().step) {
      return LineError(path, line_number,
                       absl::StrCat("step ", entry.step, " does not follow step ",
                                    entries.back().step, " (steps must be consecutive)"));
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

TrajectoryWriter::TrajectoryWriter(std::string path, std::FILE* file, int directions,
                                   std::optional<int64_t> last_step)
    : path_(std::move(path)), file_(file), directions_(directions), last_step_(last_step) {}

TrajectoryWriter::~TrajectoryWriter() { std::fclose(file_); }

absl::StatusOr<std::unique_ptr<TrajectoryWriter>> TrajectoryWriter::Open(const std::string& path,
                                                                         uint64_t base_seed,
                                                                         int directions) {
  if (directions < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot open a trajectory log for directions=", directions,
                     ": a step has at least 1 direction"));
  }
  std::optional<int64_t> last_step;
  bool is_new = true;
  {
    std::ifstream existing(path, std::ios::binary | std::ios::ate);
    if (existing && existing.tellg() > 0) is_new = false;
  }
  if (!is_new) {
    ASSIGN_OR_RETURN(std::vector<TrajectoryEntry> entries,
                     ReadTrajectory(path, base_seed, directions));
    if (!entries.empty()) last_step = entries.back().step;
  }
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "cannot open trajectory log %s for append: %s", path, std::strerror(errno)));
  }
  std::unique_ptr<TrajectoryWriter> writer(new TrajectoryWriter(path, file, directions, last_step));
  if (is_new) {
    const std::string header = TrajectoryHeader(base_seed, directions) + "\n";
    if (std::fputs(header.c_str(), file) < 0 || std::fflush(file) != 0) {
      return absl::PermissionDeniedError(absl::StrFormat(
          "cannot write the header of trajectory log %s: %s", path, std::strerror(errno)));
    }
  }
  return writer;
}

absl::Status TrajectoryWriter::Append(int64_t step,
                                      const std::vector<DirectionGradient>& directions, float lr) {
  if (step < 0) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": step ", step, " is negative"));
  }
  // step - 1, not last + 1: the last step may be the largest int64.
  if (last_step_.has_value() && step - 1 != *last_step_) {
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": step ", step, " does not follow the last logged step ", *last_step_));
  }
  if (directions.size() != static_cast<size_t>(directions_)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": step ", step, " has ", directions.size(),
                     " directions, but the log has directions=", directions_,
                     " (one seed and g for each direction of every step)"));
  }
  for (size_t i = 0; i < directions.size(); ++i) {
    if (!std::isfinite(directions[i].g)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: step %d: direction %d's g=%g must be finite", path_, step, i, directions[i].g));
    }
  }
  if (!std::isfinite(lr)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: step %d: lr=%g must be finite", path_, step, lr));
  }
  const std::string line = FormatEntry(step, directions, lr);
  if (std::fputs(line.c_str(), file_) < 0 || std::fflush(file_) != 0) {
    return absl::DataLossError(absl::StrFormat("error writing step %d to trajectory log %s: %s",
                                               step, path_, std::strerror(errno)));
  }
  last_step_ = step;
  return absl::OkStatus();
}

}  // namespace zosched
