// The backend interface of the runtime: what one device must provide so that
// the executor (executor.h) can run its share of a Schedule asynchronously.
//
// A backend exposes the device's streams (in-order queues: a CUDA stream on
// a GPU, a worker thread on the CPU testbed) and events (a marker recorded
// on one stream that work enqueued later on another stream can wait for).
// The executor only enqueues; it never runs an op itself and never waits for
// a stream inside a step. Semantics, as CUDA's streams and events:
//  - work enqueued on one stream runs in enqueue order;
//  - RecordEvent(s, e) marks the point after everything enqueued on s so
//    far; WaitEvent(t, e) makes work enqueued on t afterwards wait until the
//    most recent RecordEvent(·, e) enqueued BEFORE this call has been
//    reached (no record enqueued yet: nothing to wait for);
//  - steps occupy `slot`s (0 .. kStepSlots-1): a slot's inputs, op times and
//    result belong to one step from BeginStep until WaitStep returns, so the
//    host can enqueue step t+1 while step t runs.
// Implementations: ThreadedBackend (threaded_backend.h: worker threads; the
// CPU backend), CudaBackend (runtime/cuda: CUDA streams and events). What
// only some backends offer is an interface of its own beside this one
// (compute_speed_probe.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "runtime/zo/zo_state.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Steps that may be in flight at once (enqueued, not yet waited for).
inline constexpr int kStepSlots = 2;

// What the compute ops of one step read besides the buffers: the step's
// seed and learning rate and the batch, for every example of the step
// (global example index e: tokens[e * seq_len ...], lengths[e], labels[e]).
// The arrays must stay valid until BeginStep returns (backends copy them).
struct StepInputs {
  int64_t step = 0;
  uint64_t seed = 0;         // z of this step
  float learning_rate = 0;   // η of this step
  const int32_t* tokens = nullptr;
  const int32_t* lengths = nullptr;
  const int32_t* labels = nullptr;  // index into the label words
};

// What a step of one device produced, for logging: valid when the device
// ran a PROJECTED_GRADIENT op in the step.
struct StepResult {
  bool has_gradient = false;
  // The update the step leaves pending: per perturbation direction i of the
  // q (TrainingSettings.directions), its (seed_i, g_i, η).
  std::vector<ZoState> pending;
  // Mean over the directions and the batch of (L+ + L-)/2 (nats), summed
  // in (direction, example) order in double.
  double mean_loss = 0;
};

// Start and end of one op in one step, ns since the executor's epoch.
struct OpTime {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t cpu_ns = 0;  // ops on host threads: the thread's CPU time in it (0: none)
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Called once, before anything is enqueued: the device's streams (the
  // indices the other calls use are positions in `streams`), the number of
  // events and of ops (op indices 0 .. ops-1 name the device's ops in
  // schedule order; times are reported per op index), and the time zero of
  // the reported op times (the same on every rank).
  virtual absl::Status Start(const std::vector<Stream>& streams, int events, int ops,
                             std::chrono::steady_clock::time_point epoch) = 0;

  // Begins step `inputs.step` in `slot` (free: never begun, or waited for):
  // stages the step's inputs where its ops will read them.
  virtual absl::Status BeginStep(int slot, const StepInputs& inputs) = 0;
  // Enqueues `op` (op index `op_index`) of the step in `slot` on `stream`.
  // Errors: those of enqueueing (a launch failure); errors of running the
  // op come back from WaitStep.
  virtual absl::Status EnqueueOp(int slot, int stream, int op_index, const Op& op) = 0;
  virtual absl::Status RecordEvent(int stream, int event) = 0;
  virtual absl::Status WaitEvent(int stream, int event) = 0;
  // Ends the step in `slot`: everything enqueued for it is in.
  virtual absl::Status EndStep(int slot) = 0;
  // Starts the steps ended so far, for a backend that holds a step's work
  // until told (the testbed: its ranks then start a step together); a
  // backend whose streams start work as it is enqueued does nothing.
  virtual absl::Status Go() { return absl::OkStatus(); }
  // Blocks until every op of the step in `slot` has run, then fills
  // `times[op_index]` for its ops and returns its result. Errors: the first
  // op that failed (naming device, op id and name); a backend that failed
  // stays failed (every later call returns the error).
  virtual absl::Status WaitStep(int slot, std::vector<OpTime>* times, StepResult* result) = 0;

  // The host's view of buffer `index` (into Schedule.buffers): host buffers
  // of this device's host, and a host copy of each device buffer that
  // PullPersistent fills and PushPersistent sends (on the CPU testbed the
  // device buffers themselves); nullptr for buffers of other devices and
  // hosts. Use only between steps.
  virtual char* HostView(int index) const = 0;
  // Copies the device's persistent buffers (resident parameters, the ZO
  // state) to their host views, or from them. Call between steps only.
  virtual absl::Status PullPersistent() = 0;
  virtual absl::Status PushPersistent() = 0;
};

}  // namespace zosched
