// The executor: enqueues one device's share of a Schedule, step after step,
// on a Backend's streams (backend.h), and collects the measured times.
//
// At Create it orders the device's ops once: a topological order of stream
// order and the schedule's edges (ties by schedule order), so that every op
// is enqueued after the ops it waits for. Enqueueing a step then means, for
// each op in that order: a WaitEvent on the op's stream for each edge into
// it from another stream, the op itself, and a RecordEvent after it when
// another stream waits for it. A wait is thus never enqueued before the
// record it waits for. Steps are separated on the device: each stream's
// first op of step t+1 waits for every stream's end of step t (the IR
// describes one step; it has no edges across steps), but the host does not
// wait: EnqueueStep returns at once, and up to kStepSlots steps are in
// flight. FinishStep waits for the oldest.
//
// Every op's start and end (ns since the executor's epoch) are recorded for
// the Timeline, as the backend measured them.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline.pb.h"

namespace zosched {

class Executor {
 public:
  using Clock = std::chrono::steady_clock;

  // Prepares device `device` of `schedule` (both must outlive the executor)
  // on `backend` (started here). `epoch`: time zero of the recorded
  // intervals (the same on every rank of a run).
  //
  // Errors: InvalidArgument for an edge to an op on another device (devices
  // meet only through collectives), to a missing op, or an op on a stream
  // its device lacks; the backend's Start errors.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(const Schedule& schedule,
                                                          int device, Backend* backend,
                                                          Clock::time_point epoch);

  // Enqueues every op of this device for step `inputs.step` and returns
  // without waiting for them, unless kStepSlots steps are already in flight:
  // then it first finishes the oldest (see FinishStep; its outcome is kept
  // for the FinishStep that asks for it). A backend that holds work until
  // told (Backend::Go) starts the step at Start, or at FinishStep.
  absl::Status EnqueueStep(const StepInputs& inputs);
  // Starts the steps enqueued so far (Backend::Go).
  absl::Status Start();

  struct StepOutcome {
    int64_t step = 0;
    StepResult result;
  };
  // Waits for the oldest step in flight and records its intervals.
  // Errors: FailedPrecondition when no step is in flight; the first failing
  // op's error (after which the executor runs nothing more).
  absl::StatusOr<StepOutcome> FinishStep();

  // EnqueueStep then FinishStep: one step, run to its end.
  absl::StatusOr<StepOutcome> RunStep(const StepInputs& inputs);

  // The intervals of every finished step, in op order per step.
  const std::vector<OpInterval>& intervals() const { return intervals_; }
  // [start, end] of each finished step: from its first op's start to its
  // last op's end (ns since the epoch).
  const std::vector<StepInterval>& steps() const { return steps_; }

 private:
  struct InFlight {
    int64_t step = 0;
    int slot = 0;
  };

  Executor(int device, Backend* backend)
      : device_(device), backend_(backend) {}
  absl::Status Finish(const InFlight& step, StepOutcome* outcome);

  const int device_;
  Backend* const backend_;

  std::vector<const Op*> ops_;                // this device's ops, in schedule order
  std::vector<int> stream_of_;                // per op: index of its stream
  std::vector<int> order_;                    // enqueue order (indices into ops_)
  std::vector<std::vector<int>> waits_for_;   // per op: events it waits for
  std::vector<int> records_;                  // per op: its event, or -1
  int streams_ = 0;
  int step_end_event_ = 0;                    // first of one event per stream

  std::deque<InFlight> in_flight_;
  std::deque<StepOutcome> finished_early_;    // finished by EnqueueStep
  int next_slot_ = 0;
  absl::Status error_;
  std::vector<OpTime> times_;

  std::vector<OpInterval> intervals_;
  std::vector<StepInterval> steps_;
};

}  // namespace zosched
