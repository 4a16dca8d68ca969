#include "runtime/node_all_gather.h"

#include <algorithm>
#include <cstring>

#include "runtime/futex.h"

namespace zosched {
namespace {

constexpr int64_t kHeaderBytes = 64;

}  // namespace

int64_t NodeAllGather::RegionBytes(int members, int64_t slot_bytes) {
  return kHeaderBytes + 2 * static_cast<int64_t>(members) * slot_bytes;
}

NodeAllGather::NodeAllGather(char* region, int members, int member, int64_t slot_bytes)
    : arrivals_(reinterpret_cast<std::atomic<uint32_t>*>(region)),
      slots_(region + kHeaderBytes),
      members_(members),
      member_(member),
      slot_bytes_(slot_bytes) {}

char* NodeAllGather::Slot(uint32_t round, int member) const {
  return slots_ + (static_cast<int64_t>(round & 1) * members_ + member) * slot_bytes_;
}

absl::Status NodeAllGather::AllGather(void* buffer, int64_t chunk_bytes,
                                      std::chrono::steady_clock::time_point deadline) {
  char* bytes = static_cast<char*>(buffer);
  for (int64_t offset = 0; offset < chunk_bytes; offset += slot_bytes_) {
    const absl::Status round =
        Round(bytes, chunk_bytes, offset, std::min(slot_bytes_, chunk_bytes - offset), deadline);
    if (!round.ok()) return round;
  }
  return absl::OkStatus();
}

absl::Status NodeAllGather::Round(char* buffer, int64_t chunk_bytes, int64_t offset,
                                  int64_t bytes, std::chrono::steady_clock::time_point deadline) {
  const uint32_t round = rounds_;
  std::memcpy(Slot(round, member_), buffer + member_ * chunk_bytes + offset, bytes);
  // Complete when every member has arrived at this round: the counter then
  // reaches members * (round + 1) (compared as a signed difference, so the
  // counter may wrap).
  const uint32_t complete = static_cast<uint32_t>(members_) * (round + 1);
  const uint32_t now = arrivals_->fetch_add(1, std::memory_order_acq_rel) + 1;
  if (now == complete) FutexWakeAll(arrivals_);
  for (;;) {
    const uint32_t seen = arrivals_->load(std::memory_order_acquire);
    if (static_cast<int32_t>(seen - complete) >= 0) break;
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::nanoseconds(0)) {
      return absl::DeadlineExceededError("the other members did not all arrive in time");
    }
    FutexWait(arrivals_, seen, left);
  }
  for (int m = 0; m < members_; ++m) {
    if (m != member_) std::memcpy(buffer + m * chunk_bytes + offset, Slot(round, m), bytes);
  }
  rounds_ = round + 1;
  return absl::OkStatus();
}

}  // namespace zosched
