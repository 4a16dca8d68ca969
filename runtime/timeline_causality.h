// What a measured Timeline's collectives say about its clocks.
//
// No member of a collective can finish it before every member has started
// it. Where a measured Timeline shows one member's end before another
// member's start, the clocks that timed the two (ranks on different
// machines, each timing from its own machine's reading of the run's epoch,
// runtime/mpi_world.h: SharedEpoch) disagree by at least that gap, and so
// do the overlaps and exposed times read across those ranks.
#pragma once

#include <cstdint>
#include <string>

#include "schedule/schedule.pb.h"
#include "schedule/timeline.pb.h"

namespace zosched {

struct CausalitySlip {
  int64_t ns = 0;  // 0: every collective's members started before any ended
  int32_t step = 0;
  std::string collective;  // its key
  int32_t ended_device = -1;    // the member that ended first
  int32_t started_device = -1;  // the member that started last
};

// The largest slip over every step of `timeline`'s collectives (ops of
// `schedule` with a collective; intervals of ops not in the schedule are
// ignored).
CausalitySlip LargestCausalitySlip(const Schedule& schedule, const Timeline& timeline);

}  // namespace zosched
