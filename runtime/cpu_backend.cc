#include "runtime/cpu_backend.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "models/model_spec.h"
#include "runtime/dtype/convert.h"
#include "runtime/host_store_layout.h"
#include "runtime/nn/opt_forward.h"
#include "runtime/nn/param_layout.h"
#include "runtime/precise_sleep.h"
#include "runtime/zo/zo_math.h"
#include "schedule/cluster_lookup.h"
#include "schedule/describe_op.h"

namespace zosched {
namespace {

constexpr int64_t kAlign = 64;

int64_t AlignUp(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

int SignOf(Sign sign) { return sign == MINUS ? -1 : 1; }

float* Floats(char* p) { return reinterpret_cast<float*>(p); }

// Pins the calling thread to `cores` (each mod the online cores).
void PinThreadToCores(const std::vector<int>& cores) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int core : cores) CPU_SET(core % OnlineCores(), &set);
  sched_setaffinity(0, sizeof(set), &set);
}

}  // namespace

absl::StatusOr<std::unique_ptr<CpuBackend>> CpuBackend::Create(
    const Schedule& schedule, int device, const std::vector<int32_t>& label_words,
    NodeSharedMemory* host_memory, MpiCollectives* collectives, int threads) {
  if (threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a CPU device computes on at least 1 thread, not %d", threads));
  }
  std::unique_ptr<CpuBackend> b(new CpuBackend(schedule, device));
  b->threads_ = threads;
  b->model_ = &schedule.model();
  const ModelSpec& model = schedule.model();
  RETURN_IF_ERROR(CheckRuntimeSupports(model));
  const TrainingSettings& t = schedule.training();
  if (t.compute_dtype() != FP32) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the CPU runtime computes in FP32; the schedule's compute dtype is %s (lower it "
        "with --compute_dtype=FP32)",
        DType_Name(t.compute_dtype())));
  }
  if (static_cast<int>(label_words.size()) != t.num_label_words()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the task has %d label words but the schedule was lowered for %d",
        label_words.size(), t.num_label_words()));
  }
  for (int32_t word : label_words) {
    if (word < 0 || word >= model.vocab_size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "label word token %d is outside model '%s''s vocabulary of %d", word, model.name(),
          model.vocab_size()));
    }
  }
  b->label_words_ = label_words;
  b->collectives_ = collectives;
  if (host_memory != nullptr) {
    b->node_position_ = host_memory->node_rank();
    b->node_devices_ = host_memory->node_size();
  } else {
    b->node_position_ = device;
    b->node_devices_ = schedule.devices_size();
  }
  // The calling thread (the rank's main thread, which meets the others and
  // feeds the steps) and the threads it starts from here on.
  PinThreadToCores(b->SupportCores());
  const Device* cluster_device =
      FindDevice(schedule.cluster(), schedule.devices(device).cluster_device());

  // The arena: exactly the plan's device buffers.
  int64_t arena = 0;
  for (const zosched::Buffer& buf : schedule.buffers()) {
    if (buf.device() == device) arena += AlignUp(buf.size_bytes());
  }
  if (arena > cluster_device->memory_bytes()) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "device %d (%s): the memory plan needs %d bytes, the arena is capped at %d: over by %d",
        device, cluster_device->name(), arena, cluster_device->memory_bytes(),
        arena - cluster_device->memory_bytes()));
  }
  b->arena_storage_.assign(arena + kAlign, 0);
  char* base = b->arena_storage_.data();
  base += (kAlign - reinterpret_cast<uintptr_t>(base) % kAlign) % kAlign;
  int64_t device_offset = 0;
  const HostStoreLayout host_store = LayOutHostStore(schedule, cluster_device->host());
  if (host_store.bytes > 0 && (host_memory == nullptr || host_store.bytes > host_memory->size())) {
    return absl::InternalError(absl::StrFormat(
        "the host buffers of '%s' need %d bytes of the node's shared memory; it has %d",
        cluster_device->host(), host_store.bytes, host_memory == nullptr ? 0 : host_memory->size()));
  }
  b->buffers_.assign(schedule.buffers_size(), nullptr);
  for (int i = 0; i < schedule.buffers_size(); ++i) {
    const zosched::Buffer& buf = schedule.buffers(i);
    b->buffer_index_[buf.name()] = i;
    if (buf.device() == device) {
      b->buffers_[i] = base + device_offset;
      device_offset += AlignUp(buf.size_bytes());
      if (buf.kind() == ZO_STATE) b->zo_state_ = reinterpret_cast<ZoState*>(b->buffers_[i]);
    } else if (host_store.offset[i] >= 0) {
      b->buffers_[i] = host_memory->data() + host_store.offset[i];
    }
  }
  RETURN_IF_ERROR(b->Resolve());

  // Emulated links. The host links emulate rates only: a copy's fixed cost
  // is the testbed's own (waking the copy thread, the convert, oversleeping),
  // which calibrate measures into host_link.latency_s for the simulator.
  // Adding that latency here too would charge it twice.
  const LinkSpec& host_link = cluster_device->host_link();
  b->h2d_ = std::make_unique<EmulatedLink>(host_link.down_gbps(), /*latency_ns=*/0);
  b->d2h_ = std::make_unique<EmulatedLink>(host_link.up_gbps(), /*latency_ns=*/0);
  double peer_gbps = 0;
  int64_t peer_latency_ns = 0;
  for (const PeerDomain& p : schedule.cluster().peer_domains()) {
    if (p.name() != cluster_device->peer_domain()) continue;
    peer_gbps = p.gbps_per_device();
    peer_latency_ns = static_cast<int64_t>(p.latency_s() * 1e9);
  }
  b->peer_ = std::make_unique<EmulatedLink>(peer_gbps, peer_latency_ns);
  if (threads > 1) {
    CpuBackend* backend = b.get();
    b->team_ = std::make_unique<ThreadTeam>(
        threads, [backend](int worker) { backend->PrepareComputeThread(worker); });
  }
  return b;
}

absl::Status CpuBackend::Resolve() {
  const ModelSpec& model = *model_;
  embedding_spans_ = DecaySpans(PartTensors(model, EMBEDDING_PART, 0));
  block_spans_ = DecaySpans(PartTensors(model, DECODER_BLOCK, 0));
  perturbed_block_ = std::make_unique<PerturbedBlockLayout>(model);
  head_spans_ = DecaySpans(PartTensors(model, HEAD_PART, 0));
  const PartLayout embedding = EmbeddingPartLayout(model);
  tokens_at_ = embedding.Get("embed_tokens.weight").offset;
  positions_at_ = embedding.Get("embed_positions.weight").offset + 2 * model.hidden_size();
  if (const TensorSlice* project_in = embedding.Find("project_in.weight")) {
    project_in_at_ = project_in->offset;
  }
  head_floats_ = HeadPartLayout(model).total_floats;
  ASSIGN_OR_RETURN(losses_, DeviceLossLayout(schedule_, device_));
  loss_plus_.resize(schedule_.training().batch_size());
  loss_minus_.resize(schedule_.training().batch_size());
  for (const Op& op : schedule_.ops()) {
    if (op.device() != device_) continue;
    if (op.has_copy() && op.copy().direction() == DEVICE_TO_DEVICE) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s is a peer copy; the CPU runtime moves data between devices only through "
          "collectives",
          DescribeOp(op)));
    }
    if (op.has_collective() && op.collective().kind() != ALL_GATHER) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s is a %s; the CPU runtime runs ALL_GATHER collectives only",
                          DescribeOp(op), CollectiveKind_Name(op.collective().kind())));
    }
    Operands o;
    if (op.has_copy()) {
      o.src = At(op.copy().src());
      o.dst = At(op.copy().dst());
    }
    if (op.has_collective()) {
      o.recv = At(op.collective().recv());
      o.group.assign(op.collective().participants().begin(),
                     op.collective().participants().end());
    }
    if (!op.has_compute()) {
      operands_[op.id()] = o;
      continue;
    }
    const ComputeOp& c = op.compute();
    RETURN_IF_ERROR(CheckWorkspace(op));
    auto floats = [&](bool set, const BufferRange& r) { return set ? Floats(At(r)) : nullptr; };
    o.params = floats(c.has_params(), c.params().range());
    o.lm_head = floats(c.has_lm_head(), c.lm_head().range());
    o.perturbed = floats(c.has_perturbed(), c.perturbed());
    o.activations = floats(c.has_activations(), c.activations());
    o.workspace = floats(c.has_workspace(), c.workspace());
    o.losses = floats(c.has_losses(), c.losses());
    if (c.has_zo_state()) o.zo_state = reinterpret_cast<ZoState*>(At(c.zo_state()));
    if (c.has_wire()) o.wire = At(c.wire());
    if (c.has_params()) {
      const Part part = c.params().part();
      o.stream = PartStream(model, part, c.params().block());
      o.spans = part == EMBEDDING_PART ? &embedding_spans_
                : part == HEAD_PART    ? &head_spans_
                                       : &block_spans_;
    }
    operands_[op.id()] = o;
  }
  return absl::OkStatus();
}

absl::Status CpuBackend::CheckWorkspace(const Op& op) const {
  const ComputeOp& c = op.compute();
  const int seq = schedule_.training().seq_len();
  int64_t floats = 0;
  switch (c.kind()) {
    case EMBED:
      floats = EmbedTokenRows(*model_, c.examples(), seq) * EmbedDim(*model_) +
               EmbedWorkspaceFloats(*model_, c.examples(), seq);
      break;
    case BLOCK_FORWARD:
      floats = BlockWorkspaceFloats(*model_, c.examples(), seq);
      break;
    case HEAD_LOSS:
      floats = HeadLossWorkspaceFloats(*model_, c.examples(), label_words_.size());
      break;
    default:
      return absl::OkStatus();
  }
  if (c.workspace().size_bytes() >= floats * static_cast<int64_t>(sizeof(float))) {
    return absl::OkStatus();
  }
  return absl::InternalError(absl::StrFormat(
      "%s: its workspace of %d bytes is smaller than the %d the CPU kernel needs (the memory "
      "plan's formula in schedule/compute_op_model.h disagrees with runtime/nn)",
      DescribeOp(op), c.workspace().size_bytes(), floats * sizeof(float)));
}

char* CpuBackend::At(const BufferRange& range) const {
  char* base = buffers_[buffer_index_.at(range.buffer())];
  return base == nullptr ? nullptr : base + range.offset_bytes();
}

ZoState CpuBackend::pending() const { return *zo_state_; }

void CpuBackend::set_pending(const ZoState& state) { *zo_state_ = state; }

int OnlineCores() { return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))); }

void PinThreadToCore(int index) { PinThreadToCores({index}); }

std::vector<int> CpuBackend::ComputeCores() const {
  std::vector<int> cores;
  for (int w = 0; w < threads_; ++w) cores.push_back(node_position_ * threads_ + w);
  return cores;
}

std::vector<int> CpuBackend::SupportCores() const {
  std::vector<int> spare;
  for (int core = node_devices_ * threads_; core < OnlineCores(); ++core) spare.push_back(core);
  return spare.empty() ? ComputeCores() : spare;
}

absl::StatusOr<int64_t> CpuBackend::ProbeComputeSpeedNs() {
  if (speed_probe_ == nullptr) speed_probe_ = std::make_unique<SpeedProbe>();
  PinThreadToCore(ComputeCores()[0]);
  const int64_t ns = speed_probe_->CpuNs();
  PinThreadToCores(SupportCores());
  return ns;
}

void CpuBackend::PrepareComputeThread(int member) const {
  // SCHED_IDLE: any other runnable thread (a copy or collective due now)
  // preempts compute at once. Lowering one's own priority needs no
  // privilege; failure only costs timing fidelity, so it is not an error.
  sched_param param{};
  if (sched_setscheduler(0, SCHED_IDLE, &param) != 0) {
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
  }
  PinThreadToCore(ComputeCores()[member]);
}

void CpuBackend::PrepareStreamThread(const Stream& stream) {
  if (stream.kind() == COMPUTE) {
    PrepareComputeThread(0);
  } else {
    PinThreadToCores(SupportCores());
  }
  // A throttled copy sleeps once, until its transfer is due: it should end
  // then, not up to 50 µs later. (Polling threads keep the default slack,
  // which lets the kernel batch their wake-ups: precise polls of waiting
  // ranks take the cores computing ranks share.)
  if (stream.kind() == H2D || stream.kind() == D2H) UsePreciseSleeps();
}

absl::Status CpuBackend::RunCopy(const Op& op) {
  const auto start = EmulatedLink::Clock::now();
  const CopyOp& c = op.copy();
  const Operands& o = operands_.at(op.id());
  ConvertBuffer(c.src_dtype(), o.src, c.dst_dtype(), o.dst,
                c.src().size_bytes() / DTypeBytes(c.src_dtype()));
  EmulatedLink& link = c.direction() == HOST_TO_DEVICE ? *h2d_ : *d2h_;
  EmulatedLink::SleepUntil(link.Reserve(start, c.bytes()));
  return absl::OkStatus();
}

absl::Status CpuBackend::RunCollective(const Op& op) {
  const auto start = EmulatedLink::Clock::now();
  const CollectiveOp& c = op.collective();
  const Operands& o = operands_.at(op.id());
  RETURN_IF_ERROR(collectives_->AllGather(o.group, o.recv, c.send().size_bytes()));
  const int64_t n = o.group.size();
  EmulatedLink::SleepUntil(peer_->Reserve(start, c.bytes() * (n - 1) / n));
  return absl::OkStatus();
}

absl::Status CpuBackend::RunCompute(const Op& op, const StepInputs& inputs,
                                    StepResult* result) {
  const ComputeOp& c = op.compute();
  const Operands& o = operands_.at(op.id());
  switch (c.kind()) {
    case UPDATE:
      Update(c, o);
      break;
    case EMBED:
      Embed(c, o, inputs);
      break;
    case BLOCK_FORWARD:
      Forward(c, o, inputs);
      break;
    case HEAD_LOSS:
      HeadLoss(c, o, inputs);
      break;
    case PROJECTED_GRADIENT:
      ProjectedGradientOp(o, inputs, result);
      break;
    case CAST:
      Cast(c, o);
      break;
    default:
      CHECK(false) << "validation admits no compute kind " << c.kind();
  }
  return absl::OkStatus();
}

void CpuBackend::Update(const ComputeOp& c, const Operands& o) {
  UpdateRange(*o.zo_state, o.stream, *o.spans, schedule_.training().weight_decay(),
              c.params().first_element(), c.params().elements(), o.params, team_.get());
}

void CpuBackend::Embed(const ComputeOp& c, const Operands& o, const StepInputs& inputs) {
  const int seq = schedule_.training().seq_len();
  const int64_t h = model_->hidden_size();
  const int64_t e = EmbedDim(*model_);
  const float eps = schedule_.training().epsilon();
  const int sign = SignOf(c.sign());
  // perturbed: [position rows 2 .. seq+1 | project_in]; workspace:
  // [token rows | their projection].
  float* positions = o.perturbed;
  PerturbRange(inputs.seed, o.stream, positions_at_, seq * h, o.params + positions_at_, eps, sign,
               positions, team_.get());
  const float* project_in = nullptr;
  if (project_in_at_ >= 0) {
    float* perturbed_project_in = o.perturbed + seq * h;
    PerturbRange(inputs.seed, o.stream, project_in_at_, h * e, o.params + project_in_at_, eps,
                 sign, perturbed_project_in, team_.get());
    project_in = perturbed_project_in;
  }
  const int64_t row_count = EmbedTokenRows(*model_, c.examples(), seq);
  float* rows = o.workspace;
  const int32_t* tokens = inputs.tokens + static_cast<int64_t>(c.first_example()) * seq;
  const int64_t token_count = static_cast<int64_t>(c.examples()) * seq;
  ParallelFor(team_.get(), token_count, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t at = tokens_at_ + static_cast<int64_t>(tokens[t]) * e;
      PerturbRange(inputs.seed, o.stream, at, e, o.params + at, eps, sign, rows + t * e);
    }
  });
  std::fill(rows + token_count * e, rows + row_count * e, 0.0f);
  EmbedRows(*model_, rows, positions, project_in, c.examples(), seq, rows + row_count * e,
            o.activations);
}

namespace {

// A block's weights perturbed into an op's scratch tensor by tensor
// (PerturbedBlockLayout): the vectors at once, each matrix when the forward
// asks for it. Bitwise the whole block perturbed at once: z depends only on
// (seed, stream, element index).
class PerturbedBlockWeights : public BlockWeightSource {
 public:
  PerturbedBlockWeights(const PerturbedBlockLayout& layout, uint64_t seed, uint32_t stream,
                        const float* theta, float eps, int sign, float* scratch,
                        ThreadTeam* team)
      : layout_(layout), seed_(seed), stream_(stream), theta_(theta), eps_(eps), sign_(sign),
        scratch_(scratch), team_(team) {
    for (const TensorSlice& t : layout.vectors()) Perturb(t);
  }
  const float* Get(const TensorSlice& t) override {
    return layout_.IsMatrix(t.offset) ? Perturb(t) : scratch_ + layout_.ScratchOffset(t.offset);
  }

 private:
  const float* Perturb(const TensorSlice& t) {
    float* out = scratch_ + layout_.ScratchOffset(t.offset);
    PerturbRange(seed_, stream_, t.offset, t.elements(), theta_ + t.offset, eps_, sign_, out,
                 team_);
    return out;
  }

  const PerturbedBlockLayout& layout_;
  const uint64_t seed_;
  const uint32_t stream_;
  const float* theta_;
  const float eps_;
  const int sign_;
  float* scratch_;
  ThreadTeam* team_;
};

}  // namespace

void CpuBackend::Forward(const ComputeOp& c, const Operands& o, const StepInputs& inputs) {
  const TrainingSettings& t = schedule_.training();
  PerturbedBlockWeights weights(*perturbed_block_, inputs.seed, o.stream, o.params, t.epsilon(),
                                SignOf(c.sign()), o.perturbed, team_.get());
  BlockForward(*model_, weights, inputs.lengths + c.first_example(), c.examples(), t.seq_len(),
               o.activations, o.workspace, team_.get());
}

void CpuBackend::HeadLoss(const ComputeOp& c, const Operands& o, const StepInputs& inputs) {
  const TrainingSettings& t = schedule_.training();
  const int sign = SignOf(c.sign());
  const int64_t e = EmbedDim(*model_);
  // perturbed: [head part | label words' rows of the tied head].
  PerturbRange(inputs.seed, o.stream, 0, head_floats_, o.params, t.epsilon(), sign, o.perturbed,
               team_.get());
  float* rows = o.perturbed + head_floats_;
  const uint32_t table_stream = PartStream(*model_, EMBEDDING_PART, 0);
  const int64_t table_first = c.lm_head().first_element();
  for (size_t k = 0; k < label_words_.size(); ++k) {
    const int64_t at = static_cast<int64_t>(label_words_[k]) * e;
    PerturbRange(inputs.seed, table_stream, table_first + at, e, o.lm_head + at, t.epsilon(), sign,
                 rows + k * e);
  }
  HeadLossFromRows(*model_, o.perturbed, rows, o.activations, inputs.lengths + c.first_example(),
                   c.examples(), t.seq_len(), label_words_.size(),
                   inputs.labels + c.first_example(), o.workspace, o.losses);
}

void CpuBackend::ProjectedGradientOp(const Operands& o, const StepInputs& inputs,
                                     StepResult* result) {
  const TrainingSettings& t = schedule_.training();
  const float* losses = Floats(buffers_[losses_.buffer]);
  const int batch = t.batch_size();
  double sum = 0;
  for (int e = 0; e < batch; ++e) {
    loss_plus_[e] = losses[losses_.plus[e]];
    loss_minus_[e] = losses[losses_.minus[e]];
    sum += 0.5 * (static_cast<double>(loss_plus_[e]) + loss_minus_[e]);
  }
  ZoState state;
  state.seed = inputs.seed;
  state.g = ProjectedGradient(loss_plus_.data(), loss_minus_.data(), batch, t.epsilon());
  state.learning_rate = inputs.learning_rate;
  *o.zo_state = state;
  result->has_gradient = true;
  result->pending = state;
  result->mean_loss = sum / batch;
}

void CpuBackend::Cast(const ComputeOp& c, const Operands& o) {
  const DType compute = schedule_.training().compute_dtype();
  const DType wire = schedule_.training().wire_dtype();
  char* params = reinterpret_cast<char*>(o.params);
  if (c.cast_direction() == WIRE_TO_COMPUTE) {
    ConvertBuffer(wire, o.wire, compute, params, c.params().elements());
  } else {
    ConvertBuffer(compute, params, wire, o.wire, c.params().elements());
  }
}

}  // namespace zosched
