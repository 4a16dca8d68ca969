// The CUDA backend: one schedule device is one MPI rank driving one NVIDIA
// GPU (ranks map to the visible GPUs round-robin, so several ranks may share
// one). It implements backend.h with CUDA streams and events; the executor
// enqueues, nothing here waits for the GPU inside a step.
//
// Memory. One device allocation sized by the schedule's plan: every device
// buffer at a 256-byte aligned offset (so a GEMM's algorithm cannot depend
// on where its operands landed), then a runtime reserve that is not in the
// plan: per step slot the batch's tokens, lengths and labels, the loss index
// lists (q · batch int32 each, q = TrainingSettings.directions), the label
// words, a rotary model's table of angles (fp32, (k +) seq_len · head_dim
// floats, k a prefix's tokens), one cuBLAS workspace (gemm.h,
// kGemmWorkspaceBytes) per compute stream, under LoRA one scratch for the
// adapters' u per compute stream (micro_batch_size · seq_len · lora_rank
// compute elements), and with a prefix one scratch per compute stream for
// an example's queries, keys and values joined behind the prefix's ((k +
// seq_len) · (q + 2kv) compute elements, decoder_forward_gpu.h
// BlockPrefixScratchBytes) (the IR's BLOCK_FORWARD workspace is
// runtime/nn's and holds no room for either); the destructor frees it all.
// A plan (+ reserve + 1 GiB left free for what CUDA, cuBLAS and NCCL
// allocate later) that exceeds the GPU's free memory is refused before
// anything runs, saying by how much and naming the adapters' scratch.
// The host parameter store is the node's shared memory (one copy per node,
// host_store_layout.h), registered (pinned) with cudaHostRegister in every
// process; copies are cudaMemcpyAsync on the schedule's H2D and D2H
// streams. Host views of the persistent device buffers (resident
// parameters, the ZO state: q ZoState entries) are pinned mirrors that
// PullPersistent and PushPersistent fill from and send to the device.
//
// Ops (operands by role, resolved once at Create; schedule.proto ComputeOp):
// UPDATE, EMBED, BLOCK_FORWARD, HEAD_LOSS, PROJECTED_GRADIENT and CAST as
// runtime/ops/compute_operands.h defines them, with the kernels of
// runtime/cuda/zo (perturbation, fused update, casts, the projected
// gradient: the same bits as the CPU) and runtime/cuda/nn (the decoder
// forward of every family the CPU runs, cuBLAS GEMMs in the compute dtype
// with FP32 accumulation; TF32 only when asked). Under LoRA or a prefix
// (TrainingSettings.peft) as the CPU: EMBED and HEAD_LOSS copy their frozen
// rows where they would perturb them (Perturbation.frozen_params;
// LaunchGatherRows for gathered rows; EMBED's position rows are those of
// positions k .. k + seq_len behind a prefix of k, as its plan says),
// BLOCK_FORWARD perturbs the block's whole ADAPTER_PART into its perturbed
// operand and runs the frozen block as stored with the adapters' terms
// (GpuBlockLora) or over the prefix's keys and values (GpuBlockPrefix), and
// UPDATE updates adapters with their decay spans. A rotary model's angles
// (runtime/nn/rotary_table.h, the CPU's, for k + seq_len positions) are
// uploaded once at Create into the runtime reserve. The pending update (one
// (seed, g, η) entry per perturbation direction, q in all) stays on the
// device: the next step's UPDATE reads it there. A step's result (the q
// entries of the new pending update and the mean loss) comes back to pinned
// memory by an asynchronous copy.
//
// Timeline. Every op is bracketed by two timing events on its stream; after
// the step they are resolved against a reference event whose host time was
// taken once at Start, so op times are in the executor's epoch like the
// CPU's. Each op is also an NVTX range named after it (the enqueue; Nsight
// Systems links it to the kernels it launched).
//
// Errors: every CUDA and cuBLAS call is checked (GPU_RETURN_IF_ERROR); an
// enqueue error names the op; an error while a step runs (a kernel fault, a
// collective that timed out) is reported by WaitStep, and the trainer stops
// every rank.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/model.pb.h"
#include "runtime/backend.h"
#include "runtime/cuda/comm/device_communicator.h"
#include "runtime/cuda/nn/gemm.h"
#include "runtime/cuda/nn/decoder_forward_gpu.h"
#include "runtime/cuda/zo/update.h"
#include "runtime/dtype/element.h"
#include "runtime/mpi_world.h"
#include "runtime/nn/perturbed_block_layout.h"
#include "runtime/ops/compute_operands.h"
#include "runtime/ops/part_spans.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The CUDA GPUs this process sees (at least 1). Errors: FailedPrecondition
// saying where to look when it sees none, or naming CUDA's error when it
// cannot count them (visible_gpus.h).
absl::StatusOr<int> RequireVisibleGpus();

// The element type the CUDA kernels and cuBLAS compute `dtype` in.
// Errors: InvalidArgument "the <what> dtype is X; the CUDA backend runs
// FP32, FP16 and BF16".
absl::StatusOr<ElementType> ElementOf(DType dtype, const char* what);

struct CudaOptions {
  bool allow_tf32 = false;  // FP32 GEMMs may use TF32 tensor cores
};

class CudaBackend : public Backend {
 public:
  // Sets up device `device` of `schedule` (validated by ValidateSchedule;
  // both outlive the backend) on GPU `device mod visible GPUs`: the device
  // allocation, the pinned host store in `host_memory` (laid out by
  // LayOutHostStore), the collectives over `collectives` (may be null when
  // the schedule has none): on NCCL when within every collective group of
  // the schedule each rank has its own GPU (nccl_communicator.h), else MPI
  // through pinned host memory (host_staged_communicator.h). With
  // `collectives`, Create is collective over MPI_COMM_WORLD: every rank
  // calls it.
  // `label_words`: the task's label words' token ids.
  //
  // Errors: InvalidArgument for what this backend does not run, naming it
  // (a model CheckRuntimeSupports refuses, a copy that converts dtypes on
  // the host, a peer copy, a collective other than ALL_GATHER, label words
  // the schedule was not lowered for); FailedPrecondition when no GPU is
  // visible; ResourceExhausted when the plan does not fit the GPU's free
  // memory; Internal for CUDA errors.
  static absl::StatusOr<std::unique_ptr<CudaBackend>> Create(
      const Schedule& schedule, int device, const std::vector<int32_t>& label_words,
      NodeSharedMemory* host_memory, MpiCollectives* collectives, const CudaOptions& options);
  ~CudaBackend() override;

  absl::Status Start(const std::vector<Stream>& streams, int events, int ops,
                     std::chrono::steady_clock::time_point epoch) override;
  absl::Status BeginStep(int slot, const StepInputs& inputs) override;
  absl::Status EnqueueOp(int slot, int stream, int op_index, const Op& op) override;
  absl::Status RecordEvent(int stream, int event) override;
  absl::Status WaitEvent(int stream, int event) override;
  absl::Status EndStep(int slot) override;
  absl::Status WaitStep(int slot, std::vector<OpTime>* times, StepResult* result) override;
  char* HostView(int index) const override { return host_views_[index]; }
  absl::Status PullPersistent() override;
  absl::Status PushPersistent() override;

  // The GPU this rank runs on (a cudaSetDevice index).
  int gpu() const { return gpu_; }

  // Which communicator runs this device's collectives: "nccl",
  // "host-staged MPI", or "none" (the device has no collectives).
  const char* communicator_name() const { return communicator_name_; }

 private:
  // An op's operands, resolved: device pointers for its roles.
  struct Operands {
    char* src = nullptr;  // copies
    char* dst = nullptr;
    cudaMemcpyKind kind = cudaMemcpyDefault;
    int64_t bytes = 0;
    AllGatherCall gather;  // collectives
    ComputeOperands compute;  // compute ops (runtime/ops/compute_operands.h)
    // BLOCK_FORWARD under LoRA: the adapters as they lie, perturbed, in the
    // op's perturbed operand (no adapters otherwise).
    GpuBlockLora lora;
    // BLOCK_FORWARD with a prefix: its keys and values as they lie,
    // perturbed, in the op's perturbed operand; the scratch is the
    // stream's, set at enqueue (tokens 0 without a prefix).
    GpuBlockPrefix prefix;
  };
  // Per step slot: where its inputs are and what it reports.
  struct Slot {
    StepInputs inputs;        // seed and η (the arrays are on the device)
    int32_t* tokens = nullptr;   // device [batch * seq]
    int32_t* lengths = nullptr;  // device [batch]
    int32_t* labels = nullptr;   // device [batch]
    int32_t* staging = nullptr;  // pinned: tokens | lengths | labels
    double* mean_loss = nullptr;  // device
    std::vector<cudaEvent_t> op_start, op_end;  // timing, per op index
    cudaEvent_t step_start = nullptr;           // timing, on stream 0
    std::vector<cudaEvent_t> done;              // per stream
    cudaEvent_t inputs_ready = nullptr;
    bool has_gradient = false;
  };

  CudaBackend(const Schedule& schedule, int device) : schedule_(schedule), device_(device) {}
  absl::Status Allocate(NodeSharedMemory* host_memory);
  absl::Status Resolve();
  // o->lora (under LoRA) or o->prefix (with a prefix) of BLOCK_FORWARD op
  // `op`, which has adapters. Errors: InvalidArgument for an adapters range
  // that is not one block's ADAPTER_PART; Internal when the u scratch is
  // too small for the op's micro-batch.
  absl::Status ResolveAdapters(const Op& op, Operands* o) const;
  absl::Status EnqueueCompute(const Op& op, const Operands& o, const Slot& slot,
                              int stream_index);
  char* At(const BufferRange& range) const;
  Gemm& GemmOf(int stream_index);
  // Step slot `slot_index`'s result in results_: its q pending entries and
  // its mean loss.
  ZoState* ResultStates(int slot_index) const {
    return reinterpret_cast<ZoState*>(results_) + static_cast<int64_t>(slot_index) * directions_;
  }
  double* ResultLoss(int slot_index) const {
    return reinterpret_cast<double*>(results_ + kStepSlots * static_cast<int64_t>(directions_) *
                                                    sizeof(ZoState)) +
           slot_index;
  }
  // `status`, kept as error_ when it is a failure.
  absl::Status Latched(absl::Status status) {
    if (!status.ok()) error_ = status;
    return status;
  }

  const Schedule& schedule_;
  const int device_;
  CudaOptions options_;
  int gpu_ = -1;  // -1 until Create picks the GPU
  const ModelSpec* model_ = nullptr;
  ElementType compute_ = ElementType::kF32, wire_ = ElementType::kF32;
  DecoderGpuModel gpu_model_;
  GpuRotary rotary_;  // a rotary model's angles, in the reserve; empty otherwise
  std::vector<int32_t> label_words_;
  int batch_ = 0, seq_ = 0;
  int directions_ = 1;  // q, the perturbation directions of a step (DirectionsOf)

  // Memory.
  char* device_memory_ = nullptr;          // the one allocation
  std::vector<char*> buffers_;             // per Schedule.buffers index (device pointers
                                           // for this device's, host for its host's)
  std::vector<char*> host_views_;          // per Schedule.buffers index
  char* mirrors_ = nullptr;                // pinned mirrors of persistent device buffers
  std::vector<int> persistent_;            // their buffer indices
  char* host_store_ = nullptr;             // registered node-shared memory
  int32_t* label_words_device_ = nullptr;
  int32_t* plus_index_ = nullptr;          // the loss layout, device
  int32_t* minus_index_ = nullptr;
  int losses_buffer_ = -1;
  char* gemm_workspace_ = nullptr;         // kGemmWorkspaceBytes per compute stream
  char* lora_scratch_ = nullptr;           // under LoRA: lora_u_bytes_ per compute stream
  int64_t lora_u_bytes_ = 0;               // 0 without LoRA
  char* prefix_scratch_ = nullptr;         // with a prefix: prefix_scratch_bytes_ per
                                           // compute stream
  int64_t prefix_scratch_bytes_ = 0;       // 0 without a prefix
  char* results_ = nullptr;                // pinned: per slot q ZoStates, then per
                                           // slot a double (ResultStates, ResultLoss)

  // Parts.
  PerPart<DecaySpanTable> spans_;  // UPDATE: the decay spans of each kind of part
  // Where a block forward's perturbed weights go in its scratch.
  std::unique_ptr<PerturbedBlockLayout> perturbed_block_;
  std::vector<Operands> operands_;         // per op index (this device's, schedule order)

  // Streams and events.
  std::vector<Stream> stream_specs_;
  std::vector<cudaStream_t> streams_;
  std::vector<std::unique_ptr<Gemm>> gemms_;  // per stream; null for non-compute streams
  std::vector<char*> lora_u_;  // per stream: LoRA's u scratch (compute streams under LoRA)
  // Per stream: the prefix's attention scratch (compute streams with a prefix).
  std::vector<char*> prefix_joined_;
  int first_compute_stream_ = -1;
  std::vector<cudaEvent_t> events_;
  std::array<Slot, kStepSlots> slots_;
  // Timing: recorded at Start, then the start of the step waited for last.
  cudaEvent_t reference_ = nullptr;
  int64_t reference_ns_ = 0;  // its host time since the epoch
  std::unique_ptr<DeviceCommunicator> comm_;
  const char* communicator_name_ = "none";
  absl::Status error_;  // the first failure: every later call returns it (backend.h)
};

}  // namespace zosched
