// Whether a schedule's collective groups can run on NCCL: NCCL refuses two
// ranks of one communicator on the same GPU ("Duplicate GPU detected"), so
// the CUDA backend picks NCCL only when, within every group, each rank has
// its own GPU, and MPI over pinned host memory otherwise
// (docs/ARCHITECTURE.md, 'Runtime').
//
// This file is the decision alone, free of CUDA and MPI so that it is tested
// everywhere; gpu_identity_gather.h collects the identities over MPI.
#pragma once

#include <string>
#include <vector>

namespace zosched {

// The identity of one GPU as NCCL tells GPUs apart: the host it is in and its
// PCI bus id (as cudaDeviceGetPCIBusId writes it, e.g. "0000:3B:00.0"):
// "host/bus-id". Equal strings are the same physical GPU.
std::string GpuIdentity(const std::string& host, const std::string& pci_bus_id);

// True when within every group of `groups` (world ranks) no two ranks have
// the same identity; `identity_of_rank[r]` is world rank r's (GpuIdentity).
// Ranks in different groups may share a GPU. A group that names a rank
// outside identity_of_rank, or names one rank twice, is not distinct
// (false). No groups: true.
bool DistinctWithinGroups(const std::vector<std::vector<int>>& groups,
                          const std::vector<std::string>& identity_of_rank);

}  // namespace zosched
