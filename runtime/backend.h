// The backend interface of the runtime: what one device must provide so the
// executor (executor.h) can run its share of a Schedule. The executor owns
// the streams (one worker thread each) and the cross-stream events; a
// backend owns the device's buffers and executes copies, collectives and
// compute kernels. The CPU backend (cpu_backend.h) is the testbed; a CUDA
// backend implements the same three calls with streams, events and NCCL.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// What the compute ops of one step read besides the buffers: the step's
// seed and learning rate and the batch, for every example of the step
// (global example index e: tokens[e * seq_len ...], lengths[e], labels[e]).
struct StepInputs {
  int64_t step = 0;
  uint64_t seed = 0;         // z of this step
  float learning_rate = 0;   // η of this step
  const int32_t* tokens = nullptr;
  const int32_t* lengths = nullptr;
  const int32_t* labels = nullptr;  // index into the label words
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Each runs one op of this device to completion on the calling stream
  // thread, and returns its error (which stops the run: the executor aborts
  // the other streams).
  virtual absl::Status Copy(const Op& op) = 0;
  virtual absl::Status Collective(const Op& op) = 0;
  virtual absl::Status Compute(const Op& op, const StepInputs& inputs) = 0;

  // Called once on each stream's worker thread before it runs any op (e.g.
  // to set the thread's scheduling priority). Default: nothing.
  virtual void PrepareStreamThread(const Stream& stream) {}
};

}  // namespace zosched
