// The MeZO trajectory log: one text line per training step with the step's
// seeds, projected gradients and learning rate. Base weights plus this log
// determine the whole training run (docs/ARCHITECTURE.md, 'The
// algorithms'): replaying the updates of steps 0..t reproduces θ_t bitwise,
// which makes resume exact.
//
// A step perturbs along q >= 1 directions (n-SPSA), each with its own seed
// and projected gradient, and uses one learning rate. The format has two
// versions, chosen by q; a q = 1 log is v1, byte for byte what a log was
// before n-SPSA:
//
// v1 (q = 1; text, '\n' line ends):
//   # zosched trajectory v1 base_seed=<base seed, decimal uint64>
//   <step> <seed> <g> <lr>
//   ...
// v2 (q >= 2):
//   # zosched trajectory v2 base_seed=<base seed, decimal uint64> directions=<q, decimal>
//   <step> <seed_0> <g_0> <seed_1> <g_1> ... <seed_{q-1}> <g_{q-1}> <lr>
//   ...
// step: decimal int64 >= 0, consecutive (each line's step is the previous
// line's + 1; the first entry may be any step). seed_i: decimal uint64, the
// seed of direction i (zo_math.h: DirectionSeed(StepSeed(base seed, step),
// i); seed_0 is the step seed itself). g_i: direction i's projected gradient
// (fp32, loss units per unit of ε). lr: the learning rate η used for the step
// (fp32). Directions are in direction order. g_i and lr are printed with
// "%.9g", which round-trips every finite float exactly; all must be finite.
// Fields are separated by one space; every line has exactly 2 + 2q fields.
// Every line, the last included, ends with '\n'. A v2 header always has
// directions >= 2 (a one-direction log is v1).
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

// One direction of a step: its seed (zo_math.h DirectionSeed) and projected
// gradient (fp32, loss units per unit of ε).
struct DirectionGradient {
  uint64_t seed = 0;
  float g = 0.0f;
};

// One step of a trajectory.
struct TrajectoryEntry {
  int64_t step = 0;
  std::vector<DirectionGradient> directions;  // q >= 1, in direction order
  float lr = 0.0f;                            // η of the step, shared by its directions
};

// Appends steps to a trajectory log, one line per step, flushed (fflush, not
// fsync) after every line so a crash loses at most the line being written.
class TrajectoryWriter {
 public:
  // Opens `path` for append, for a run with base seed `base_seed` and
  // `directions` (q >= 1) directions a step. A file that does not exist (or
  // is empty) is created with the header for (`base_seed`, `directions`): v1
  // when q = 1, v2 otherwise. An existing file must be a valid trajectory
  // (ReadTrajectory) with that base seed and that many directions; the next
  // Append must then continue its steps.
  // Errors: InvalidArgument when `directions` < 1; InvalidArgument
  // "PATH:1: ..." naming what the file's header has, what this run has, and
  // what to do when an existing file's base seed or directions differ; the
  // other errors of ReadTrajectory for an existing file; PermissionDenied
  // naming the path and the OS reason when it cannot be opened or written.
  static absl::StatusOr<std::unique_ptr<TrajectoryWriter>> Open(const std::string& path,
                                                                uint64_t base_seed, int directions);

  TrajectoryWriter(const TrajectoryWriter&) = delete;
  TrajectoryWriter& operator=(const TrajectoryWriter&) = delete;
  ~TrajectoryWriter();

  // Writes the line "step seed_0 g_0 ... seed_{q-1} g_{q-1} lr" (for q = 1,
  // "step seed g lr") and flushes it. `directions`: the step's q directions,
  // in direction order.
  // Errors: InvalidArgument when `step` is negative or does not follow the
  // last step in the file (last + 1), `directions` does not hold exactly
  // directions() entries, or a g or lr is not finite; DataLoss naming the
  // path when the write or flush fails.
  absl::Status Append(int64_t step, const std::vector<DirectionGradient>& directions, float lr);

  // The last step in the file (read at Open or appended since); nullopt for a
  // log with no entries yet.
  std::optional<int64_t> last_step() const { return last_step_; }

  // q, the directions of every step in the file (Open's `directions`).
  int directions() const { return directions_; }

  const std::string& path() const { return path_; }

 private:
  TrajectoryWriter(std::string path, std::FILE* file, int directions,
                   std::optional<int64_t> last_step);

  std::string path_;
  std::FILE* file_;
  int directions_;
  std::optional<int64_t> last_step_;
};

// Returns the header line of a log with base seed `base_seed` and
// `directions` (q >= 1) directions a step, without '\n': the v1 header when
// q = 1 (or less), the v2 header otherwise.
std::string TrajectoryHeader(uint64_t base_seed, int directions);

// Reads the trajectory log at `path`: its entries in file order, each with
// the header's q directions. When `expected_base_seed` is set, the header's
// base seed must equal it; when `expected_directions` is set, the header's q
// (1 for a v1 header) must equal it.
// Errors: NotFound when the file cannot be opened; InvalidArgument
// "PATH:LINE: ..." for a missing or malformed header (a v2 header with
// directions < 2 included), a header whose base seed differs from
// `expected_base_seed` or whose q differs from `expected_directions`, a
// malformed entry (not exactly 2 + 2q single-space-separated fields, a
// number that does not parse or is out of range, a non-finite g or lr), a
// step that does not follow the previous one, or a last line without '\n'
// (a write cut short).
absl::StatusOr<std::vector<TrajectoryEntry>> ReadTrajectory(
    const std::string& path, std::optional<uint64_t> expected_base_seed = std::nullopt,
    std::optional<int> expected_directions = std::nullopt);

// As ReadTrajectory, from the log's contents `bytes`; `path` names the log in
// errors. Errors: the InvalidArgument errors of ReadTrajectory.
absl::StatusOr<std::vector<TrajectoryEntry>> ParseTrajectory(
    absl::string_view bytes, const std::string& path,
    std::optional<uint64_t> expected_base_seed = std::nullopt,
    std::optional<int> expected_directions = std::nullopt);

}  // namespace zosched
