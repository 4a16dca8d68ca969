#include "runtime/heartbeats.h"

#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace zosched {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Heartbeats>> Heartbeats::Start(std::chrono::milliseconds period) {
  std::unique_ptr<Heartbeats> h(new Heartbeats());
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);  // enough slots for any node
  ASSIGN_OR_RETURN(h->memory_, NodeSharedMemory::Allocate(size * sizeof(Slot)));
  MPI_Comm_size(h->memory_->node(), &h->node_ranks_);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  Slot* mine = h->slot(h->memory_->node_rank());
  mine->world_rank.store(world_rank);
  mine->stamp_ns.store(NowNs());
  RETURN_IF_ERROR(h->memory_->NodeBarrier());  // every slot is filled
  Heartbeats* self = h.get();
  h->thread_ = std::thread([self, mine, period] {
    while (!self->stop_.load()) {
      mine->stamp_ns.store(NowNs());
      std::this_thread::sleep_for(period);
    }
  });
  return h;
}

Heartbeats::~Heartbeats() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

Heartbeats::Slot* Heartbeats::slot(int node_rank) const {
  return reinterpret_cast<Slot*>(memory_->data()) + node_rank;
}

std::string Heartbeats::SilentRanks(std::chrono::milliseconds silence) const {
  const int64_t now = NowNs();
  std::vector<std::string> silent;
  for (int r = 0; r < node_ranks_; ++r) {
    const int64_t age = now - slot(r)->stamp_ns.load();
    if (age > std::chrono::nanoseconds(silence).count()) {
      silent.push_back(
          absl::StrFormat("rank %d (silent for %.1f s)", slot(r)->world_rank.load(), age * 1e-9));
    }
  }
  return absl::StrJoin(silent, ", ");
}

}  // namespace zosched
