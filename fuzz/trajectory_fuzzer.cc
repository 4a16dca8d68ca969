// libFuzzer target: any bytes as a MeZO trajectory log, parsed by
// ParseTrajectory (runtime/zo/trajectory_log.h), the reader behind resume.
// A log that parses must keep the format's promises: consecutive steps from
// a non-negative first one, the same number of directions (at least one) on
// every line, finite g and lr.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/check.h"
#include "runtime/zo/trajectory_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<zosched::TrajectoryEntry>> entries =
      zosched::ParseTrajectory(bytes, "fuzz.log");
  if (!entries.ok()) return 0;
  for (size_t i = 0; i < entries->size(); ++i) {
    const zosched::TrajectoryEntry& e = (*entries)[i];
    CHECK(e.step >= 0 && std::isfinite(e.lr)) << "entry " << i;
    CHECK(!e.directions.empty() && e.directions.size() == entries->front().directions.size())
        << "entry " << i;
    for (const zosched::DirectionGradient& d : e.directions) {
      CHECK(std::isfinite(d.g)) << "entry " << i;
    }
    CHECK(i == 0 || e.step - 1 == (*entries)[i - 1].step) << "entry " << i;
  }
  return 0;
}
