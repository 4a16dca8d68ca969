// A deadline for waits that cannot carry one themselves: MPI_Init, the
// blocking MPI collectives of start-up (shared memory, communicators) and
// of the end (gathering the timeline, freeing the shared window). While a
// Watch is alive and not over within its limit, the process prints
//   rank R: WHAT did not finish within N s: ...; stopping the job
// to stderr and ends the job: MPI_Abort when MPI is initialised, else
// _exit(1) (mpirun then stops the other ranks). So a stalled or dead rank
// can hold the others no longer than the limit, wherever they wait.
//
// Thread-safe; one watchdog thread per process, started at the first Watch.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace zosched {

class Watch {
 public:
  // Watches `what` (named in the message) for at most `limit`.
  Watch(std::string what, std::chrono::seconds limit);
  ~Watch();
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

 private:
  int64_t id_;
};

}  // namespace zosched
