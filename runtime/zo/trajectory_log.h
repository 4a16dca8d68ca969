// The MeZO trajectory log: one text line per training step with the step's
// seed, projected gradient and learning rate. Base weights plus this log
// determine the whole training run (docs/ARCHITECTURE.md, 'The
// algorithms'): replaying the updates of steps 0..t reproduces θ_t bitwise,
// which makes resume exact.
//
// Format (text, '\n' line ends):
//   # zosched trajectory v1 base_seed=<base seed, decimal uint64>
//   <step> <seed> <g> <lr>
//   ...
// step: decimal int64 >= 0, consecutive (each line's step is the previous
// line's + 1; the first entry may be any step). seed: decimal uint64, the step
// seed (zo_math.h: StepSeed). g: the projected gradient (fp32, loss units per
// unit of ε). lr: the learning rate η used for the step (fp32). g and lr are
// printed with "%.9g", which round-trips every finite float exactly; both
// must be finite. Every line, the last included, ends with '\n'.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace zosched {

// One step of a trajectory.
struct TrajectoryEntry {
  int64_t step = 0;
  uint64_t seed = 0;
  float g = 0.0f;
  float lr = 0.0f;
};

// Appends steps to a trajectory log, one line per step, flushed (fflush, not
// fsync) after every line so a crash loses at most the line being written.
class TrajectoryWriter {
 public:
  // Opens `path` for append. A file that does not exist (or is empty) is
  // created with the header for `base_seed`. An existing file must be a valid
  // trajectory (ReadTrajectory) with base seed `base_seed`; the next Append
  // must then continue its steps.
  // Errors: PermissionDenied naming the path and the OS reason when it cannot
  // be opened or written; the errors of ReadTrajectory for an existing file.
  static absl::StatusOr<std::unique_ptr<TrajectoryWriter>> Open(const std::string& path,
                                                                uint64_t base_seed);

  TrajectoryWriter(const TrajectoryWriter&) = delete;
  TrajectoryWriter& operator=(const TrajectoryWriter&) = delete;
  ~TrajectoryWriter();

  // Writes the line "step seed g lr" and flushes it.
  // Errors: InvalidArgument when `step` is negative or does not follow the
  // last step in the file (last + 1), or g or lr is not finite; DataLoss
  // naming the path when the write or flush fails.
  absl::Status Append(int64_t step, uint64_t seed, float g, float lr);

  // The last step in the file (read at Open or appended since); nullopt for a
  // log with no entries yet.
  std::optional<int64_t> last_step() const { return last_step_; }

  const std::string& path() const { return path_; }

 private:
  TrajectoryWriter(std::string path, std::FILE* file, std::optional<int64_t> last_step);

  std::string path_;
  std::FILE* file_;
  std::optional<int64_t> last_step_;
};

// Returns the header line of a log with base seed `base_seed`, without '\n'.
std::string TrajectoryHeader(uint64_t base_seed);

// Reads the trajectory log at `path`: its entries in file order. When
// `expected_base_seed` is set, the header's base seed must equal it.
// Errors: NotFound when the file cannot be opened; InvalidArgument
// "PATH:LINE: ..." for a missing or malformed header, a header whose base
// seed differs from `expected_base_seed`, a malformed entry (not exactly four
// single-space-separated fields, a number that does not parse or is out of
// range, a non-finite g or lr), a step that does not follow the previous one,
// or a last line without '\n' (a write cut short).
absl::StatusOr<std::vector<TrajectoryEntry>> ReadTrajectory(
    const std::string& path, std::optional<uint64_t> expected_base_seed = std::nullopt);

// As ReadTrajectory, from the log's contents `bytes`; `path` names the log in
// errors. Errors: the InvalidArgument errors of ReadTrajectory.
absl::StatusOr<std::vector<TrajectoryEntry>> ParseTrajectory(
    absl::string_view bytes, const std::string& path,
    std::optional<uint64_t> expected_base_seed = std::nullopt);

}  // namespace zosched
