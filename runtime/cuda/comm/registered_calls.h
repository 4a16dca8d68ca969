// The all-gathers a communicator registers at set-up, found again by op id at
// each enqueue: the checks both communicators (host_staged_communicator.h,
// nccl_communicator.h) make of the calls they are given.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "runtime/cuda/comm/device_communicator.h"

namespace zosched {

class RegisteredCalls {
 public:
  // How large one chunk may be: any positive size, or what fits an MPI
  // count (an int).
  enum class ChunkLimit { kPositive, kMpiCount };

  // Registers `calls`, call i at index i. Errors, InvalidArgument: a call
  // without participants, with rank_in_group outside its group, without a
  // device buffer or with chunk_bytes outside `limit` ("all-gather LABEL (op
  // ID): what is wrong"), or an op_id registered twice.
  static absl::StatusOr<RegisteredCalls> Register(const std::vector<AllGatherCall>& calls,
                                                  ChunkLimit limit);

  // The index of the registered call that `call` is. Errors, InvalidArgument:
  // its op was not registered, or it differs from the registered call (its
  // group, position, buffer or chunk size).
  absl::StatusOr<int> IndexOf(const AllGatherCall& call) const;

 private:
  std::vector<AllGatherCall> calls_;
  absl::flat_hash_map<int64_t, int> index_of_op_;  // op_id -> calls_ index
};

}  // namespace zosched
