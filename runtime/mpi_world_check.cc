// What the runtime relies on in runtime/mpi_world.h, checked on real MPI
// processes (mpi_world_test.sh runs this under mpirun with 2 and 4 ranks):
// - node-shared memory: every rank of the node maps the same zeroed bytes,
//   and a NodeBarrier or SleepingBarrier makes one rank's stores visible to
//   the others; every rank of the node gets the same SharedEpoch;
// - the world meeting through that memory (all ranks on this machine):
//   every rank gets the largest vote of each meeting, and a rank that does
//   not come is named by the others at the deadline;
// - all-gathers over every group and sub-group, in place: rank r's chunk
//   lands at position r of the group on every member, byte for byte;
// - a participant that never arrives makes AllGather fail with
//   DeadlineExceeded naming the group, within its timeout, not hang;
// - MeetAll names the ranks that did not come and, where they run on
//   another machine, that machine.
// Prints "rank R: ok" when every check passed; exits 1 at the first failure.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/mpi_world.h"
#include "runtime/rank_check.h"

namespace zosched {
namespace {

using rank_check::Check;
using rank_check::CheckOk;
using rank_check::g_rank;

void SharedMemory(int world) {
  constexpr int64_t kBytes = 4096;
  absl::StatusOr<std::unique_ptr<NodeSharedMemory>> memory = NodeSharedMemory::Allocate(kBytes);
  CheckOk(memory.status(), "NodeSharedMemory::Allocate");
  NodeSharedMemory& m = **memory;
  Check(m.size() == kBytes, "the shared memory has the size asked for");
  for (int64_t i = 0; i < kBytes; ++i) Check(m.data()[i] == 0, "the shared memory starts zeroed");
  CheckOk(m.NodeBarrier(), "NodeBarrier");  // everyone has checked before anyone writes
  m.data()[g_rank] = static_cast<char>(1 + g_rank);
  CheckOk(m.NodeBarrier(), "NodeBarrier");
  for (int r = 0; r < world; ++r) {
    Check(m.data()[r] == static_cast<char>(1 + r),
          absl::StrFormat("rank %d's store is visible after NodeBarrier", r));
  }
  // SleepingBarrier (the whole world) orders stores to the window too.
  if (g_rank == world - 1) m.data()[kBytes - 1] = 42;
  CheckOk(SleepingBarrier(std::chrono::microseconds(50)), "SleepingBarrier");
  Check(m.data()[kBytes - 1] == 42, "the last rank's store is visible after SleepingBarrier");
  CheckOk(SleepingBarrier(std::chrono::microseconds(50)), "SleepingBarrier");

  // Every rank of the node gets the same epoch, read on the node's first
  // rank before the call returned anywhere.
  const auto before = std::chrono::steady_clock::now();
  absl::StatusOr<std::chrono::steady_clock::time_point> epoch = m.SharedEpoch();
  CheckOk(epoch.status(), "SharedEpoch");
  const auto after = std::chrono::steady_clock::now();
  Check(*epoch <= after, "the shared epoch is not in the future");
  if (m.node_rank() == 0) Check(*epoch >= before, "the first rank's epoch is its own reading");
  int64_t mine = epoch->time_since_epoch().count();
  std::vector<int64_t> all(world);
  Check(MPI_Allgather(&mine, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, m.node()) ==
            MPI_SUCCESS,
        "MPI_Allgather of the epochs");
  for (int r = 0; r < world; ++r) {
    Check(all[r] == mine, absl::StrFormat("rank %d's shared epoch equals this rank's", r));
  }
}

// The world meeting: 200 meetings with votes from different ranks, then
// one the last rank skips (named by the others at their 300 ms deadline),
// on a fresh allocation (the skipped meeting leaves the first unusable).
void WorldMeeting(int world) {
  {
    absl::StatusOr<std::unique_ptr<NodeSharedMemory>> memory = NodeSharedMemory::Allocate(64);
    CheckOk(memory.status(), "NodeSharedMemory::Allocate");
    NodeMeeting* meeting = (*memory)->world_meeting();
    Check(meeting != nullptr, "every rank on one machine: the memory holds the world meeting");
    for (int i = 0; i < 200; ++i) {
      const int vote = i % world == g_rank ? i % 7 : 0;
      absl::StatusOr<int> got = meeting->Meet(absl::StrFormat("meeting %d", i), vote,
                                              std::chrono::seconds(60));
      CheckOk(got.status(), "Meet");
      Check(*got == (i % 7), absl::StrFormat("meeting %d: every rank gets the largest vote", i));
    }
    CheckOk((*memory)->NodeBarrier(), "NodeBarrier");
  }
  absl::StatusOr<std::unique_ptr<NodeSharedMemory>> memory = NodeSharedMemory::Allocate(64);
  CheckOk(memory.status(), "NodeSharedMemory::Allocate");
  if (g_rank != world - 1) {
    absl::StatusOr<int> got = (*memory)->world_meeting()->Meet(
        "the meeting at step 3", 0, std::chrono::milliseconds(300));
    Check(absl::IsDeadlineExceeded(got.status()) &&
              got.status().message() ==
                  absl::StrFormat("the meeting at step 3: rank %d did not arrive within 300 ms "
                                  "(stalled or died)",
                                  world - 1),
          "the rank that did not come is named, got: " + got.status().ToString());
  }
  CheckOk((*memory)->NodeBarrier(), "NodeBarrier");
}

// MeetAll (over MPI), with the upper half of the ranks said to run on
// another machine: a meeting all come to, then one that only rank 0 comes
// to; at its 300 ms deadline rank 0
// names the ranks that did not come, and the machine whose link may have
// failed.
void MeetingAcrossMachines(int world) {
  std::vector<std::string> machines(world, "node1");
  for (int r = world / 2; r < world; ++r) machines[r] = "node2";
  // First a meeting that every rank comes to (the first MeetAll is
  // collective: it sets up MeetAll's communicator).
  absl::StatusOr<int> all = MeetAll("the meeting at step 4", g_rank == world - 1 ? 9 : 1,
                                    std::chrono::seconds(60), std::chrono::microseconds(100),
                                    machines);
  CheckOk(all.status(), "MeetAll");
  Check(*all == 9, "MeetAll gives every rank the largest vote");
  if (g_rank == 0) {
    absl::StatusOr<int> got = MeetAll("the meeting at step 5", 0, std::chrono::milliseconds(300),
                                      std::chrono::microseconds(100), machines);
    std::vector<int> missing, here, there;  // every other rank; on node1; on node2
    for (int r = 1; r < world; ++r) {
      missing.push_back(r);
      (r < world / 2 ? here : there).push_back(r);
    }
    const std::string on_node1 =
        here.empty() ? "" : absl::StrCat("node1 (ranks ", absl::StrJoin(here, ","), ", this one), ");
    const std::string expected = absl::StrFormat(
        "the meeting at step 5: rank%s %s did not arrive within 300 ms (stalled or died), or "
        "the link to its machine failed (the ranks are on %snode2 (ranks %s))",
        missing.size() > 1 ? "s" : "", absl::StrJoin(missing, ", "), on_node1,
        absl::StrJoin(there, ","));
    Check(absl::IsDeadlineExceeded(got.status()) && got.status().message() == expected,
          "rank 0 names the ranks missing and their machine, expected: " + expected +
              ", got: " + got.status().ToString());
  }
  CheckOk(SleepingBarrier(std::chrono::microseconds(100)), "SleepingBarrier");
}

// The byte rank `r` puts at offset `i` of its chunk.
char Pattern(int r, int64_t i) { return static_cast<char>(r * 31 + i * 7 + 1); }

void AllGathers(int world) {
  std::vector<std::vector<int>> groups;
  std::vector<int> all;
  for (int r = 0; r < world; ++r) all.push_back(r);
  groups.push_back(all);
  if (world >= 4) {
    groups.push_back({0, 2});
    groups.push_back({1, 3});
  }
  absl::StatusOr<std::unique_ptr<MpiCollectives>> collectives =
      MpiCollectives::Create(groups, std::chrono::seconds(60));
  CheckOk(collectives.status(), "MpiCollectives::Create");
  constexpr int64_t kChunk = 1000;  // not a multiple of anything in particular
  for (const std::vector<int>& group : groups) {
    int position = -1;
    for (size_t p = 0; p < group.size(); ++p) {
      if (group[p] == g_rank) position = static_cast<int>(p);
    }
    if (position < 0) continue;
    std::vector<char> buffer(group.size() * kChunk, 0);
    for (int64_t i = 0; i < kChunk; ++i) buffer[position * kChunk + i] = Pattern(g_rank, i);
    CheckOk((*collectives)->AllGather(group, buffer.data(), kChunk), "AllGather");
    for (size_t p = 0; p < group.size(); ++p) {
      for (int64_t i = 0; i < kChunk; ++i) {
        Check(buffer[p * kChunk + i] == Pattern(group[p], i),
              absl::StrFormat("chunk %d of a group of %d holds rank %d's bytes", p, group.size(),
                              group[p]));
      }
    }
  }
}

// Rank 1 comes to an all-gather of ranks {0, 1} whose timeout is 1 s only
// once rank 0 has given up on it (rank 0 says so in a message): however
// fast or loaded the machine, rank 1 is late. Rank 0 must fail with
// DeadlineExceeded naming the group, after its whole timeout; rank 1's late
// call completes while rank 0 drives MPI in the barrier that follows.
void Timeout() {
  constexpr int kGaveUpTag = 7117;
  absl::StatusOr<std::unique_ptr<MpiCollectives>> collectives =
      MpiCollectives::Create({{0, 1}}, std::chrono::seconds(1));
  CheckOk(collectives.status(), "MpiCollectives::Create");
  std::vector<char> buffer(2 * 8, 0);
  if (g_rank == 0) {
    const auto start = std::chrono::steady_clock::now();
    const absl::Status status = (*collectives)->AllGather({0, 1}, buffer.data(), 8);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Check(absl::IsDeadlineExceeded(status),
          "a missing participant is DeadlineExceeded, got: " + status.ToString());
    Check(status.message().find("all-gather among ranks 0,1 did not complete within 1 s") !=
              std::string::npos,
          "the timeout names the group: " + status.ToString());
    Check(waited >= 1.0, "AllGather waited its timeout before failing");
    char gave_up = 1;
    Check(MPI_Send(&gave_up, 1, MPI_CHAR, 1, kGaveUpTag, MPI_COMM_WORLD) == MPI_SUCCESS,
          "rank 0 tells rank 1 it gave up");
  } else if (g_rank == 1) {
    // Waits for rank 0's word without spinning (ranks share the cores).
    char gave_up = 0;
    MPI_Request request;
    Check(MPI_Irecv(&gave_up, 1, MPI_CHAR, 0, kGaveUpTag, MPI_COMM_WORLD, &request) == MPI_SUCCESS,
          "MPI_Irecv");
    for (int done = 0; !done;) {
      Check(MPI_Test(&request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Test");
      if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CheckOk((*collectives)->AllGather({0, 1}, buffer.data(), 8), "the late AllGather");
  }
  CheckOk(SleepingBarrier(std::chrono::microseconds(100)), "SleepingBarrier");
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  const int world = zosched::rank_check::StartRanks("mpi_world_check", &argc, &argv);
  zosched::SharedMemory(world);
  zosched::WorldMeeting(world);
  zosched::AllGathers(world);
  zosched::Timeout();
  zosched::MeetingAcrossMachines(world);
  std::printf("rank %d: ok\n", zosched::g_rank);
  MPI_Finalize();
  return 0;
}
