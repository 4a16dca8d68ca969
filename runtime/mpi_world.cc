#include "runtime/mpi_world.h"

#include <errno.h>  // program_invocation_short_name
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "runtime/usable_cores.h"

namespace zosched {
namespace {

absl::Status MpiError(int code, const char* what) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return absl::InternalError(absl::StrFormat("%s failed: %s", what, std::string(text, length)));
}

#define MPI_RETURN_IF_ERROR(call)                              \
  do {                                                         \
    const int zosched_mpi_code_ = (call);                      \
    if (zosched_mpi_code_ != MPI_SUCCESS) return MpiError(zosched_mpi_code_, #call); \
  } while (false)

}  // namespace

absl::Status InitMpi(int* argc, char*** argv, int* rank, int* size) {
  // A launcher naming hosts gives mpirun alone its session base
  // (runtime/launcher.h); a rank inherits the setting, and Open MPI refuses
  // it beside the base the rank's daemon passes down.
  unsetenv("OMPI_MCA_orte_local_tmpdir_base");
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    return absl::InternalError(absl::StrFormat(
        "MPI provides thread level %d; the runtime needs MPI_THREAD_SERIALIZED or better",
        provided));
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return absl::OkStatus();
}

void AbortWorld(const std::string& message, int code) {
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) {
    std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, message.c_str());
  } else {
    std::fprintf(stderr, "rank %d: %s\n", rank, message.c_str());
  }
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

absl::Status SleepingBarrier(std::chrono::microseconds pause) {
  MPI_Request request;
  MPI_RETURN_IF_ERROR(MPI_Ibarrier(MPI_COMM_WORLD, &request));
  for (int done = 0;;) {
    MPI_RETURN_IF_ERROR(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return absl::OkStatus();
    std::this_thread::sleep_for(pause);
  }
}

namespace {

// Polls `requests` until all are complete, `deadline` passes (false) or MPI
// fails. `done[i]` says which completed.
absl::StatusOr<bool> PollUntil(std::vector<MPI_Request>* requests, std::vector<int>* done,
                               std::chrono::steady_clock::time_point deadline,
                               std::chrono::microseconds pause) {
  done->assign(requests->size(), 0);
  for (;;) {
    bool all = true;
    for (size_t i = 0; i < requests->size(); ++i) {
      if ((*done)[i]) continue;
      MPI_RETURN_IF_ERROR(MPI_Test(&(*requests)[i], &(*done)[i], MPI_STATUS_IGNORE));
      all = all && (*done)[i];
    }
    if (all) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(pause);
  }
}

// MeetAll's communicator: a duplicate of MPI_COMM_WORLD, so its messages
// never match anyone else's. Duplicated at the first meeting (every rank's
// first MeetAll is the same call), within that meeting's deadline.
absl::StatusOr<MPI_Comm> MeetingComm(std::chrono::steady_clock::time_point deadline,
                                     std::chrono::microseconds pause) {
  static MPI_Comm comm = MPI_COMM_NULL;
  if (comm != MPI_COMM_NULL) return comm;
  std::vector<MPI_Request> request(1);
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_RETURN_IF_ERROR(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &request[0]));
  std::vector<int> done;
  ASSIGN_OR_RETURN(const bool complete, PollUntil(&request, &done, deadline, pause));
  if (!complete) return absl::DeadlineExceededError("the ranks' first meeting never completed");
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  comm = dup;
  return comm;
}

}  // namespace

absl::StatusOr<int> MeetAll(const std::string& what, int vote, std::chrono::milliseconds limit,
                            std::chrono::microseconds pause,
                            const std::vector<std::string>& machines) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto grace = rank == 0 ? std::chrono::seconds(0) : std::chrono::seconds(5);
  const auto deadline = std::chrono::steady_clock::now() + limit + grace;
  ASSIGN_OR_RETURN(const MPI_Comm comm, MeetingComm(deadline, pause));
  std::vector<int> done;
  if (rank != 0) {
    int result = 0;
    std::vector<MPI_Request> requests(2);
    MPI_RETURN_IF_ERROR(MPI_Isend(&vote, 1, MPI_INT, 0, 0, comm, &requests[0]));
    MPI_RETURN_IF_ERROR(MPI_Irecv(&result, 1, MPI_INT, 0, 0, comm, &requests[1]));
    ASSIGN_OR_RETURN(const bool complete, PollUntil(&requests, &done, deadline, pause));
    if (!complete) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "%s: rank 0 did not release rank %d within %d ms (rank 0, or a rank it waits for, "
          "stalled or died)%s",
          what, rank, (limit + grace).count(), LinkFailureHint(machines, {0}, rank)));
    }
    return result;
  }
  std::vector<int> votes(size, vote);
  std::vector<MPI_Request> arrivals(size - 1);
  for (int r = 1; r < size; ++r) {
    MPI_RETURN_IF_ERROR(MPI_Irecv(&votes[r], 1, MPI_INT, r, 0, comm, &arrivals[r - 1]));
  }
  ASSIGN_OR_RETURN(const bool complete, PollUntil(&arrivals, &done, deadline, pause));
  if (!complete) {
    std::vector<int> missing;
    for (int r = 1; r < size; ++r) {
      if (done[r - 1]) continue;
      missing.push_back(r);
      // A late arrival must not land in `votes` once this returns; a
      // receive's cancel completes at once.
      MPI_Cancel(&arrivals[r - 1]);
      MPI_Wait(&arrivals[r - 1], MPI_STATUS_IGNORE);
    }
    const absl::Status late = RanksDidNotArrive(what, missing, limit);
    return absl::DeadlineExceededError(
        absl::StrCat(late.message(), LinkFailureHint(machines, missing, rank)));
  }
  int result = *std::max_element(votes.begin(), votes.end());
  std::vector<MPI_Request> releases(size - 1);
  for (int r = 1; r < size; ++r) {
    MPI_RETURN_IF_ERROR(MPI_Isend(&result, 1, MPI_INT, r, 0, comm, &releases[r - 1]));
  }
  ASSIGN_OR_RETURN(const bool released, PollUntil(&releases, &done, deadline, pause));
  if (!released) {
    return absl::DeadlineExceededError(
        absl::StrFormat("%s: the other ranks did not take their release", what));
  }
  return result;
}

namespace {

// Every rank's `bytes` on `root` (all ranks when root < 0), in rank order:
// the sizes gathered first, then the bytes at their offsets.
absl::StatusOr<std::vector<std::string>> GatherBytes(MPI_Comm comm, int root,
                                                     const std::string& bytes) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine = bytes.size();
  std::vector<int> sizes(size), offsets(size);
  if (root < 0) {
    MPI_RETURN_IF_ERROR(MPI_Allgather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm));
  } else {
    MPI_RETURN_IF_ERROR(MPI_Gather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, root, comm));
  }
  const bool receives = root < 0 || rank == root;
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[r] = total;
    total += sizes[r];
  }
  std::string all(receives ? total : 0, '\0');
  if (root < 0) {
    MPI_RETURN_IF_ERROR(MPI_Allgatherv(bytes.data(), mine, MPI_CHAR, all.data(), sizes.data(),
                                       offsets.data(), MPI_CHAR, comm));
  } else {
    MPI_RETURN_IF_ERROR(MPI_Gatherv(bytes.data(), mine, MPI_CHAR, all.data(), sizes.data(),
                                    offsets.data(), MPI_CHAR, root, comm));
  }
  std::vector<std::string> gathered;
  if (!receives) return gathered;
  for (int r = 0; r < size; ++r) gathered.push_back(all.substr(offsets[r], sizes[r]));
  return gathered;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> GatherToRankZero(const std::string& bytes) {
  return GatherBytes(MPI_COMM_WORLD, /*root=*/0, bytes);
}

absl::StatusOr<std::vector<std::string>> AllGatherStrings(MPI_Comm comm, const std::string& text) {
  return GatherBytes(comm, /*root=*/-1, text);
}

absl::StatusOr<std::vector<std::string>> MachineOfEachRank() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return AllGatherStrings(MPI_COMM_WORLD, name);
}

absl::StatusOr<std::unique_ptr<NodeSharedMemory>> NodeSharedMemory::Allocate(int64_t bytes) {
  std::unique_ptr<NodeSharedMemory> m(new NodeSharedMemory());
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_RETURN_IF_ERROR(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank,
                                          MPI_INFO_NULL, &m->node_));
  MPI_Comm_set_errhandler(m->node_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(m->node_, &m->node_rank_);
  int world_size = 1;
  MPI_Comm_size(m->node_, &m->node_size_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const int node_size = m->node_size_;
  // The meeting's region first, rounded up to 64 bytes, then the core
  // turns, then the data.
  const int64_t meeting_bytes = (NodeMeeting::RegionBytes(node_size) + 63) / 64 * 64;
  const int cores = UsableCores();
  const int64_t turns_bytes = CoreTurns::RegionBytes(cores);
  const int64_t header_bytes = meeting_bytes + turns_bytes;
  const MPI_Aint mine = m->node_rank_ == 0 ? header_bytes + bytes : 0;
  void* base = nullptr;
  MPI_RETURN_IF_ERROR(
      MPI_Win_allocate_shared(mine, 64, MPI_INFO_NULL, m->node_, &base, &m->window_));
  MPI_Aint size = 0;
  int disp = 0;
  MPI_RETURN_IF_ERROR(MPI_Win_shared_query(m->window_, 0, &size, &disp, &base));
  char* region = static_cast<char*>(base);
  m->data_ = region + header_bytes;
  m->bytes_ = bytes;
  if (m->node_rank_ == 0) std::memset(region, 0, header_bytes + bytes);
  m->core_turns_ = std::make_unique<CoreTurns>(region + meeting_bytes, cores);
  // Ranks were ordered by world rank on the node: with the whole world
  // here, node rank = world rank.
  if (node_size == world_size) {
    m->meeting_ = std::make_unique<NodeMeeting>(region, node_size, m->node_rank_);
  }
  if (absl::Status s = m->NodeBarrier(); !s.ok()) return s;
  return m;
}

NodeSharedMemory::~NodeSharedMemory() {
  if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);
  if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
}

absl::Status NodeSharedMemory::NodeBarrier() const {
  // The barrier also orders the ranks' plain loads and stores of the window
  // (the MPI unified memory model on one node).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  MPI_RETURN_IF_ERROR(MPI_Barrier(node_));
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return absl::OkStatus();
}

namespace {

constexpr int kClockTag = 0x5e0c;
constexpr int kClockPings = 16;

int64_t SteadyTicks() { return std::chrono::steady_clock::now().time_since_epoch().count(); }

// On world rank 0: how far `leader`'s steady clock reads ahead of this
// rank's (ticks), from the ping of kClockPings with the shortest round trip:
// the leader's reading is taken as the round trip's midpoint here. The
// leader runs AnswerClockPings.
absl::StatusOr<int64_t> ClockOffsetOf(int leader) {
  int64_t best_round_trip = INT64_MAX, offset = 0;
  for (int i = 0; i < kClockPings; ++i) {
    const int64_t sent = SteadyTicks();
    int64_t theirs = 0;
    MPI_RETURN_IF_ERROR(MPI_Send(&sent, 1, MPI_INT64_T, leader, kClockTag, MPI_COMM_WORLD));
    MPI_RETURN_IF_ERROR(
        MPI_Recv(&theirs, 1, MPI_INT64_T, leader, kClockTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    const int64_t back = SteadyTicks();
    if (back - sent < best_round_trip) {
      best_round_trip = back - sent;
      offset = theirs - (sent + (back - sent) / 2);
    }
  }
  return offset;
}

absl::Status AnswerClockPings() {
  for (int i = 0; i < kClockPings; ++i) {
    int64_t ping = 0;
    MPI_RETURN_IF_ERROR(
        MPI_Recv(&ping, 1, MPI_INT64_T, 0, kClockTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    const int64_t now = SteadyTicks();
    MPI_RETURN_IF_ERROR(MPI_Send(&now, 1, MPI_INT64_T, 0, kClockTag, MPI_COMM_WORLD));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::chrono::steady_clock::time_point> NodeSharedMemory::SharedEpoch() const {
  using Clock = std::chrono::steady_clock;
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  // World rank 0 (its node's first rank) reads the epoch; each other node's
  // first rank gets it in its own clock.
  const int leads = node_rank_ == 0 ? 1 : 0;
  std::vector<int> leaders(world_size);
  MPI_RETURN_IF_ERROR(
      MPI_Gather(&leads, 1, MPI_INT, leaders.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
  int64_t ticks = 0;
  if (world_rank == 0) {
    ticks = SteadyTicks();
    for (int r = 1; r < world_size; ++r) {
      if (!leaders[r]) continue;
      ASSIGN_OR_RETURN(const int64_t offset, ClockOffsetOf(r));
      const int64_t theirs = ticks + offset;
      MPI_RETURN_IF_ERROR(MPI_Send(&theirs, 1, MPI_INT64_T, r, kClockTag, MPI_COMM_WORLD));
    }
  } else if (leads) {
    RETURN_IF_ERROR(AnswerClockPings());
    MPI_RETURN_IF_ERROR(
        MPI_Recv(&ticks, 1, MPI_INT64_T, 0, kClockTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
  MPI_RETURN_IF_ERROR(MPI_Bcast(&ticks, 1, MPI_INT64_T, 0, node_));
  return Clock::time_point(Clock::duration(ticks));
}

absl::StatusOr<std::unique_ptr<MpiCollectives>> MpiCollectives::Create(
    const std::vector<std::vector<int>>& groups, std::chrono::seconds timeout) {
  std::unique_ptr<MpiCollectives> c(new MpiCollectives());
  c->timeout_ = timeout;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::vector<int>& members = groups[i];
    if (std::find(members.begin(), members.end(), rank) == members.end()) continue;
    if (c->comms_.count(members)) continue;
    MPI_Group group;
    MPI_Group_incl(world, members.size(), members.data(), &group);
    MPI_Comm comm = MPI_COMM_NULL;
    const int code = MPI_Comm_create_group(MPI_COMM_WORLD, group, static_cast<int>(i), &comm);
    MPI_Group_free(&group);
    if (code != MPI_SUCCESS) {
      MPI_Group_free(&world);
      return MpiError(code, absl::StrFormat("MPI_Comm_create_group for ranks %s",
                                            absl::StrJoin(members, ","))
                                .c_str());
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    c->comms_[members] = comm;
  }
  MPI_Group_free(&world);
  RETURN_IF_ERROR(c->ShareNodeGroups(groups));
  // Which machine each rank runs on, for errors that name them.
  ASSIGN_OR_RETURN(c->machines_, MachineOfEachRank());
  c->rank_ = rank;
  return c;
}

std::string LinkFailureHint(const std::vector<std::string>& machines, const std::vector<int>& ranks,
                            int self) {
  const auto machine = [&machines](int r) -> std::string {
    return r >= 0 && r < static_cast<int>(machines.size()) ? machines[r] : "?";
  };
  const std::string mine = machine(self);
  if (machines.empty() ||
      std::all_of(ranks.begin(), ranks.end(), [&](int r) { return machine(r) == mine; })) {
    return "";
  }
  std::vector<std::pair<std::string, std::vector<int>>> by_machine;  // in order of first rank
  for (int r : ranks) {
    const std::string m = machine(r);
    auto it = std::find_if(by_machine.begin(), by_machine.end(),
                           [&m](const auto& entry) { return entry.first == m; });
    if (it == by_machine.end()) it = by_machine.insert(by_machine.end(), {m, {}});
    it->second.push_back(r);
  }
  return absl::StrCat(
      ", or the link to its machine failed (the ranks are on ",
      absl::StrJoin(by_machine, ", ",
                    [&mine](std::string* out, const auto& entry) {
                      absl::StrAppend(out, entry.first, " (ranks ",
                                      absl::StrJoin(entry.second, ","),
                                      entry.first == mine ? ", this one)" : ")");
                    }),
      ")");
}

namespace {

// Staging slot per member of a node-local group: larger chunks go through
// in rounds of this many bytes.
constexpr int64_t kNodeSlotBytes = 1 << 20;

}  // namespace

absl::Status MpiCollectives::ShareNodeGroups(const std::vector<std::vector<int>>& groups) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  MPI_RETURN_IF_ERROR(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_));
  MPI_Comm_set_errhandler(node_, MPI_ERRORS_RETURN);
  int node_rank = 0;
  MPI_Comm_rank(node_, &node_rank);
  // Each rank's machine, named by the world rank of its first rank there.
  int leader = rank;
  MPI_RETURN_IF_ERROR(MPI_Bcast(&leader, 1, MPI_INT, 0, node_));
  std::vector<int> machine(world);
  MPI_RETURN_IF_ERROR(
      MPI_Allgather(&leader, 1, MPI_INT, machine.data(), 1, MPI_INT, MPI_COMM_WORLD));
  // The groups wholly on this machine, in the same order on each of its
  // ranks, and where each one's region starts.
  std::vector<std::pair<const std::vector<int>*, int64_t>> local;
  int64_t bytes = 0;
  for (const std::vector<int>& members : groups) {
    const bool here = std::all_of(members.begin(), members.end(),
                                  [&](int r) { return r >= 0 && r < world && machine[r] == leader; });
    const bool seen = std::any_of(local.begin(), local.end(),
                                  [&](const auto& l) { return *l.first == members; });
    if (!here || seen) continue;
    local.emplace_back(&members, bytes);
    bytes += NodeAllGather::RegionBytes(static_cast<int>(members.size()), kNodeSlotBytes);
  }
  void* base = nullptr;
  MPI_RETURN_IF_ERROR(MPI_Win_allocate_shared(node_rank == 0 ? std::max<int64_t>(bytes, 1) : 0,
                                              64, MPI_INFO_NULL, node_, &base, &window_));
  MPI_Aint size = 0;
  int disp = 0;
  MPI_RETURN_IF_ERROR(MPI_Win_shared_query(window_, 0, &size, &disp, &base));
  char* region = static_cast<char*>(base);
  for (const auto& [members, start] : local) {
    // Only the headers need zeroing; slots are written before they are read.
    if (node_rank == 0) std::memset(region + start, 0, 64);
    const auto position = std::find(members->begin(), members->end(), rank);
    if (position == members->end()) continue;
    node_groups_.emplace(*members, NodeAllGather(region + start, static_cast<int>(members->size()),
                                                 static_cast<int>(position - members->begin()),
                                                 kNodeSlotBytes));
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  MPI_RETURN_IF_ERROR(MPI_Barrier(node_));
  return absl::OkStatus();
}

MpiCollectives::~MpiCollectives() {
  for (auto& [members, comm] : comms_) MPI_Comm_free(&comm);
  if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);
  if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
}

absl::StatusOr<MPI_Comm> MpiCollectives::Comm(const std::vector<int>& group) const {
  const auto it = comms_.find(group);
  if (it == comms_.end()) {
    return absl::NotFoundError(absl::StrFormat(
        "no MPI communicator for ranks %s (not created at setup)", absl::StrJoin(group, ",")));
  }
  return it->second;
}

absl::Status MpiCollectives::AllGather(const std::vector<int>& group, void* buffer,
                                       int64_t chunk_bytes) {
  auto it = comms_.find(group);
  if (it == comms_.end()) {
    return absl::InternalError(absl::StrFormat(
        "no communicator for ranks %s (not created at setup)", absl::StrJoin(group, ",")));
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  auto late = [&] {
    return absl::DeadlineExceededError(absl::StrFormat(
        "all-gather among ranks %s did not complete within %d s: a participant "
        "died or never reached it%s",
        absl::StrJoin(group, ","), timeout_.count(), LinkFailureHint(machines_, group, rank_)));
  };
  if (auto node = node_groups_.find(group); node != node_groups_.end()) {
    const absl::Status status = node->second.AllGather(buffer, chunk_bytes, deadline);
    return absl::IsDeadlineExceeded(status) ? late() : status;
  }
  if (chunk_bytes > INT32_MAX) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "all-gather chunk of %d bytes exceeds MPI's int count", chunk_bytes));
  }
  MPI_Request request;
  MPI_RETURN_IF_ERROR(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_BYTE, buffer,
                                     static_cast<int>(chunk_bytes), MPI_BYTE, it->second,
                                     &request));
  auto pause = std::chrono::microseconds(5);
  for (;;) {
    int done = 0;
    MPI_RETURN_IF_ERROR(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return absl::OkStatus();
    if (std::chrono::steady_clock::now() > deadline) return late();
    // Back off to 100 µs: only groups that span machines poll (a node's
    // own groups sleep in the kernel, node_all_gather.h), and an
    // all-gather's rounds each wait for every member's next poll. Backing
    // off to 1 ms let the two-node testbed's loss all-gather end 1.2 ms
    // after its last member came, where its messages take 0.1 ms.
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(100));
  }
}

}  // namespace zosched
