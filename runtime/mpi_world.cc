#include "runtime/mpi_world.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

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
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "rank %d: %s\n", rank, message.c_str());
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

absl::StatusOr<std::unique_ptr<NodeSharedMemory>> NodeSharedMemory::Allocate(int64_t bytes) {
  std::unique_ptr<NodeSharedMemory> m(new NodeSharedMemory());
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_RETURN_IF_ERROR(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank,
                                          MPI_INFO_NULL, &m->node_));
  MPI_Comm_set_errhandler(m->node_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(m->node_, &m->node_rank_);
  const MPI_Aint mine = m->node_rank_ == 0 ? std::max<int64_t>(bytes, 1) : 0;
  void* base = nullptr;
  MPI_RETURN_IF_ERROR(
      MPI_Win_allocate_shared(mine, 1, MPI_INFO_NULL, m->node_, &base, &m->window_));
  MPI_Aint size = 0;
  int disp = 0;
  MPI_RETURN_IF_ERROR(MPI_Win_shared_query(m->window_, 0, &size, &disp, &base));
  m->data_ = static_cast<char*>(base);
  m->bytes_ = bytes;
  if (m->node_rank_ == 0 && bytes > 0) std::memset(m->data_, 0, bytes);
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
  return c;
}

MpiCollectives::~MpiCollectives() {
  for (auto& [members, comm] : comms_) MPI_Comm_free(&comm);
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
  if (chunk_bytes > INT32_MAX) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "all-gather chunk of %d bytes exceeds MPI's int count", chunk_bytes));
  }
  MPI_Request request;
  MPI_RETURN_IF_ERROR(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_BYTE, buffer,
                                     static_cast<int>(chunk_bytes), MPI_BYTE, it->second,
                                     &request));
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  auto pause = std::chrono::microseconds(5);
  for (;;) {
    int done = 0;
    MPI_RETURN_IF_ERROR(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return absl::OkStatus();
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "all-gather among ranks %s did not complete within %d s: a participant "
          "died or never reached it",
          absl::StrJoin(group, ","), timeout_.count()));
    }
    // Back off to 1 ms: a waiting rank's poller then costs the cores it
    // shares with computing ranks little (at 200 µs it cost ~10 %).
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

}  // namespace zosched
