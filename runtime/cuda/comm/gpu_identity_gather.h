// Which GPU each rank drives, gathered over MPI, to decide whether the
// schedule's collective groups can run on NCCL (gpu_identity.h).
#pragma once

#include <vector>

#include "absl/status/statusor.h"

namespace zosched {

// Collective over MPI_COMM_WORLD: every rank must call it, with the same
// `groups` (world ranks, e.g. every collective group of the schedule in order
// of first appearance), and each gets the same answer. `gpu`: the CUDA device
// index this rank drives (a cudaSetDevice index). Every rank contributes
// GpuIdentity(hostname, PCI bus id of `gpu`); true when within every group no
// two ranks name the same GPU (DistinctWithinGroups).
//
// Errors (on every rank, so that none is left waiting): Internal when a rank
// cannot name its GPU (that rank's error carries the CUDA or system error,
// the others name the rank), or for an MPI error.
absl::StatusOr<bool> GroupsHaveDistinctGpus(const std::vector<std::vector<int>>& groups, int gpu);

}  // namespace zosched
