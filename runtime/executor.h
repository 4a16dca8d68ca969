// The executor: runs one device's share of a Schedule, step after step, on a
// Backend. Each stream of the device is a worker thread that runs its ops in
// schedule order; an op first waits for the ops its edges name (events,
// OpEvents); the ops of a collective meet inside the backend's collective
// call. The calling thread only starts steps and waits for their end (the
// step boundary); it never drives a stream.
//
// Every op's start and end (steady clock, ns since the executor's epoch) are
// recorded for the Timeline.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/op_events.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline.pb.h"

namespace zosched {

class Executor {
 public:
  using Clock = std::chrono::steady_clock;

  // Prepares device `device` of `schedule` (both must outlive the executor)
  // and starts its stream threads, which wait for RunStep. `epoch`: time zero
  // of the recorded intervals (the same on every rank of a run).
  //
  // Errors: InvalidArgument for an edge to an op on another device (the CPU
  // runtime connects devices only through collectives) or to a missing op.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(const Schedule& schedule,
                                                          int device, Backend* backend,
                                                          Clock::time_point epoch);
  ~Executor();  // stops the threads

  // Runs every op of this device for step `inputs.step` and returns when all
  // are done, or the first error (the other streams are aborted and the
  // executor cannot run further steps).
  absl::Status RunStep(const StepInputs& inputs);

  // The intervals of every step run so far, in op order per step.
  const std::vector<OpInterval>& intervals() const { return intervals_; }
  // [start, end] of each step run so far (ns since the epoch).
  const std::vector<StepInterval>& steps() const { return steps_; }

 private:
  struct StreamWork {
    Stream stream;
    std::vector<int> ops;  // indices into ops_, in order
  };

  Executor(const Schedule& schedule, int device, Backend* backend, Clock::time_point epoch)
      : schedule_(schedule), device_(device), backend_(backend), epoch_(epoch) {}
  void StreamLoop(int stream);
  absl::Status RunOp(int op, const StepInputs& inputs);
  int64_t Now() const;

  const Schedule& schedule_;
  const int device_;
  Backend* const backend_;
  const Clock::time_point epoch_;

  std::vector<const Op*> ops_;              // this device's ops, in schedule order
  std::vector<std::vector<int>> waits_for_;  // per op: ops on other streams
  std::vector<StreamWork> streams_;
  std::unique_ptr<OpEvents> events_;
  std::vector<std::pair<int64_t, int64_t>> times_;  // per op, this step

  std::mutex mu_;
  std::condition_variable cv_;
  int64_t step_ = -1;           // the step the streams should run
  const StepInputs* inputs_ = nullptr;
  int streams_done_ = 0;
  bool stop_ = false;
  absl::Status error_;
  std::vector<std::thread> threads_;

  std::vector<OpInterval> intervals_;
  std::vector<StepInterval> steps_;
};

}  // namespace zosched
