#include "runtime/cuda/comm/registered_calls.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace zosched {
namespace {

absl::Status CheckCall(const AllGatherCall& call, RegisteredCalls::ChunkLimit limit) {
  const auto bad = [&](const char* what) {
    return absl::InvalidArgumentError(
        absl::StrFormat("all-gather %s (op %d): %s", call.label, call.op_id, what));
  };
  if (call.group.empty()) return bad("no participants");
  if (call.rank_in_group < 0 || call.rank_in_group >= static_cast<int>(call.group.size())) {
    return bad("rank_in_group is not a position in the group");
  }
  if (call.device_recv == nullptr) return bad("no device buffer");
  if (limit == RegisteredCalls::ChunkLimit::kMpiCount) {
    if (call.chunk_bytes <= 0 || call.chunk_bytes > INT32_MAX) {
      return bad("chunk_bytes must be in [1, 2^31 - 1]");
    }
  } else if (call.chunk_bytes <= 0) {
    return bad("chunk_bytes must be positive");
  }
  return absl::OkStatus();
}

bool SameCall(const AllGatherCall& a, const AllGatherCall& b) {
  return a.group == b.group && a.rank_in_group == b.rank_in_group &&
         a.device_recv == b.device_recv && a.chunk_bytes == b.chunk_bytes;
}

}  // namespace

absl::StatusOr<RegisteredCalls> RegisteredCalls::Register(const std::vector<AllGatherCall>& calls,
                                                          ChunkLimit limit) {
  RegisteredCalls registered;
  for (size_t i = 0; i < calls.size(); ++i) {
    const AllGatherCall& call = calls[i];
    if (absl::Status s = CheckCall(call, limit); !s.ok()) return s;
    if (!registered.index_of_op_.emplace(call.op_id, static_cast<int>(i)).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("all-gather %s: op %d is registered twice", call.label, call.op_id));
    }
  }
  registered.calls_ = calls;
  return registered;
}

absl::StatusOr<int> RegisteredCalls::IndexOf(const AllGatherCall& call) const {
  const auto it = index_of_op_.find(call.op_id);
  if (it == index_of_op_.end()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "all-gather %s: op %d was not registered at set-up", call.label, call.op_id));
  }
  if (!SameCall(call, calls_[it->second])) {
    return absl::InvalidArgumentError(
        absl::StrFormat("all-gather %s: differs from the call registered at set-up for op %d",
                        call.label, call.op_id));
  }
  return it->second;
}

}  // namespace zosched
