#include "runtime/watchdog.h"

#include <mpi.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

namespace zosched {
namespace {

using Clock = std::chrono::steady_clock;

struct Watched {
  std::string what;
  std::chrono::seconds limit;
  Clock::time_point deadline;
};

// The watches alive in this process and the thread that enforces them.
class Watchdog {
 public:
  static Watchdog& Get() {
    static Watchdog* const watchdog = new Watchdog();  // never destroyed: the thread outlives main
    return *watchdog;
  }

  int64_t Add(std::string what, std::chrono::seconds limit) {
    std::lock_guard<std::mutex> lock(mutex_);
    const int64_t id = next_id_++;
    watched_[id] = {std::move(what), limit, Clock::now() + limit};
    changed_.notify_one();
    return id;
  }

  void Remove(int64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    watched_.erase(id);
    changed_.notify_one();
  }

 private:
  Watchdog() { std::thread([this] { Enforce(); }).detach(); }

  void Enforce() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (watched_.empty()) {
        changed_.wait(lock);
        continue;
      }
      auto first = watched_.begin();
      for (auto it = watched_.begin(); it != watched_.end(); ++it) {
        if (it->second.deadline < first->second.deadline) first = it;
      }
      // A copy: the watch may end (and its entry go) while this waits.
      const Clock::time_point deadline = first->second.deadline;
      if (Clock::now() < deadline) {
        changed_.wait_until(lock, deadline);
        continue;
      }
      Fire(first->second);
    }
  }

  [[noreturn]] static void Fire(const Watched& w) {
    int initialized = 0, finalized = 0, rank = -1;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    const bool mpi = initialized && !finalized;
    if (mpi) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr,
                 "rank %d: %s did not finish within %lld s: another rank stalled or died "
                 "(or --collective_timeout_s is too short); stopping the job\n",
                 rank, w.what.c_str(), static_cast<long long>(w.limit.count()));
    std::fflush(stderr);
    if (mpi) MPI_Abort(MPI_COMM_WORLD, 1);
    _exit(1);
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int64_t, Watched> watched_;
  int64_t next_id_ = 0;
};

}  // namespace

Watch::Watch(std::string what, std::chrono::seconds limit)
    : id_(Watchdog::Get().Add(std::move(what), limit)) {}

Watch::~Watch() { Watchdog::Get().Remove(id_); }

}  // namespace zosched
