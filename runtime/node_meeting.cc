#include "runtime/node_meeting.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/futex.h"

namespace zosched {
namespace {

constexpr int64_t kHeaderBytes = 64;

static_assert(sizeof(std::atomic<int32_t>) == sizeof(int32_t) &&
                  std::atomic<int32_t>::is_always_lock_free,
              "the vote slots must be plain, lock-free words in shared memory");

// *slot = max(*slot, vote).
void RaiseTo(std::atomic<int32_t>* slot, int32_t vote) {
  int32_t seen = slot->load(std::memory_order_relaxed);
  while (seen < vote && !slot->compare_exchange_weak(seen, vote, std::memory_order_acq_rel)) {
  }
}

}  // namespace

absl::Status RanksDidNotArrive(const std::string& what, const std::vector<int>& missing,
                               std::chrono::milliseconds limit) {
  return absl::DeadlineExceededError(absl::StrFormat(
      "%s: rank%s %s did not arrive within %d ms (stalled or died)", what,
      missing.size() > 1 ? "s" : "", absl::StrJoin(missing, ", "), limit.count()));
}

int64_t NodeMeeting::RegionBytes(int members) {
  return kHeaderBytes + static_cast<int64_t>(members) * sizeof(uint32_t);
}

NodeMeeting::NodeMeeting(char* region, int members, int member)
    : generation_(reinterpret_cast<std::atomic<uint32_t>*>(region)),
      arrived_(reinterpret_cast<std::atomic<uint32_t>*>(region + 4)),
      votes_(reinterpret_cast<std::atomic<int32_t>*>(region + 8)),
      last_arrival_(reinterpret_cast<std::atomic<uint32_t>*>(region + kHeaderBytes)),
      members_(members),
      member_(member) {}

absl::StatusOr<int> NodeMeeting::Meet(const std::string& what, int vote,
                                      std::chrono::milliseconds limit) {
  if (vote < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: rank %d brought the vote %d; votes are >= 0", what, member_, vote));
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  // No member can complete this meeting before this one arrives, so the
  // generation read here is the current meeting's.
  const uint32_t generation = generation_->load(std::memory_order_acquire);
  std::atomic<int32_t>* votes = &votes_[generation & 1];
  last_arrival_[member_].store(generation + 1, std::memory_order_relaxed);
  RaiseTo(votes, vote);
  if (arrived_->fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<uint32_t>(members_)) {
    const int result = votes->load(std::memory_order_acquire);
    votes_[(generation + 1) & 1].store(0, std::memory_order_relaxed);
    arrived_->store(0, std::memory_order_relaxed);
    generation_->store(generation + 1, std::memory_order_release);
    FutexWakeAll(generation_);
    return result;
  }
  while (generation_->load(std::memory_order_acquire) == generation) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::nanoseconds(0)) {
      std::vector<int> missing;
      for (int m = 0; m < members_; ++m) {
        if (last_arrival_[m].load(std::memory_order_relaxed) != generation + 1) {
          missing.push_back(m);
        }
      }
      if (missing.empty()) {
        return absl::DeadlineExceededError(absl::StrFormat(
            "%s: every rank arrived but the last did not release the others within %d ms "
            "(it stalled or died)",
            what, limit.count()));
      }
      return RanksDidNotArrive(what, missing, limit);
    }
    FutexWait(generation_, generation, left);
  }
  return votes->load(std::memory_order_acquire);
}

}  // namespace zosched
