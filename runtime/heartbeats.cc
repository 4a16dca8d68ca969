#include "runtime/heartbeats.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace zosched {
namespace {

constexpr int kHeartbeatTag = 17;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

absl::Status MpiError(const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  return absl::InternalError(absl::StrFormat("heartbeats: %s failed: %s", call, text));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Heartbeats>> Heartbeats::Start(std::chrono::milliseconds period) {
  std::unique_ptr<Heartbeats> h(new Heartbeats());
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &h->world_size_);
  // Enough slots for any node's ranks, then for any number of machines.
  ASSIGN_OR_RETURN(h->memory_, NodeSharedMemory::Allocate(2 * h->world_size_ * sizeof(Slot)));
  MPI_Comm_size(h->memory_->node(), &h->node_ranks_);

  ASSIGN_OR_RETURN(const std::vector<std::string> rank_machines, MachineOfEachRank());
  std::vector<std::vector<int>> ranks_of;
  for (int r = 0; r < static_cast<int>(rank_machines.size()); ++r) {
    int m = 0;
    while (m < static_cast<int>(h->machines_.size()) && h->machines_[m] != rank_machines[r]) ++m;
    if (m == static_cast<int>(h->machines_.size())) {
      h->machines_.push_back(rank_machines[r]);
      ranks_of.emplace_back();
    }
    ranks_of[m].push_back(r);
    if (r == world_rank) h->this_machine_ = m;
  }
  for (const std::vector<int>& ranks : ranks_of) h->machine_ranks_.push_back(absl::StrJoin(ranks, ","));
  h->beat_ = h->this_machine_;

  if (h->machines_.size() > 1) {
    // Only where every rank may call MPI from any thread.
    int provided = MPI_THREAD_SINGLE, lowest = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (const int e = MPI_Allreduce(&provided, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        e != MPI_SUCCESS) {
      return MpiError("MPI_Allreduce", e);
    }
    h->covers_machines_ = lowest == MPI_THREAD_MULTIPLE;
    const bool leader = h->memory_->node_rank() == 0 && h->covers_machines_;
    if (const int e = MPI_Comm_split(MPI_COMM_WORLD, leader ? 0 : MPI_UNDEFINED, world_rank,
                                     &h->leaders_);
        e != MPI_SUCCESS) {
      return MpiError("MPI_Comm_split", e);
    }
    if (h->leaders_ != MPI_COMM_NULL) {
      MPI_Comm_set_errhandler(h->leaders_, MPI_ERRORS_RETURN);
      int leaders = 0;
      MPI_Comm_size(h->leaders_, &leaders);
      h->sends_.assign(leaders, MPI_REQUEST_NULL);
    }
  }

  const int64_t now = NowNs();
  Slot* mine = h->slot(h->memory_->node_rank());
  mine->world_rank.store(world_rank);
  mine->stamp_ns.store(now);
  if (h->memory_->node_rank() == 0) {
    for (int m = 0; m < static_cast<int>(h->machines_.size()); ++m) {
      h->machine_slot(m)->stamp_ns.store(now);
    }
  }
  RETURN_IF_ERROR(h->memory_->NodeBarrier());  // every slot is filled
  Heartbeats* self = h.get();
  h->thread_ = std::thread([self, mine, period] {
    while (!self->stop_.load()) {
      const int64_t t = NowNs();
      mine->stamp_ns.store(t);
      if (self->leaders_ != MPI_COMM_NULL) self->ExchangeWithMachines(t);
      std::this_thread::sleep_for(period);
    }
  });
  return h;
}

void Heartbeats::ExchangeWithMachines(int64_t now_ns) {
  int me = 0;
  MPI_Comm_rank(leaders_, &me);
  for (int l = 0; l < static_cast<int>(sends_.size()); ++l) {
    if (l == me) continue;
    if (sends_[l] != MPI_REQUEST_NULL) {
      int done = 0;
      // An error (the peer's link failed) leaves the request to the end.
      if (MPI_Test(&sends_[l], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done) continue;
    }
    MPI_Isend(&beat_, 1, MPI_INT64_T, l, kHeartbeatTag, leaders_, &sends_[l]);
  }
  for (;;) {
    int waiting = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, kHeartbeatTag, leaders_, &waiting, &status) != MPI_SUCCESS ||
        !waiting) {
      return;
    }
    int64_t machine = -1;
    if (MPI_Recv(&machine, 1, MPI_INT64_T, status.MPI_SOURCE, kHeartbeatTag, leaders_,
                 MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      return;
    }
    if (machine >= 0 && machine < static_cast<int64_t>(machines_.size())) {
      machine_slot(static_cast<int>(machine))->stamp_ns.store(now_ns);
    }
  }
}

Heartbeats::~Heartbeats() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  if (leaders_ != MPI_COMM_NULL) {
    // Heartbeats still under way complete on their own; those the others
    // never received are dropped with the communicator.
    for (MPI_Request& send : sends_) {
      if (send != MPI_REQUEST_NULL) MPI_Request_free(&send);
    }
    MPI_Comm_free(&leaders_);
  }
}

Heartbeats::Slot* Heartbeats::slot(int node_rank) const {
  return reinterpret_cast<Slot*>(memory_->data()) + node_rank;
}

Heartbeats::Slot* Heartbeats::machine_slot(int m) const {
  return reinterpret_cast<Slot*>(memory_->data()) + world_size_ + m;
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

std::string Heartbeats::SilentMachines(std::chrono::milliseconds silence) const {
  if (!covers_machines_) return "";
  const int64_t now = NowNs();
  std::vector<std::string> silent;
  for (int m = 0; m < static_cast<int>(machines_.size()); ++m) {
    if (m == this_machine_) continue;
    const int64_t age = now - machine_slot(m)->stamp_ns.load();
    if (age > std::chrono::nanoseconds(silence).count()) {
      silent.push_back(absl::StrFormat("%s (ranks %s; silent for %.1f s)", machines_[m],
                                       machine_ranks_[m], age * 1e-9));
    }
  }
  return absl::StrJoin(silent, ", ");
}

}  // namespace zosched
