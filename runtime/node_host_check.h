// The check that lets a node's shared memory be a schedule host's
// parameter store: the ranks of one node (one MPI shared-memory domain)
// must be exactly the devices the schedule puts on one host.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "runtime/mpi_world.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Collective over the node of `memory`: OK when every rank of the node
// runs a device of schedule host `host` (this rank's device's host) and
// the node's rank count is the number of devices `schedule` puts there.
// Errors: FailedPrecondition naming both hosts, or the device and rank
// counts, and how to start the ranks; Internal for MPI errors.
absl::Status CheckNodeIsOneHost(const Schedule& schedule, const NodeSharedMemory& memory,
                                const std::string& host);

}  // namespace zosched
