// The CPU backend: a device is an MPI rank with a capacity-limited arena of
// exactly the schedule's memory plan, host buffers live in node-shared
// memory, copies and collectives are throttled to the cluster's (emulated)
// link rates, and compute ops are thin wrappers over the decoder math of every family
// (runtime/nn) and the ZO per-element math (runtime/zo_ranges.h) in fp32.
//
// Every operand is named by its role in the op (schedule.proto ComputeOp)
// and resolved to a pointer once, at Create (runtime/ops/compute_operands.h,
// which also states what each compute op computes); nothing is looked up by
// buffer name or by the position of a read, and no op allocates. Copies
// convert between the dtypes of their two sides.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "models/model.pb.h"
#include "runtime/compute_speed_probe.h"
#include "runtime/core_turns.h"
#include "runtime/speed_probe.h"
#include "runtime/threaded_backend.h"
#include "runtime/link_throttle.h"
#include "runtime/model_parts.h"
#include "runtime/mpi_world.h"
#include "runtime/nn/perturbed_block_layout.h"
#include "runtime/nn/rotary_table.h"
#include "runtime/nn/thread_team.h"
#include "runtime/ops/compute_operands.h"
#include "runtime/ops/part_spans.h"
#include "runtime/zo_ranges.h"
#include "schedule/loss_layout.h"
#include "schedule/schedule.pb.h"

namespace zosched {

class CpuBackend : public ThreadedBackend, public ComputeSpeedProbe {
 public:
  // Sets up device `device` of `schedule` (validated by ValidateSchedule;
  // both outlive the backend): allocates its arena (the sum of its buffers)
  // and maps the host buffers of its host into `host_memory`
  // (host_store_layout.h). `collectives` may be null when the schedule has none. Copies
  // and collectives are throttled to the schedule's cluster: the device's
  // host link (down_gbps for uploads, up_gbps for offloads; its latency_s is
  // the simulator's estimate of the testbed's own fixed cost per copy, not
  // added by the throttle) and
  // its peer domain (gbps_per_device for the bytes a collective brings in,
  // latency_s). `label_words`: the task's label words' token ids.
  //
  // Errors: InvalidArgument when the schedule asks for what the CPU runtime
  // does not run, naming it (a model nn/decoder_forward.h CheckRuntimeSupports
  // refuses; a compute dtype other than FP32; a peer copy; a collective
  // other than ALL_GATHER; label words the schedule was not lowered for, or
  // out of the vocabulary); ResourceExhausted when the plan exceeds the
  // device's memory; Internal when the node's shared memory is too small.
  //
  // `threads` >= 1: the cores the device computes on. Its compute ops then
  // run on a ThreadTeam (runtime/nn/thread_team.h) of the compute stream's
  // thread and threads - 1 workers, bitwise as on one thread; the team's
  // members other than the first keep attention scores (seq² floats each)
  // outside the plan's arena.
  static absl::StatusOr<std::unique_ptr<CpuBackend>> Create(
      const Schedule& schedule, int device, const std::vector<int32_t>& label_words,
      NodeSharedMemory* host_memory, MpiCollectives* collectives, int threads = 1);

  ~CpuBackend() override { StopStreams(); }

  // The ops, run to completion on the calling thread (a stream's, or a
  // caller that times one op, like calibrate).
  absl::Status RunCopy(const Op& op) override;
  absl::Status RunCollective(const Op& op) override;
  absl::Status RunCompute(const Op& op, const StepInputs& inputs, StepResult* result) override;
  // Where the device's threads run, on a node (the ranks sharing its
  // memory) with C usable cores (runtime/usable_cores.h) that holds N
  // devices, this one at position p (its node rank), each computing on T threads:
  // - compute (the stream's thread and its team's workers) at the lowest
  //   priority (SCHED_IDLE), member w pinned to core (p·T + w) mod C, so
  //   that devices share cores evenly and keep their caches, as the
  //   simulator's core sharing assumes;
  // - the others (the main thread that calls Create, the copy and
  //   collective streams), which mostly sleep, at normal priority: they
  //   wake at once when a transfer is due instead of waiting for a compute
  //   thread's time slice. Pinned to the cores no device computes on
  //   (cores N·T .. C - 1) when there are any, else to the device's own
  //   compute cores. Floating between busy cores, they lent their CPU to
  //   whichever device's compute they preempted, and the devices of a
  //   core group fell out of step by up to 30 % (the step waits for the
  //   slowest); pinned, each device pays for its own transfers.
  void PrepareStreamThread(const Stream& stream) override;
  // Where the node's devices share cores (N·T > C) and other ranks run
  // beside this one (collectives given), the devices on a core compute one
  // op at a time, in the order their ops became ready (the node memory's
  // CoreTurns, on the device's first compute core; sim/host_cores.h models
  // it), except that each step's first turns go in device order: before
  // the step is released, the device takes its first ticket of the step
  // once the devices before it on the core have taken theirs. Waiting
  // longer than the collectives' timeout is DeadlineExceeded.
  absl::Status BeforeStepStarts() override;
  // From the held step to its release the rank's main thread runs
  // real-time, as the transfer threads do, and at the default policy
  // otherwise. Woken by the step's meeting, a fair-class main thread did
  // not always preempt the SCHED_IDLE compute thread of a core mate that
  // had already started the step: EEVDF places a woken thread by the lag
  // it slept with, and a main thread that had just run its share waited
  // until the mate's first ops ended (P2xD2 sliced, qwen3-tiny: device 3
  // released its step 250 us after the others in 21 of 29 steps, its slice
  // updates then waited for its mate's 1.5 ms forward, and every
  // all-gather waited for them), where the simulator starts every device
  // at the step's start.
  void StepHeld() override;
  void StepReleased() override;
  absl::Status TakeComputeTurn() override;
  void GiveComputeTurn() override;
  // A compute op that may start takes its place in its core's line at once
  // (the simulator's order: the op ready first runs first), unless it is the
  // step's first, whose place BeforeStepStarts took. If its stream then
  // aborts on another op's error, the place is never served: the job is
  // failing, and its core mates' waits end at the collectives' timeout
  // unless the launcher stops them first.
  void ComputeOpReady() override;

  // The memory of buffer `index` (into Schedule.buffers) as this rank maps
  // it, or nullptr when it is neither on this device nor on its host: the
  // arena is the device, so there is nothing to pull or push.
  char* HostView(int index) const override { return buffers_[index]; }
  absl::Status PullPersistent() override { return absl::OkStatus(); }
  absl::Status PushPersistent() override { return absl::OkStatus(); }
  // ComputeSpeedProbe: on the first core the device computes on, at the
  // calling thread's priority (the other ranks are between steps too), then
  // back.
  absl::StatusOr<int64_t> ProbeComputeSpeedNs() override;
  // The device's pending update (its ZO_STATE buffer: one entry per
  // direction of the step), and setting it (`states`: as many).
  std::vector<ZoState> pending() const;
  void set_pending(const std::vector<ZoState>& states);

 private:
  // An op's operands, resolved (nullptr for the roles it lacks): a compute
  // op's roles (runtime/ops/compute_operands.h), a copy's source and
  // destination, a collective's recv.
  struct Operands {
    char* src = nullptr;
    char* dst = nullptr;
    char* recv = nullptr;
    std::vector<int> group;  // a collective's participants
    ComputeOperands compute;
  };

  CpuBackend(const Schedule& schedule, int device)
      : ThreadedBackend(device, schedule.training().batch_size(), schedule.training().seq_len()),
        schedule_(schedule),
        device_(device) {}
  absl::Status Resolve();
  // Internal error when a compute op's workspace is smaller than its kernel
  // needs (a disagreement of the plan's formula with runtime/nn: a bug).
  absl::Status CheckWorkspace(const Op& op) const;
  char* At(const BufferRange& range) const;
  // Priority and pinning of member `member` of this device's compute team
  // (0: the compute stream's thread), see PrepareStreamThread.
  void PrepareComputeThread(int member) const;
  void Update(const ComputeOp& c, const ComputeOperands& o);
  void Embed(const ComputeOp& c, const ComputeOperands& o, const StepInputs& inputs);
  void Forward(const ComputeOp& c, const ComputeOperands& o, const StepInputs& inputs);
  void HeadLoss(const ComputeOp& c, const ComputeOperands& o, const StepInputs& inputs);
  void ProjectedGradientOp(const ComputeOperands& o, const StepInputs& inputs,
                           StepResult* result);
  void Cast(const ComputeOp& c, const ComputeOperands& o);

  const Schedule& schedule_;
  const int device_;
  const ModelSpec* model_ = nullptr;
  std::vector<int32_t> label_words_;
  std::vector<char> arena_storage_;
  std::vector<char*> buffers_;  // per Schedule.buffers index
  absl::flat_hash_map<std::string, int> buffer_index_;
  ZoState* zo_state_ = nullptr;
  absl::flat_hash_map<int64_t, Operands> operands_;  // this device's ops, by op id
  PerPart<std::vector<DecaySpan>> spans_;  // UPDATE: the decay spans of each kind of part
  // Where a block forward's perturbed weights go in its scratch.
  std::unique_ptr<PerturbedBlockLayout> perturbed_block_;
  std::unique_ptr<RotaryTable> rotary_;  // rotary models: the angles of seq_len positions
  LossLayout losses_;
  std::vector<float> loss_plus_, loss_minus_;  // PROJECTED_GRADIENT scratch, q · batch
  MpiCollectives* collectives_ = nullptr;
  CoreTurns* turns_ = nullptr;  // null: this device does not take turns
  int turn_core_ = 0;
  // Its place among the node's devices on that core, and how many they are.
  int turn_position_ = 0, turn_takers_ = 1;
  uint32_t steps_started_ = 0;  // steps released so far (the rounds of first turns)
  // The step's first ticket, taken before its release, until its first
  // compute op uses it.
  std::optional<uint32_t> first_ticket_;
  // The next compute op's ticket, taken when the op may start (ComputeOpReady,
  // under the streams' lock, which orders it before the op's
  // TakeComputeTurn), until that op uses it.
  std::optional<uint32_t> next_ticket_;
  std::unique_ptr<EmulatedLink> h2d_, d2h_, peer_;
  int threads_ = 1;
  // Its node rank and the node's ranks (schedule ids without node memory).
  int node_position_ = 0;
  int node_devices_ = 1;
  std::vector<int> ComputeCores() const;
  std::vector<int> SupportCores() const;
  std::unique_ptr<ThreadTeam> team_;  // null with one thread
  std::unique_ptr<SpeedProbe> speed_probe_;  // made on first use
};

}  // namespace zosched
