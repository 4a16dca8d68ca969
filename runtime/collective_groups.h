// The participant groups of a schedule's collectives, the same list on every
// rank: what MPI sub-communicators and NCCL communicators are made for.
#pragma once

#include <vector>

#include "schedule/schedule.pb.h"

namespace zosched {

// Each distinct `participants` list of the schedule's collective ops (device
// ids in the op's order), in order of first appearance.
std::vector<std::vector<int>> CollectiveGroups(const Schedule& schedule);

}  // namespace zosched
