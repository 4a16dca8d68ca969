// The measured Timeline of a run: every rank's intervals gathered over MPI
// into rank 0's one Timeline, the runtime's counterpart of the simulator's
// prediction (schedule/timeline.proto).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/executor.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline.pb.h"

namespace zosched {

// Collective over MPI_COMM_WORLD and blocking (hold a Watch): each rank's
// op intervals and steps from `executor`, and its `probes`, merged on rank
// 0 into a MEASURED Timeline of `schedule`: the ops and probes as each rank
// measured them (ns from the world's shared epoch), each step from its
// earliest start to its latest end over the ranks; the producer names the
// `backend` and the rank count. The other ranks get an empty Timeline.
// Errors: Internal for MPI errors or a rank's bytes that do not parse.
absl::StatusOr<Timeline> GatherMeasuredTimeline(const Schedule& schedule,
                                                const Executor& executor,
                                                const std::vector<SpeedProbeSample>& probes,
                                                const std::string& backend);

}  // namespace zosched
