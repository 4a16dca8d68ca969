#include "runtime/cuda/cuda_backend.h"

#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/gpu_check.h"
#include "base/status_macros.h"
#include "models/adapters.h"
#include "runtime/collective_groups.h"
#include "runtime/cuda/comm/gpu_identity_gather.h"
#include "runtime/cuda/comm/host_staged_communicator.h"
#include "runtime/cuda/comm/nccl_communicator.h"
#include "runtime/cuda/visible_gpus.h"
#include "runtime/cuda/zo/cast.h"
#include "runtime/cuda/zo/perturb.h"
#include "runtime/cuda/zo/projected_gradient.h"
#include "runtime/host_store_layout.h"
#include "runtime/model_parts.h"
#include "runtime/nn/param_layout.h"
#include "runtime/nn/rotary_table.h"
#include "runtime/ops/label_words.h"
#include "runtime/ops/perturbation.h"
#include "runtime/ops/transfer_support.h"
#include "schedule/cluster_lookup.h"
#include "schedule/describe_op.h"
#include "schedule/loss_layout.h"
#include "schedule/training_settings.h"

namespace zosched {
namespace {

// Device buffers start at 256-byte boundaries: a cuBLAS algorithm choice
// (which depends on operand alignment) then cannot depend on the plan.
constexpr int64_t kDeviceAlign = 256;

int64_t AlignUp(int64_t n, int64_t to) { return (n + to - 1) / to * to; }


// `spans`, the decay spans of `part` of `model`, as the update kernel takes them.
absl::StatusOr<DecaySpanTable> SpanTable(const ModelSpec& model, Part part,
                                         const std::vector<DecaySpan>& spans) {
  if (spans.size() > static_cast<size_t>(kMaxDecaySpans)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "part %s of model '%s' has %d tensors; the CUDA update takes at most %d", Part_Name(part),
        model.name(), spans.size(), kMaxDecaySpans));
  }
  DecaySpanTable table;
  table.count = spans.size();
  for (size_t i = 0; i < spans.size(); ++i) {
    table.begin[i] = spans[i].begin;
    table.end[i] = spans[i].end;
    table.decays[i] = spans[i].decays;
  }
  return table;
}

// Names the op in an error of enqueueing it.
absl::Status OpError(int device, const Op& op, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrFormat("device %d op %d '%s': %s", device, op.id(),
                                                     op.name(), status.message()));
}

}  // namespace

absl::StatusOr<ElementType> ElementOf(DType dtype, const char* what) {
  switch (dtype) {
    case FP32:
      return ElementType::kF32;
    case FP16:
      return ElementType::kF16;
    case BF16:
      return ElementType::kBF16;
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "the %s dtype is %s; the CUDA backend runs FP32, FP16 and BF16", what, DType_Name(dtype)));
  }
}

absl::StatusOr<int> RequireVisibleGpus() {
  int gpus = 0;
  const cudaError_t e = CountVisibleGpus(&gpus);
  if (e != cudaSuccess) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "--backend=cuda: CUDA cannot count the GPUs: cudaGetDeviceCount: %s: %s (check the "
        "driver with nvidia-smi: CUDA 13 needs driver 580 or later)",
        cudaGetErrorName(e), cudaGetErrorString(e)));
  }
  if (gpus == 0) {
    return absl::FailedPreconditionError(
        "--backend=cuda: no CUDA GPU is visible (check nvidia-smi and CUDA_VISIBLE_DEVICES)");
  }
  return gpus;
}

absl::StatusOr<std::unique_ptr<CudaBackend>> CudaBackend::Create(
    const Schedule& schedule, int device, const std::vector<int32_t>& label_words,
    NodeSharedMemory* host_memory, MpiCollectives* collectives, const CudaOptions& options) {
  std::unique_ptr<CudaBackend> b(new CudaBackend(schedule, device));
  b->options_ = options;
  b->model_ = &schedule.model();
  const ModelSpec& model = schedule.model();
  const TrainingSettings& t = schedule.training();
  ASSIGN_OR_RETURN(b->gpu_model_, DecoderGpuModel::From(model));
  b->perturbed_block_ = std::make_unique<PerturbedBlockLayout>(model);
  ASSIGN_OR_RETURN(b->compute_, ElementOf(t.compute_dtype(), "compute"));
  ASSIGN_OR_RETURN(b->wire_, ElementOf(t.wire_dtype(), "wire"));
  RETURN_IF_ERROR(CheckLabelWords(schedule, label_words));
  b->label_words_ = label_words;
  b->batch_ = t.batch_size();
  b->seq_ = t.seq_len();
  b->directions_ = DirectionsOf(t);

  ASSIGN_OR_RETURN(const int gpus, RequireVisibleGpus());
  b->gpu_ = device % gpus;
  GPU_RETURN_IF_ERROR(cudaSetDevice(b->gpu_));
  RETURN_IF_ERROR(b->Allocate(host_memory));
  RETURN_IF_ERROR(b->Resolve());
  if (collectives != nullptr) {
    std::vector<AllGatherCall> calls;
    for (const Operands& o : b->operands_) {
      if (o.gather.device_recv != nullptr) calls.push_back(o.gather);
    }
    // GroupsHaveDistinctGpus is collective over MPI_COMM_WORLD, so every
    // rank asks, even one without collectives, with the same list of groups.
    ASSIGN_OR_RETURN(const bool distinct_gpus,
                     GroupsHaveDistinctGpus(CollectiveGroups(schedule), b->gpu_));
    if (!calls.empty()) {
      if (distinct_gpus) {
        ASSIGN_OR_RETURN(b->comm_,
                         NcclCommunicator::Create(calls, collectives, collectives->timeout()));
        b->communicator_name_ = "nccl";
      } else {
        ASSIGN_OR_RETURN(b->comm_, HostStagedCommunicator::Create(calls, collectives));
        b->communicator_name_ = "host-staged MPI";
      }
    }
  }
  // The set-up's memset and copies ran on the legacy default stream, which
  // the step streams (non-blocking) do not wait for.
  GPU_RETURN_IF_ERROR(cudaDeviceSynchronize());
  return b;
}

CudaBackend::~CudaBackend() {
  // Before Create picked a GPU nothing was made on one (and touching GPU 0
  // would cost another rank's GPU a context).
  if (gpu_ < 0) return;
  // Nothing may still run on the GPU when its memory goes away; errors here
  // have been reported by WaitStep already.
  cudaSetDevice(gpu_);
  cudaDeviceSynchronize();
  comm_.reset();
  gemms_.clear();
  for (Slot& s : slots_) {
    for (cudaEvent_t e : s.op_start) cudaEventDestroy(e);
    for (cudaEvent_t e : s.op_end) cudaEventDestroy(e);
    for (cudaEvent_t e : s.done) cudaEventDestroy(e);
    if (s.step_start != nullptr) cudaEventDestroy(s.step_start);
    if (s.inputs_ready != nullptr) cudaEventDestroy(s.inputs_ready);
  }
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
  if (reference_ != nullptr) cudaEventDestroy(reference_);
  for (cudaStream_t s : streams_) cudaStreamDestroy(s);
  if (host_store_ != nullptr) cudaHostUnregister(host_store_);
  if (mirrors_ != nullptr) cudaFreeHost(mirrors_);
  if (results_ != nullptr) cudaFreeHost(results_);
  for (Slot& s : slots_) {
    if (s.staging != nullptr) cudaFreeHost(s.staging);
  }
  if (device_memory_ != nullptr) cudaFree(device_memory_);
}

absl::Status CudaBackend::Allocate(NodeSharedMemory* host_memory) {
  const Schedule& s = schedule_;
  const Device* cluster_device = FindDevice(s.cluster(), s.devices(device_).cluster_device());
  int compute_streams = 0;
  for (const Stream& stream : s.devices(device_).streams()) compute_streams += stream.kind() == COMPUTE;

  // The plan, then the runtime reserve.
  buffers_.assign(s.buffers_size(), nullptr);
  host_views_.assign(s.buffers_size(), nullptr);
  std::vector<int64_t> offset(s.buffers_size(), -1);
  int64_t plan = 0, mirror_bytes = 0;
  for (int i = 0; i < s.buffers_size(); ++i) {
    const Buffer& buf = s.buffers(i);
    if (buf.device() != device_) continue;
    offset[i] = plan;
    plan += AlignUp(buf.size_bytes(), kDeviceAlign);
    if (buf.persistent()) {
      persistent_.push_back(i);
      mirror_bytes += AlignUp(buf.size_bytes(), kDeviceAlign);
    }
  }
  const int64_t inputs_bytes =
      AlignUp((static_cast<int64_t>(batch_) * seq_ + 2 * batch_) * sizeof(int32_t), kDeviceAlign);
  const TrainingSettings& t = s.training();
  // A rotary model's angles for the schedule's positions, the CPU's
  // (runtime/nn/rotary_table.h), uploaded once: a prefix's k, then seq_len.
  const int64_t prefix_tokens = PrefixTokens(t.peft());
  std::unique_ptr<RotaryTable> rotary;
  if (gpu_model_.rotary) rotary = std::make_unique<RotaryTable>(*model_, prefix_tokens + seq_);
  const int64_t rotary_bytes =
      rotary == nullptr ? 0 : static_cast<int64_t>(rotary->values().size() * sizeof(float));
  // The loss index lists: q · batch entries each (schedule/loss_layout.h).
  const int64_t loss_index_bytes = static_cast<int64_t>(directions_) * batch_ * 4;
  // Under LoRA, each compute stream's scratch for u = s · x Aᵀ of one
  // block forward: micro-batch tokens · rank elements (decoder_forward_gpu.h).
  if (TrainsLora(t.peft())) {
    lora_u_bytes_ = AlignUp(static_cast<int64_t>(t.micro_batch_size()) * seq_ *
                                t.peft().lora_rank() * ElementBytes(compute_),
                            kDeviceAlign);
  }
  // With a prefix, each compute stream's scratch for one example's queries,
  // keys and values joined behind the prefix's ((k + seq) · (q + 2kv)
  // elements: decoder_forward_gpu.h BlockPrefixScratchBytes).
  if (prefix_tokens > 0) {
    prefix_scratch_bytes_ = AlignUp(
        BlockPrefixScratchBytes(compute_, gpu_model_, prefix_tokens, seq_), kDeviceAlign);
  }
  const int64_t reserve = kStepSlots * (inputs_bytes + kDeviceAlign) +
                          AlignUp(static_cast<int64_t>(label_words_.size()) * 4, kDeviceAlign) +
                          2 * AlignUp(loss_index_bytes, kDeviceAlign) +
                          AlignUp(rotary_bytes, kDeviceAlign) +
                          compute_streams * static_cast<int64_t>(kGemmWorkspaceBytes) +
                          compute_streams * (lora_u_bytes_ + prefix_scratch_bytes_);
  // Left free for what CUDA, cuBLAS and NCCL allocate after this check:
  // kernels loaded lazily at their first launch, the cuBLAS handles, NCCL's
  // channel buffers. Checked, not allocated.
  constexpr int64_t kLibraryHeadroomBytes = int64_t{1} << 30;
  size_t free_bytes = 0, total_bytes = 0;
  GPU_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (plan + reserve + kLibraryHeadroomBytes > static_cast<int64_t>(free_bytes)) {
    cudaDeviceProp prop;
    GPU_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, gpu_));
    return absl::ResourceExhaustedError(absl::StrFormat(
        "device %d (%s) on GPU %d (%s): the memory plan needs %d bytes, the runtime %d more "
        "(step inputs, rotary angles, cuBLAS workspaces; per compute stream, %d of them, %d of "
        "LoRA's u scratch and %d of the prefix's attention scratch) and CUDA, cuBLAS and NCCL "
        "%d of headroom, but only %d of %d are free: over by %d",
        device_, cluster_device->name(), gpu_, prop.name, plan, reserve, compute_streams,
        lora_u_bytes_, prefix_scratch_bytes_, kLibraryHeadroomBytes, free_bytes, total_bytes,
        plan + reserve + kLibraryHeadroomBytes - static_cast<int64_t>(free_bytes)));
  }
  GPU_RETURN_IF_ERROR(cudaMalloc(reinterpret_cast<void**>(&device_memory_), plan + reserve));
  GPU_RETURN_IF_ERROR(cudaMemset(device_memory_, 0, plan + reserve));
  for (int i = 0; i < s.buffers_size(); ++i) {
    if (offset[i] >= 0) buffers_[i] = device_memory_ + offset[i];
  }
  char* next = device_memory_ + plan;
  auto carve = [&](int64_t bytes) {
    char* p = next;
    next += AlignUp(bytes, kDeviceAlign);
    return p;
  };
  for (Slot& slot : slots_) {
    slot.tokens = reinterpret_cast<int32_t*>(carve(inputs_bytes));
    slot.lengths = slot.tokens + static_cast<int64_t>(batch_) * seq_;
    slot.labels = slot.lengths + batch_;
    slot.mean_loss = reinterpret_cast<double*>(carve(sizeof(double)));
    GPU_RETURN_IF_ERROR(cudaMallocHost(reinterpret_cast<void**>(&slot.staging), inputs_bytes));
  }
  label_words_device_ = reinterpret_cast<int32_t*>(carve(label_words_.size() * 4));
  plus_index_ = reinterpret_cast<int32_t*>(carve(loss_index_bytes));
  minus_index_ = reinterpret_cast<int32_t*>(carve(loss_index_bytes));
  if (rotary != nullptr) {
    float* angles = reinterpret_cast<float*>(carve(rotary_bytes));
    GPU_RETURN_IF_ERROR(
        cudaMemcpy(angles, rotary->values().data(), rotary_bytes, cudaMemcpyHostToDevice));
    rotary_.values = angles;
    rotary_.positions = rotary->positions();
  }
  gemm_workspace_ = carve(compute_streams * static_cast<int64_t>(kGemmWorkspaceBytes));
  if (lora_u_bytes_ > 0) lora_scratch_ = carve(compute_streams * lora_u_bytes_);
  if (prefix_scratch_bytes_ > 0) {
    prefix_scratch_ = carve(compute_streams * prefix_scratch_bytes_);
  }
  GPU_RETURN_IF_ERROR(cudaMemcpy(label_words_device_, label_words_.data(),
                                 label_words_.size() * 4, cudaMemcpyHostToDevice));
  // Per slot q ZoStates, then per slot a double (ZoState's 16 bytes keep
  // the doubles aligned).
  GPU_RETURN_IF_ERROR(cudaMallocHost(
      reinterpret_cast<void**>(&results_),
      kStepSlots * (static_cast<int64_t>(directions_) * sizeof(ZoState) + sizeof(double))));

  // Host views: the persistent device buffers' pinned mirrors, and the
  // host store, registered so that copies from and to it are DMA.
  if (mirror_bytes > 0) {
    GPU_RETURN_IF_ERROR(cudaMallocHost(reinterpret_cast<void**>(&mirrors_), mirror_bytes));
    std::memset(mirrors_, 0, mirror_bytes);
  }
  int64_t mirror_at = 0;
  for (int i : persistent_) {
    host_views_[i] = mirrors_ + mirror_at;
    mirror_at += AlignUp(s.buffers(i).size_bytes(), kDeviceAlign);
  }
  const HostStoreLayout store = LayOutHostStore(s, cluster_device->host());
  if (store.bytes > 0) {
    if (host_memory == nullptr || store.bytes > host_memory->size()) {
      return absl::InternalError(absl::StrFormat(
          "the host buffers of '%s' need %d bytes of the node's shared memory; it has %d",
          cluster_device->host(), store.bytes, host_memory == nullptr ? 0 : host_memory->size()));
    }
    GPU_RETURN_IF_ERROR(cudaHostRegister(host_memory->data(), store.bytes, cudaHostRegisterDefault));
    host_store_ = host_memory->data();
    for (int i = 0; i < s.buffers_size(); ++i) {
      if (store.offset[i] < 0) continue;
      buffers_[i] = host_store_ + store.offset[i];
      host_views_[i] = buffers_[i];
    }
  }
  return absl::OkStatus();
}

char* CudaBackend::At(const BufferRange& range) const {
  for (int i = 0; i < schedule_.buffers_size(); ++i) {
    if (schedule_.buffers(i).name() != range.buffer()) continue;
    return buffers_[i] == nullptr ? nullptr : buffers_[i] + range.offset_bytes();
  }
  return nullptr;
}

absl::Status CudaBackend::Resolve() {
  const ModelSpec& model = *model_;
  const Peft& peft = schedule_.training().peft();
  const PerPart<std::vector<DecaySpan>> spans = PartDecaySpans(model, peft);
  ASSIGN_OR_RETURN(spans_.embedding, SpanTable(model, EMBEDDING_PART, spans.embedding));
  ASSIGN_OR_RETURN(spans_.block, SpanTable(model, DECODER_BLOCK, spans.block));
  ASSIGN_OR_RETURN(spans_.head, SpanTable(model, HEAD_PART, spans.head));
  // Adapters exist (and UPDATE ops target them) only under LoRA or a prefix.
  if (TrainsAdapters(peft)) {
    ASSIGN_OR_RETURN(spans_.adapters, SpanTable(model, ADAPTER_PART, spans.adapters));
  }

  ASSIGN_OR_RETURN(const LossLayout losses, DeviceLossLayout(schedule_, device_));
  losses_buffer_ = losses.buffer;
  // q · batch entries each, at direction · batch + example; the kernel
  // takes them as int32.
  const size_t loss_entries = static_cast<size_t>(directions_) * batch_;
  if (!losses.plus.empty() &&
      (losses.plus.size() != loss_entries || losses.minus.size() != loss_entries)) {
    return absl::InternalError(absl::StrFormat(
        "device %d: the loss layout has %d + and %d - entries; a step of %d directions of %d "
        "examples has %d",
        device_, losses.plus.size(), losses.minus.size(), directions_, batch_, loss_entries));
  }
  for (const std::vector<int64_t>* indices : {&losses.plus, &losses.minus}) {
    for (int64_t at : *indices) {
      if (at > INT32_MAX) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "device %d: a loss lies at element %d of its LOSSES buffer; the CUDA projected "
            "gradient indexes at most %d",
            device_, at, INT32_MAX));
      }
    }
  }
  std::vector<int32_t> plus(losses.plus.begin(), losses.plus.end());
  std::vector<int32_t> minus(losses.minus.begin(), losses.minus.end());
  if (!plus.empty()) {
    GPU_RETURN_IF_ERROR(
        cudaMemcpy(plus_index_, plus.data(), plus.size() * 4, cudaMemcpyHostToDevice));
    GPU_RETURN_IF_ERROR(
        cudaMemcpy(minus_index_, minus.data(), minus.size() * 4, cudaMemcpyHostToDevice));
  }

  for (const Op& op : schedule_.ops()) {
    if (op.device() != device_) continue;
    RETURN_IF_ERROR(CheckTransferSupported(op, "the CUDA backend"));
    Operands o;
    if (op.has_copy()) {
      const CopyOp& c = op.copy();
      if (c.src_dtype() != c.dst_dtype()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s converts %s to %s on the host; the CUDA backend copies without conversion "
            "(lower with --host_dtype equal to --wire_dtype; casts on the device are CAST ops)",
            DescribeOp(op), DType_Name(c.src_dtype()), DType_Name(c.dst_dtype())));
      }
      o.src = At(c.src());
      o.dst = At(c.dst());
      o.bytes = c.src().size_bytes();
      o.kind = c.direction() == HOST_TO_DEVICE ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    }
    if (op.has_collective()) {
      const CollectiveOp& c = op.collective();
      AllGatherCall& call = o.gather;
      call.op_id = op.id();
      call.label = absl::StrFormat("device %d op %d '%s'", device_, op.id(), op.name());
      call.group.assign(c.participants().begin(), c.participants().end());
      for (int r = 0; r < static_cast<int>(call.group.size()); ++r) {
        if (call.group[r] == device_) call.rank_in_group = r;
      }
      call.device_recv = At(c.recv());
      call.chunk_bytes = c.send().size_bytes();
    }
    if (op.has_compute()) {
      o.compute = ResolveComputeOperands(model, schedule_.training(), op.compute(),
                                         label_words_.size(),
                                         [this](const BufferRange& r) { return At(r); });
      if (o.compute.adapters != nullptr) RETURN_IF_ERROR(ResolveAdapters(op, &o));
    }
    operands_.push_back(std::move(o));
  }
  return absl::OkStatus();
}

absl::Status CudaBackend::ResolveAdapters(const Op& op, Operands* o) const {
  const ModelSpec& model = *model_;
  const TrainingSettings& t = schedule_.training();
  const ComputeOp& c = op.compute();
  const int64_t elements = AdapterParams(model, t.peft());
  if (c.adapters().elements() != elements || c.adapters().first_element() != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: its adapters are elements [%d, %d) of ADAPTER_PART %d; the CUDA backend perturbs "
        "a block's whole ADAPTER_PART, [0, %d) of model '%s' under %s",
        DescribeOp(op), c.adapters().first_element(),
        c.adapters().first_element() + c.adapters().elements(), c.adapters().block(), elements,
        model.name(), PeftLabel(t.peft())));
  }
  // The adapters perturbed into the perturbed operand keep the part's layout.
  const int64_t width = ElementBytes(compute_);
  const char* part = o->compute.perturbed;
  if (const int64_t k = PrefixTokens(t.peft()); k > 0) {
    // Keys [k, kv] then values [k, kv] (models/adapters.h); the scratch is
    // the stream's, set at enqueue.
    o->prefix.tokens = k;
    o->prefix.keys = part;
    o->prefix.values = part + k * gpu_model_.kv_width * width;
    return absl::OkStatus();
  }
  const int64_t u_bytes = static_cast<int64_t>(c.examples()) * seq_ * t.peft().lora_rank() *
                          ElementBytes(compute_);
  if (u_bytes > lora_u_bytes_) {
    return absl::InternalError(absl::StrFormat(
        "%s: its adapters' u needs %d bytes (%d examples of %d tokens at rank %d); the LoRA "
        "scratch of a stream has %d",
        DescribeOp(op), u_bytes, c.examples(), seq_, t.peft().lora_rank(), lora_u_bytes_));
  }
  GpuBlockLora& lora = o->lora;
  lora.rank = t.peft().lora_rank();
  lora.scaling = LoraScaling(t.peft());
  for (const LoraAdapter& a : BlockAdapters(model, t.peft(), c.adapters().block())) {
    GpuLoraAdapter g;
    g.base = a.base;
    g.in = a.in;
    g.out = a.out;
    g.a = part + a.a_offset * width;
    g.b = part + a.b_offset * width;
    lora.adapters.push_back(g);
  }
  return absl::OkStatus();
}

absl::Status CudaBackend::Start(const std::vector<Stream>& streams, int events, int ops,
                                std::chrono::steady_clock::time_point epoch) {
  GPU_RETURN_IF_ERROR(cudaSetDevice(gpu_));
  stream_specs_ = streams;
  int compute_index = 0;
  for (int i = 0; i < static_cast<int>(streams.size()); ++i) {
    cudaStream_t s;
    GPU_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    streams_.push_back(s);
    std::unique_ptr<Gemm> gemm;
    char* lora_u = nullptr;
    char* prefix_joined = nullptr;
    if (streams[i].kind() == COMPUTE) {
      if (first_compute_stream_ < 0) first_compute_stream_ = i;
      ASSIGN_OR_RETURN(gemm, Gemm::Create(s, gemm_workspace_ + compute_index * kGemmWorkspaceBytes,
                                          kGemmWorkspaceBytes, options_.allow_tf32));
      if (lora_scratch_ != nullptr) lora_u = lora_scratch_ + compute_index * lora_u_bytes_;
      if (prefix_scratch_ != nullptr) {
        prefix_joined = prefix_scratch_ + compute_index * prefix_scratch_bytes_;
      }
      ++compute_index;
    }
    gemms_.push_back(std::move(gemm));
    lora_u_.push_back(lora_u);
    prefix_joined_.push_back(prefix_joined);
  }
  if (first_compute_stream_ < 0) first_compute_stream_ = 0;
  for (int e = 0; e < events; ++e) {
    cudaEvent_t event;
    GPU_RETURN_IF_ERROR(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    events_.push_back(event);
  }
  for (Slot& slot : slots_) {
    slot.op_start.resize(ops);
    slot.op_end.resize(ops);
    for (int i = 0; i < ops; ++i) {
      GPU_RETURN_IF_ERROR(cudaEventCreate(&slot.op_start[i]));
      GPU_RETURN_IF_ERROR(cudaEventCreate(&slot.op_end[i]));
    }
    GPU_RETURN_IF_ERROR(cudaEventCreate(&slot.step_start));
    GPU_RETURN_IF_ERROR(cudaEventCreateWithFlags(&slot.inputs_ready, cudaEventDisableTiming));
    slot.done.resize(streams.size());
    for (cudaEvent_t& e : slot.done) {
      GPU_RETURN_IF_ERROR(cudaEventCreateWithFlags(&e, cudaEventBlockingSync | cudaEventDisableTiming));
    }
  }
  // The timing reference: its host time, taken once here.
  GPU_RETURN_IF_ERROR(cudaEventCreate(&reference_));
  GPU_RETURN_IF_ERROR(cudaEventRecord(reference_, streams_[0]));
  GPU_RETURN_IF_ERROR(cudaEventSynchronize(reference_));
  reference_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - epoch)
                      .count();
  return absl::OkStatus();
}

absl::Status CudaBackend::BeginStep(int slot_index, const StepInputs& inputs) {
  if (!error_.ok()) return error_;
  return Latched([&]() -> absl::Status {
    Slot& slot = slots_[slot_index];
    slot.inputs = inputs;
    slot.has_gradient = false;
    const int64_t tokens = static_cast<int64_t>(batch_) * seq_;
    // The slot's previous step has finished (the executor waited for it), so
    // its pinned staging and device inputs are free.
    std::memcpy(slot.staging, inputs.tokens, tokens * 4);
    std::memcpy(slot.staging + tokens, inputs.lengths, batch_ * 4);
    std::memcpy(slot.staging + tokens + batch_, inputs.labels, batch_ * 4);
    cudaStream_t first = streams_[first_compute_stream_];
    GPU_RETURN_IF_ERROR(cudaEventRecord(slot.step_start, first));
    GPU_RETURN_IF_ERROR(cudaMemcpyAsync(slot.tokens, slot.staging, (tokens + 2 * batch_) * 4,
                                        cudaMemcpyHostToDevice, first));
    GPU_RETURN_IF_ERROR(cudaEventRecord(slot.inputs_ready, first));
    for (int s = 0; s < static_cast<int>(streams_.size()); ++s) {
      if (s != first_compute_stream_ && stream_specs_[s].kind() == COMPUTE) {
        GPU_RETURN_IF_ERROR(cudaStreamWaitEvent(streams_[s], slot.inputs_ready, 0));
      }
    }
    return absl::OkStatus();
  }());
}

Gemm& CudaBackend::GemmOf(int stream_index) { return *gemms_[stream_index]; }

absl::Status CudaBackend::EnqueueOp(int slot_index, int stream, int op_index, const Op& op) {
  if (!error_.ok()) return error_;
  Slot& slot = slots_[slot_index];
  const Operands& o = operands_[op_index];
  cudaStream_t s = streams_[stream];
  nvtxRangePushA(op.name().c_str());
  absl::Status status = [&]() -> absl::Status {
    GPU_RETURN_IF_ERROR(cudaEventRecord(slot.op_start[op_index], s));
    switch (op.kind_case()) {
      case Op::kCopy:
        GPU_RETURN_IF_ERROR(cudaMemcpyAsync(o.dst, o.src, o.bytes, o.kind, s));
        break;
      case Op::kCollective:
        if (comm_ == nullptr) return absl::InternalError("the backend has no communicator");
        RETURN_IF_ERROR(comm_->EnqueueAllGather(o.gather, s));
        break;
      case Op::kCompute:
        RETURN_IF_ERROR(EnqueueCompute(op, o, slot, stream));
        break;
      default:
        return absl::InvalidArgumentError("the op has no kind");
    }
    GPU_RETURN_IF_ERROR(cudaEventRecord(slot.op_end[op_index], s));
    return absl::OkStatus();
  }();
  nvtxRangePop();
  if (!status.ok()) error_ = OpError(device_, op, status);
  return error_;
}

namespace {

// A block's weights perturbed into an op's scratch tensor by tensor
// (PerturbedBlockLayout), enqueued on the op's stream: the vectors first
// (PerturbVectors), each matrix when the forward asks for it, into the room
// the previous matrix's GEMM (earlier on the stream) no longer reads.
// Bitwise the whole block perturbed at once: z depends only on (seed,
// stream, element index).
class PerturbedBlockWeights : public GpuBlockWeightSource {
 public:
  PerturbedBlockWeights(const PerturbedBlockLayout& layout, ElementType type,
                        const Perturbation& perturbation, uint32_t z_stream, const char* theta,
                        char* scratch, cudaStream_t stream)
      : layout_(layout), type_(type), width_(ElementBytes(type)), perturbation_(perturbation),
        z_stream_(z_stream), theta_(theta), scratch_(scratch), stream_(stream) {}

  absl::Status PerturbVectors() {
    for (const TensorSlice& t : layout_.vectors()) {
      RETURN_IF_ERROR(Perturb(t.offset, t.elements()).status());
    }
    return absl::OkStatus();
  }

  absl::StatusOr<const void*> Get(int64_t offset, int64_t elements) override {
    if (layout_.IsMatrix(offset)) return Perturb(offset, elements);
    return static_cast<const void*>(scratch_ + layout_.ScratchOffset(offset) * width_);
  }

 private:
  absl::StatusOr<const void*> Perturb(int64_t offset, int64_t elements) {
    char* out = scratch_ + layout_.ScratchOffset(offset) * width_;
    GPU_RETURN_IF_ERROR(LaunchPerturb(type_, perturbation_.seed, z_stream_, offset, elements,
                                      theta_ + offset * width_, perturbation_.epsilon,
                                      perturbation_.sign, out, stream_));
    return static_cast<const void*>(out);
  }

  const PerturbedBlockLayout& layout_;
  const ElementType type_;
  const int64_t width_;
  const Perturbation perturbation_;
  const uint32_t z_stream_;
  const char* theta_;
  char* scratch_;
  const cudaStream_t stream_;
};

}  // namespace

absl::Status CudaBackend::EnqueueCompute(const Op& op, const Operands& operands,
                                         const Slot& slot, int stream_index) {
  const ComputeOp& c = op.compute();
  const ComputeOperands& o = operands.compute;
  const TrainingSettings& t = schedule_.training();
  const float eps = t.epsilon();
  const uint64_t seed = slot.inputs.seed;
  const int64_t width = ElementBytes(compute_);
  cudaStream_t s = streams_[stream_index];
  const int seq = seq_;
  // θ ± εz of `range` of the op's params into `into`; under LoRA or a prefix θ itself
  // (frozen params are copied, not perturbed).
  auto perturb = [&](const Perturbation& p, const PerturbedRange& range,
                     char* into) -> cudaError_t {
    if (p.frozen_params) {
      return cudaMemcpyAsync(into + range.into * width, o.params + range.first * width,
                             range.count * width, cudaMemcpyDeviceToDevice, s);
    }
    return LaunchPerturb(compute_, p.seed, o.z_stream, range.first, range.count,
                         o.params + range.first * width, p.epsilon, p.sign,
                         into + range.into * width, s);
  };
  // Rows `rows` of a table gathered into `out`, perturbed (LaunchPerturbRows:
  // the table's z stream and element index of its first element); under
  // LoRA or a prefix copied as they are.
  auto perturb_rows = [&](const Perturbation& p, uint32_t z_stream, int64_t table_first,
                          const char* table, int64_t row_width, const int32_t* rows,
                          int64_t n_rows, char* out) -> cudaError_t {
    if (p.frozen_params) {
      return LaunchGatherRows(compute_, table, row_width, rows, n_rows, out, s);
    }
    return LaunchPerturbRows(compute_, p.seed, z_stream, table_first, table, row_width, rows,
                             n_rows, p.epsilon, p.sign, out, s);
  };
  switch (c.kind()) {
    case UPDATE:
      GPU_RETURN_IF_ERROR(LaunchUpdate(compute_, reinterpret_cast<const ZoState*>(o.zo_state),
                                       directions_, o.z_stream, spans_.Of(c.params().part()),
                                       t.weight_decay(), c.params().first_element(),
                                       c.params().elements(), o.params, s));
      return absl::OkStatus();
    case EMBED: {
      const EmbedPlan& plan = o.embed;
      const Perturbation p = PerturbationOf(c, t, seed);
      const char* positions = nullptr;  // none for a rotary model
      if (plan.has_positions) {
        GPU_RETURN_IF_ERROR(perturb(p, plan.positions, o.perturbed));
        positions = o.perturbed + plan.positions.into * width;
      }
      const char* project_in = nullptr;
      if (plan.has_project_in) {
        GPU_RETURN_IF_ERROR(perturb(p, plan.project_in, o.perturbed));
        project_in = o.perturbed + plan.project_in.into * width;
      }
      const int64_t e = plan.row_elements;
      char* rows = o.workspace;
      GPU_RETURN_IF_ERROR(perturb_rows(p, o.z_stream, plan.token_table,
                                       o.params + plan.token_table * width, e,
                                       slot.tokens + plan.first_token, plan.token_count, rows));
      if (plan.row_count > plan.token_count) {
        GPU_RETURN_IF_ERROR(cudaMemsetAsync(rows + plan.token_count * e * width, 0,
                                            (plan.row_count - plan.token_count) * e * width, s));
      }
      return EmbedRowsGpu(GemmOf(stream_index), compute_, gpu_model_, rows, positions, project_in,
                          c.examples(), seq, rows + plan.scratch_at * width, o.activations);
    }
    case BLOCK_FORWARD: {
      const Perturbation p = PerturbationOf(c, t, seed);
      const int32_t* lengths = slot.lengths + c.first_example();
      if (o.adapters != nullptr) {
        // LoRA or a prefix: the block's adapters perturbed at once (z of
        // the adapter stream from element 0) into the perturbed operand,
        // where operands.lora or operands.prefix points; the frozen block
        // read as it is stored.
        GPU_RETURN_IF_ERROR(LaunchPerturb(compute_, p.seed, o.adapter_stream, 0,
                                          c.adapters().elements(), o.adapters, p.epsilon, p.sign,
                                          o.perturbed, s));
        if (operands.prefix.tokens > 0) {
          GpuBlockPrefix prefix = operands.prefix;
          prefix.scratch = prefix_joined_[stream_index];
          return BlockForwardGpu(GemmOf(stream_index), compute_, gpu_model_, o.params, lengths,
                                 c.examples(), seq, o.activations, o.workspace, rotary_,
                                 /*lora=*/nullptr, /*lora_u=*/nullptr, &prefix);
        }
        return BlockForwardGpu(GemmOf(stream_index), compute_, gpu_model_, o.params, lengths,
                               c.examples(), seq, o.activations, o.workspace, rotary_,
                               &operands.lora, lora_u_[stream_index]);
      }
      PerturbedBlockWeights weights(*perturbed_block_, compute_, p, o.z_stream, o.params,
                                    o.perturbed, s);
      RETURN_IF_ERROR(weights.PerturbVectors());
      return BlockForwardGpu(GemmOf(stream_index), compute_, gpu_model_, weights, lengths,
                             c.examples(), seq, o.activations, o.workspace, rotary_);
    }
    case HEAD_LOSS: {
      // The head part but an untied lm_head, perturbed; then the label
      // words' rows of the LM head, read where o.lm_head points: the token
      // table (tied) or the head part's own lm_head (untied), each with its
      // part's z stream and element indices (head_loss_plan.h). Under LoRA
      // or a prefix both copied as they are.
      const HeadLossPlan& plan = o.head_loss;
      const Perturbation p = PerturbationOf(c, t, seed);
      GPU_RETURN_IF_ERROR(perturb(p, plan.head, o.perturbed));
      char* rows = o.perturbed + plan.rows_at * width;
      GPU_RETURN_IF_ERROR(perturb_rows(p, plan.table_stream, plan.table_first, o.lm_head,
                                       plan.row_elements, label_words_device_, plan.label_rows,
                                       rows));
      return HeadLossFromRowsGpu(s, compute_, gpu_model_, o.perturbed, rows, o.activations,
                                 slot.lengths + c.first_example(), c.examples(), seq,
                                 plan.label_rows, slot.labels + c.first_example(),
                                 reinterpret_cast<float*>(o.losses));
    }
    case PROJECTED_GRADIENT: {
      const int slot_index = &slot - slots_.data();
      ZoState* states_out = ResultStates(slot_index);
      double* loss_out = ResultLoss(slot_index);
      GPU_RETURN_IF_ERROR(LaunchProjectedGradient(
          reinterpret_cast<const float*>(buffers_[losses_buffer_]), plus_index_, minus_index_,
          batch_, directions_, eps, seed, slot.inputs.learning_rate,
          reinterpret_cast<ZoState*>(o.zo_state), slot.mean_loss, s));
      // The step's result for logging, back to pinned memory; the pending
      // update itself (q entries) stays on the device for the next step's
      // UPDATE ops.
      GPU_RETURN_IF_ERROR(cudaMemcpyAsync(states_out, o.zo_state,
                                          static_cast<size_t>(directions_) * sizeof(ZoState),
                                          cudaMemcpyDeviceToHost, s));
      GPU_RETURN_IF_ERROR(
          cudaMemcpyAsync(loss_out, slot.mean_loss, sizeof(double), cudaMemcpyDeviceToHost, s));
      slots_[slot_index].has_gradient = true;
      return absl::OkStatus();
    }
    case CAST:
      if (c.cast_direction() == WIRE_TO_COMPUTE) {
        GPU_RETURN_IF_ERROR(
            LaunchCast(wire_, o.wire, compute_, o.params, c.params().elements(), s));
      } else {
        GPU_RETURN_IF_ERROR(
            LaunchCast(compute_, o.params, wire_, o.wire, c.params().elements(), s));
      }
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("compute kind %s is not run by the CUDA backend",
                          ComputeKind_Name(c.kind())));
  }
}

absl::Status CudaBackend::RecordEvent(int stream, int event) {
  if (!error_.ok()) return error_;
  return Latched([&]() -> absl::Status {
    GPU_RETURN_IF_ERROR(cudaEventRecord(events_[event], streams_[stream]));
    return absl::OkStatus();
  }());
}

absl::Status CudaBackend::WaitEvent(int stream, int event) {
  if (!error_.ok()) return error_;
  return Latched([&]() -> absl::Status {
    GPU_RETURN_IF_ERROR(cudaStreamWaitEvent(streams_[stream], events_[event], 0));
    return absl::OkStatus();
  }());
}

absl::Status CudaBackend::EndStep(int slot_index) {
  if (!error_.ok()) return error_;
  return Latched([&]() -> absl::Status {
    Slot& slot = slots_[slot_index];
    for (int s = 0; s < static_cast<int>(streams_.size()); ++s) {
      GPU_RETURN_IF_ERROR(cudaEventRecord(slot.done[s], streams_[s]));
    }
    return absl::OkStatus();
  }());
}

absl::Status CudaBackend::WaitStep(int slot_index, std::vector<OpTime>* times,
                                   StepResult* result) {
  if (!error_.ok()) return error_;
  Slot& slot = slots_[slot_index];
  absl::Status status = [&]() -> absl::Status {
    for (cudaEvent_t done : slot.done) GPU_RETURN_IF_ERROR(cudaEventSynchronize(done));
    if (comm_ != nullptr) RETURN_IF_ERROR(comm_->AsyncError());
    GPU_RETURN_IF_ERROR(cudaGetLastError());
    // The step's start on the epoch's clock, then each op relative to it
    // (float milliseconds keep their precision over one step, not a run).
    float step_ms = 0;
    GPU_RETURN_IF_ERROR(cudaEventElapsedTime(&step_ms, reference_, slot.step_start));
    const int64_t step_ns = reference_ns_ + static_cast<int64_t>(double{step_ms} * 1e6);
    times->resize(slot.op_start.size());
    for (size_t i = 0; i < slot.op_start.size(); ++i) {
      float start_ms = 0, end_ms = 0;
      GPU_RETURN_IF_ERROR(cudaEventElapsedTime(&start_ms, slot.step_start, slot.op_start[i]));
      GPU_RETURN_IF_ERROR(cudaEventElapsedTime(&end_ms, slot.step_start, slot.op_end[i]));
      (*times)[i] = {step_ns + static_cast<int64_t>(double{start_ms} * 1e6),
                     step_ns + static_cast<int64_t>(double{end_ms} * 1e6)};
    }
    // This step's start is the next step's reference, so the elapsed time
    // above spans one step, never the run (a float of milliseconds since
    // the start would lose 0.25 ms of precision after an hour). Steps are
    // waited for in order and the next step's start is recorded after this
    // one's, so it is always after its reference.
    std::swap(reference_, slot.step_start);
    reference_ns_ = step_ns;
    return absl::OkStatus();
  }();
  if (!status.ok()) {
    error_ = absl::Status(status.code(),
                          absl::StrFormat("device %d (GPU %d), step %d: %s", device_, gpu_,
                                          slot.inputs.step, status.message()));
    return error_;
  }
  *result = StepResult{};
  if (slot.has_gradient) {
    result->has_gradient = true;
    const ZoState* states = ResultStates(slot_index);
    result->pending.assign(states, states + directions_);
    result->mean_loss = *ResultLoss(slot_index);
  }
  return absl::OkStatus();
}

absl::Status CudaBackend::PullPersistent() {
  if (!error_.ok()) return error_;
  return Latched([&]() -> absl::Status {
    GPU_RETURN_IF_ERROR(cudaSetDevice(gpu_));
    GPU_RETURN_IF_ERROR(cudaDeviceSynchronize());
    for (int i : persistent_) {
      GPU_RETURN_IF_ERROR(cudaMemcpy(host_views_[i], buffers_[i], schedule_.buffers(i).size_bytes(),
                                     cudaMemcpyDeviceToHost));
    }
    return absl::OkStatus();
  }());
}

absl::Status CudaBackend::PushPersistent() {
  if (!error_.ok()) return error_;
  return Latched([&]() -> absl::Status {
    GPU_RETURN_IF_ERROR(cudaSetDevice(gpu_));
    GPU_RETURN_IF_ERROR(cudaDeviceSynchronize());
    for (int i : persistent_) {
      GPU_RETURN_IF_ERROR(cudaMemcpy(buffers_[i], host_views_[i], schedule_.buffers(i).size_bytes(),
                                     cudaMemcpyHostToDevice));
    }
    return absl::OkStatus();
  }());
}

}  // namespace zosched
