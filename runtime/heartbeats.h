// Which ranks of this node, and which other machines, are alive. Each
// rank's thread stamps the time into its slot of a small node-shared window
// every `period`; a rank whose stamp is old has stalled (SIGSTOP, a
// debugger, a hung driver call) or died. Where the job spans machines, the
// first rank of each machine's thread also sends every other machine's
// first rank a heartbeat over MPI each period and stamps, in the window,
// when it last heard from each machine: a machine whose ranks are stopped
// or dead, or whose link is cut, falls silent. When a wait times out, the
// rank that noticed names the silent ranks and machines, so the error says
// who held the job up, not only what it waited for.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/mpi_world.h"

namespace zosched {

class Heartbeats {
 public:
  // Collective over MPI_COMM_WORLD: allocates the node's slots, and where
  // the job spans machines and MPI allows calls from any thread
  // (MPI_THREAD_MULTIPLE) the machines' first ranks' communicator; starts
  // this rank's thread. Errors: those of NodeSharedMemory, Internal for MPI
  // errors.
  static absl::StatusOr<std::unique_ptr<Heartbeats>> Start(std::chrono::milliseconds period);
  ~Heartbeats();  // stops the thread (the window and communicator are freed collectively)

  // The ranks of this node silent for longer than `silence`, as
  // "rank 3 (silent for 6.2 s)", comma-separated; "" when none.
  std::string SilentRanks(std::chrono::milliseconds silence) const;
  // The other machines not heard from for longer than `silence`, as
  // "node2 (ranks 2,3; silent for 10.1 s)", comma-separated; "" when none,
  // or when the job runs on one machine or MPI allows no such thread.
  std::string SilentMachines(std::chrono::milliseconds silence) const;

 private:
  struct Slot {
    std::atomic<int32_t> world_rank;
    std::atomic<int64_t> stamp_ns;  // steady clock; the ranks share the node's clock
  };
  Heartbeats() = default;
  Slot* slot(int node_rank) const;
  // When this node last heard from machine `m` (m indexes machines_); its
  // world_rank field is unused.
  Slot* machine_slot(int m) const;
  // The first rank of a machine, once a period: sends the other machines'
  // first ranks a heartbeat where the last one has left, and stamps each
  // machine heard from since.
  void ExchangeWithMachines(int64_t now_ns);

  std::unique_ptr<NodeSharedMemory> memory_;
  int node_ranks_ = 0;
  int world_size_ = 1;
  std::vector<std::string> machines_;            // each machine once, in order of first rank
  std::vector<std::string> machine_ranks_;       // per machine: "2,3"
  int this_machine_ = 0;
  bool covers_machines_ = false;                 // several machines, MPI_THREAD_MULTIPLE
  MPI_Comm leaders_ = MPI_COMM_NULL;             // the machines' first ranks, by machine
  std::vector<MPI_Request> sends_;               // per leader; MPI_REQUEST_NULL when none
  int64_t beat_ = 0;                             // what a heartbeat carries: this_machine_
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace zosched
