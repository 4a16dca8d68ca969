// Which ranks of this node are alive: each rank's thread stamps the time into
// its slot of a small node-shared window every `period`; a rank whose stamp
// is old has stalled (SIGSTOP, a debugger, a hung driver call) or died. When
// a wait times out, the rank that noticed names the silent ranks, so the
// error says who held the job up, not only what it waited for. Ranks on
// other nodes are not covered (their silence shows as a wait that timed
// out).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "runtime/mpi_world.h"

namespace zosched {

class Heartbeats {
 public:
  // Collective over MPI_COMM_WORLD: allocates the node's slots and starts
  // this rank's stamping thread. Errors: those of NodeSharedMemory.
  static absl::StatusOr<std::unique_ptr<Heartbeats>> Start(std::chrono::milliseconds period);
  ~Heartbeats();  // stops the thread (the window is freed collectively)

  // The ranks of this node silent for longer than `silence`, as
  // "rank 3 (silent for 6.2 s)", comma-separated; "" when none.
  std::string SilentRanks(std::chrono::milliseconds silence) const;

 private:
  struct Slot {
    std::atomic<int32_t> world_rank;
    std::atomic<int64_t> stamp_ns;  // steady clock; the ranks share the node's clock
  };
  Heartbeats() = default;
  Slot* slot(int node_rank) const;

  std::unique_ptr<NodeSharedMemory> memory_;
  int node_ranks_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace zosched
