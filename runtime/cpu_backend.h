// The CPU backend: a device is an MPI rank with a capacity-limited arena of
// exactly the schedule's memory plan, host buffers live in node-shared
// memory, copies and collectives are throttled to the cluster's (emulated)
// link rates, and compute ops run the OPT math (runtime/nn) with the ZO
// per-element functions (runtime/zo) in fp32.
//
// Op semantics (schedule.proto):
// - UPDATE: θ ← Updated(θ, z, η', g', λ, decays) over the op's element range,
//   with the pending (seed', g', η') of the previous step from the zo_state
//   buffer; nothing while there is none (η' = 0, the first step). z keyed by
//   (seed', part stream, element index): identical under any slicing.
// - EMBED: the op's examples' token and position rows, each perturbed out of
//   place (θ ± εz of the embedding part), summed into the activations.
// - BLOCK_FORWARD: θ ± εz of the whole block into the `perturbed` buffer,
//   then one pre-LN OPT block over the op's micro-batch, in place.
// - HEAD_LOSS: θ ± εz of the head part and of the label words' embedding
//   rows (tied head), then MeZO's per-example classification loss.
// - PROJECTED_GRADIENT: g from the gathered losses in example order; the
//   zo_state becomes (this step's seed, g, η).
// - CAST and copies convert between the buffers' dtypes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "models/model.pb.h"
#include "runtime/backend.h"
#include "runtime/link_throttle.h"
#include "runtime/mpi_world.h"
#include "runtime/nn/param_layout.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Pins the calling thread to core `index` mod the online cores (what the
// CPU backend does for device `index`'s compute thread). Best effort.
void PinThreadToCore(int index);

// The pending update a zo_state buffer holds (16 bytes).
struct ZoState {
  uint64_t seed = 0;
  float g = 0;
  float learning_rate = 0;  // 0: no pending update
};

class CpuBackend : public Backend {
 public:
  // Sets up device `device` of `schedule` (both outlive the backend):
  // allocates its arena (the sum of its buffers) and maps the host buffers of
  // its host into `host_memory` (see HostBytes). `collectives` may be null
  // when the schedule has none. Copies and collectives are throttled to the
  // schedule's cluster: the device's host link (down_gbps for uploads,
  // up_gbps for offloads, latency_s) and its peer domain (gbps_per_device
  // for the bytes a collective brings in, latency_s).
  //
  // Errors: InvalidArgument when the model or schedule asks for what the CPU
  // runtime does not run (see nn/opt_forward.h CheckRuntimeSupports; a
  // compute dtype other than FP32; a workspace smaller than the block
  // forward needs); ResourceExhausted when the arena cannot be allocated.
  static absl::StatusOr<std::unique_ptr<CpuBackend>> Create(
      const Schedule& schedule, int device, const std::vector<int32_t>& label_words,
      NodeSharedMemory* host_memory, MpiCollectives* collectives);

  // Bytes of node-shared memory the host buffers of `host` need.
  static int64_t HostBytes(const Schedule& schedule, const std::string& host);

  absl::Status Copy(const Op& op) override;
  absl::Status Collective(const Op& op) override;
  absl::Status Compute(const Op& op, const StepInputs& inputs) override;
  // Compute threads run at the lowest priority (SCHED_IDLE) and pinned to
  // core `device mod cores`; the copy and collective threads, which mostly
  // sleep, then wake at once when a transfer is due instead of waiting for
  // a compute thread's time slice.
  void PrepareStreamThread(const Stream& stream) override;

  // The bytes of buffer `name` (device or host), or nullptr.
  char* Buffer(const std::string& name) const;
  const zosched::Buffer* BufferSpec(const std::string& name) const;
  // Mean of (L+ + L-)/2 over the batch, from the last PROJECTED_GRADIENT.
  double last_loss() const { return last_loss_; }
  // The device's pending update, and setting it (resuming a run).
  ZoState pending() const;
  void set_pending(const ZoState& state);

 private:
  CpuBackend(const Schedule& schedule, int device) : schedule_(schedule), device_(device) {}
  absl::Status Update(const Op& op);
  absl::Status Embed(const Op& op, const StepInputs& inputs);
  absl::Status Forward(const Op& op, const StepInputs& inputs);
  absl::Status HeadLoss(const Op& op, const StepInputs& inputs);
  absl::Status ProjectedGradientOp(const Op& op, const StepInputs& inputs);
  absl::Status Cast(const Op& op);
  char* At(const BufferRange& range) const;

  const Schedule& schedule_;
  const int device_;
  ModelSpec model_;
  std::vector<int32_t> label_words_;
  PartLayout embedding_layout_, block_layout_, head_layout_;
  std::vector<char> arena_storage_;
  absl::flat_hash_map<std::string, char*> buffers_;
  absl::flat_hash_map<std::string, const zosched::Buffer*> specs_;
  std::string perturbed_, workspace_, zo_state_;
  MpiCollectives* collectives_ = nullptr;
  std::unique_ptr<EmulatedLink> h2d_, d2h_, peer_;
  // Where each (example, sign) loss lands in a losses buffer (floats).
  std::vector<int64_t> plus_index_, minus_index_;
  double last_loss_ = 0;
};

}  // namespace zosched
