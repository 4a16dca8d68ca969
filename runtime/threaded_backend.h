// A Backend whose streams are host worker threads (host_streams.h) and whose
// ops run synchronously on them: the CPU testbed's way of being a device.
// Subclasses implement the three op kinds as blocking calls; this class
// turns them into enqueued work, times each op on the steady clock, names
// the failing op in errors, and keeps each step slot's inputs and result.
// A step's ops are held from BeginStep until Go and then start together
// (HostStreams::Hold), so the trainer can enqueue a step, meet the other
// ranks at a barrier, and start: the testbed's ranks start a step as one.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "runtime/backend.h"
#include "runtime/host_streams.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The calling thread's CPU time in ns (CLOCK_THREAD_CPUTIME_ID): what it
// ran, not the time slices other threads got on its core.
int64_t ThreadCpuNs();

class ThreadedBackend : public Backend {
 public:
  // `device`: the schedule device id (for error messages); `batch_size` and
  // `seq_len`: the shape of the step inputs BeginStep copies.
  ThreadedBackend(int device, int batch_size, int seq_len)
      : device_(device), batch_size_(batch_size), seq_len_(seq_len) {}

  absl::Status Start(const std::vector<Stream>& streams, int events, int ops,
                     std::chrono::steady_clock::time_point epoch) override;
  absl::Status BeginStep(int slot, const StepInputs& inputs) override;
  absl::Status EnqueueOp(int slot, int stream, int op_index, const Op& op) override;
  absl::Status RecordEvent(int stream, int event) override;
  absl::Status WaitEvent(int stream, int event) override;
  absl::Status EndStep(int slot) override;
  absl::Status Go() override;
  absl::Status WaitStep(int slot, std::vector<OpTime>* times, StepResult* result) override;

  // Each runs one op to completion on the calling stream thread.
  virtual absl::Status RunCopy(const Op& op) = 0;
  virtual absl::Status RunCollective(const Op& op) = 0;
  // `result`: the step's result, for ops that produce it.
  virtual absl::Status RunCompute(const Op& op, const StepInputs& inputs, StepResult* result) = 0;
  // Called once on each stream's thread before it runs anything.
  virtual void PrepareStreamThread(const Stream& stream) {}
  // Around each compute op, on its stream's thread: waits until the device
  // may compute (devices sharing a core take turns), and ends that turn.
  // The op's start time is taken once the turn has come.
  virtual absl::Status TakeComputeTurn() { return absl::OkStatus(); }
  virtual void GiveComputeTurn() {}
  // Called once for each compute op, before its TakeComputeTurn, the moment
  // it may start (HostStreams' `ready`: its stream's work before it done,
  // the op before it counting as done before it gives its turn), on any
  // thread, with the streams' lock held: short, never blocking.
  virtual void ComputeOpReady() {}
  // Called by EndStep on its caller's thread (the rank's main thread), once
  // the step is enqueued and held: from here until StepReleased it meets
  // the other ranks and releases the step.
  virtual void StepHeld() {}
  // Called by Go on its caller's thread, once a step, before the held
  // step's ops are released; an error leaves the step unstarted.
  virtual absl::Status BeforeStepStarts() { return absl::OkStatus(); }
  // Called by Go on its caller's thread once the step's ops are released.
  virtual void StepReleased() {}

 protected:
  // Stops the stream threads; a subclass calls it first in its destructor,
  // so that no thread runs an op on a half-destroyed object.
  void StopStreams() { streams_.reset(); }

 private:
  struct Slot {
    StepInputs inputs;  // pointing into the vectors below
    std::vector<int32_t> tokens, lengths, labels;
    std::vector<OpTime> times;
    StepResult result;
    int64_t fence = 0;
  };
  int64_t Now() const;

  const int device_, batch_size_, seq_len_;
  std::vector<Stream> stream_specs_;
  std::chrono::steady_clock::time_point epoch_;
  std::array<Slot, kStepSlots> slots_;
  std::unique_ptr<HostStreams> streams_;
  bool held_ = false;  // a step's ops wait for Go
};

}  // namespace zosched
