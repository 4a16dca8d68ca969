// The machines a run's ranks start on (train --hosts and --hostfile, in
// mpirun's conventions), and the check that they match the schedule's
// hosts before any rank starts.
//
// mpirun places ranks on the listed machines by slot, in order: the first
// machine's slots take ranks 0 .. s0 - 1, the next machine's the next ones,
// and so on. A schedule's device d runs as rank d, and the devices of one
// schedule host share that host's parameter store in one machine's shared
// memory (runtime/node_host_check.h): so each machine's ranks must be
// exactly the devices of one schedule host.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// One machine and how many ranks start there.
struct NodeSlots {
  std::string node;  // its name as mpirun reaches it (hostname or address)
  int slots = 1;     // >= 1
};

// mpirun's --host syntax: "node1:2,node2:2" (name[:slots], slots 1 when
// left out). Errors: InvalidArgument naming the entry: empty, a name with
// spaces, slots not a whole number from 1 to 4096, a machine listed twice.
absl::StatusOr<std::vector<NodeSlots>> ParseHostList(const std::string& text);

// An Open MPI hostfile: a machine a line, "name" or "name slots=N", blank
// lines and '#' comments ignored. Errors: NotFound when the file cannot be
// read; InvalidArgument naming the file and line of an entry
// ParseHostList would refuse, or any other word on a line.
absl::StatusOr<std::vector<NodeSlots>> ReadHostfile(const std::string& path);

// The list as mpirun's --host value ("node1:2,node2:2").
std::string HostListFlag(const std::vector<NodeSlots>& nodes);

// OK when `nodes`, filled by slot in order, start each schedule host's
// devices (in schedule device order) as the ranks of one machine, every
// slot used. Errors: InvalidArgument saying which rank, device and host
// would land where, and the list that would fit (the schedule's hosts with
// their device counts, in order).
absl::Status CheckRanksOnHosts(const Schedule& schedule, const std::vector<NodeSlots>& nodes);

}  // namespace zosched
