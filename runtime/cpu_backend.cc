#include "runtime/cpu_backend.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "models/adapters.h"
#include "models/model_spec.h"
#include "runtime/dtype/convert.h"
#include "runtime/host_store_layout.h"
#include "runtime/nn/block_lora.h"
#include "runtime/nn/block_prefix.h"
#include "runtime/nn/decoder_forward.h"
#include "runtime/nn/param_layout.h"
#include "runtime/ops/label_words.h"
#include "runtime/ops/perturbation.h"
#include "runtime/ops/transfer_support.h"
#include "runtime/precise_sleep.h"
#include "runtime/real_time_thread.h"
#include "runtime/usable_cores.h"
#include "runtime/zo/zo_math.h"
#include "schedule/cluster_lookup.h"
#include "schedule/describe_op.h"
#include "schedule/training_settings.h"

namespace zosched {
namespace {

constexpr int64_t kAlign = 64;

int64_t AlignUp(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

float* Floats(char* p) { return reinterpret_cast<float*>(p); }

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
  RETURN_IF_ERROR(CheckLabelWords(schedule, label_words));
  b->label_words_ = label_words;
  b->collectives_ = collectives;
  if (host_memory != nullptr) {
    b->node_position_ = host_memory->node_rank();
    b->node_devices_ = host_memory->node_size();
  } else {
    b->node_position_ = device;
    b->node_devices_ = schedule.devices_size();
  }
  if (host_memory != nullptr && collectives != nullptr &&
      b->node_devices_ * threads > UsableCores()) {
    b->turns_ = host_memory->core_turns();
    const int cores = b->turns_->cores();
    b->turn_core_ = b->ComputeCores()[0] % cores;
    b->turn_takers_ = 0;
    for (int q = 0; q < b->node_devices_; ++q) {
      if (q * threads % cores != b->turn_core_) continue;
      b->turn_position_ += q < b->node_position_;
      ++b->turn_takers_;
    }
    // Each device takes its first turn every step: one that never computes
    // would hold up the others on its core.
    bool computes = false;
    for (const Op& op : schedule.ops()) computes |= op.device() == device && op.has_compute();
    if (!computes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "device %d has no compute op, but shares core %d with other devices of its node, "
          "which take turns there every step (lower the schedule for fewer devices a core)",
          device, b->turn_core_));
    }
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
  spans_ = PartDecaySpans(model, schedule_.training().peft());
  if (model.positional() == ROTARY) {
    // A prefix's k positions come before the real tokens'.
    rotary_ = std::make_unique<RotaryTable>(
        model, PrefixTokens(schedule_.training().peft()) + schedule_.training().seq_len());
  }
  perturbed_block_ = std::make_unique<PerturbedBlockLayout>(model);
  ASSIGN_OR_RETURN(losses_, DeviceLossLayout(schedule_, device_));
  const int64_t losses =
      static_cast<int64_t>(schedule_.training().batch_size()) * DirectionsOf(schedule_.training());
  loss_plus_.resize(losses);
  loss_minus_.resize(losses);
  for (const Op& op : schedule_.ops()) {
    if (op.device() != device_) continue;
    RETURN_IF_ERROR(CheckTransferSupported(op, "the CPU runtime"));
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
    RETURN_IF_ERROR(CheckWorkspace(op));
    o.compute = ResolveComputeOperands(model, schedule_.training(), op.compute(),
                                       label_words_.size(),
                                       [this](const BufferRange& r) { return At(r); });
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

std::vector<ZoState> CpuBackend::pending() const {
  return std::vector<ZoState>(zo_state_, zo_state_ + DirectionsOf(schedule_.training()));
}

void CpuBackend::set_pending(const std::vector<ZoState>& states) {
  CHECK(states.size() == static_cast<size_t>(DirectionsOf(schedule_.training())))
      << "set_pending: " << states.size() << " entries for a step of "
      << DirectionsOf(schedule_.training()) << " directions";
  std::copy(states.begin(), states.end(), zo_state_);
}

std::vector<int> CpuBackend::ComputeCores() const {
  std::vector<int> cores;
  for (int w = 0; w < threads_; ++w) cores.push_back(node_position_ * threads_ + w);
  return cores;
}

std::vector<int> CpuBackend::SupportCores() const {
  std::vector<int> spare;
  for (int core = node_devices_ * threads_; core < UsableCores(); ++core) spare.push_back(core);
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
    // A copy or collective thread is the device's DMA engine: real-time
    // (SCHED_FIFO), it runs whenever it has work, never behind compute.
    // Fair-class threads were not: under EEVDF a transfer thread preempted
    // by the collective it woke could wait for the scheduler's next tick
    // (4 ms) behind a SCHED_IDLE compute thread that woke meanwhile (LoRA
    // P2xD1 sliced, transfer-bound: uploads 2.2 ms late, every other step
    // 15-20 % slow). It needs CAP_SYS_NICE or RLIMIT_RTPRIO; without them
    // the thread stays fair-class and only timing fidelity suffers.
    SetCallerRealTime(true);
  }
  // A throttled copy sleeps once, until its transfer is due: it should end
  // then, not up to 50 µs later. (Polling threads keep the default slack,
  // which lets the kernel batch their wake-ups: precise polls of waiting
  // ranks take the cores computing ranks share.)
  if (stream.kind() == H2D || stream.kind() == D2H) UsePreciseSleeps();
}

void CpuBackend::StepHeld() { SetCallerRealTime(true); }

void CpuBackend::StepReleased() { SetCallerRealTime(false); }

absl::Status CpuBackend::BeforeStepStarts() {
  if (turns_ == nullptr) return absl::OkStatus();
  ASSIGN_OR_RETURN(first_ticket_, turns_->TicketInOrder(turn_core_, steps_started_++,
                                                        turn_position_, turn_takers_,
                                                        collectives_->timeout()));
  return absl::OkStatus();
}

void CpuBackend::ComputeOpReady() {
  if (turns_ == nullptr || first_ticket_.has_value() || next_ticket_.has_value()) return;
  next_ticket_ = turns_->Ticket(turn_core_);
}

absl::Status CpuBackend::TakeComputeTurn() {
  if (turns_ == nullptr) return absl::OkStatus();
  for (std::optional<uint32_t>* taken : {&first_ticket_, &next_ticket_}) {
    if (!taken->has_value()) continue;
    const uint32_t ticket = **taken;
    taken->reset();
    return turns_->Await(turn_core_, ticket, collectives_->timeout());
  }
  return turns_->Take(turn_core_, collectives_->timeout());
}

void CpuBackend::GiveComputeTurn() {
  if (turns_ != nullptr) turns_->Give(turn_core_);
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
  const ComputeOperands& o = operands_.at(op.id()).compute;
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

void CpuBackend::Update(const ComputeOp& c, const ComputeOperands& o) {
  UpdateRange(reinterpret_cast<const ZoState*>(o.zo_state), DirectionsOf(schedule_.training()),
              o.z_stream, spans_.Of(c.params().part()), schedule_.training().weight_decay(),
              c.params().first_element(), c.params().elements(), Floats(o.params), team_.get());
}

namespace {

// θ ± εz of elements [first, first + count) of `stream` (θ at `theta`)
// into `out`; θ itself when the op's params are frozen (LoRA).
void PerturbParams(const Perturbation& p, uint32_t stream, int64_t first, int64_t count,
                   const float* theta, float* out, ThreadTeam* team = nullptr) {
  if (p.frozen_params) {
    std::copy(theta, theta + count, out);
  } else {
    PerturbRange(p.seed, stream, first, count, theta, p.epsilon, p.sign, out, team);
  }
}

}  // namespace

void CpuBackend::Embed(const ComputeOp& c, const ComputeOperands& o, const StepInputs& inputs) {
  const EmbedPlan& plan = o.embed;
  const Perturbation p = PerturbationOf(c, schedule_.training(), inputs.seed);
  const float* params = Floats(o.params);
  float* perturbed = Floats(o.perturbed);
  auto perturb = [&](const PerturbedRange& range, float* into, ThreadTeam* team) {
    PerturbParams(p, o.z_stream, range.first, range.count, params + range.first,
                  into + range.into, team);
  };
  const float* positions = nullptr;
  if (plan.has_positions) {
    perturb(plan.positions, perturbed, team_.get());
    positions = perturbed + plan.positions.into;
  }
  const float* project_in = nullptr;
  if (plan.has_project_in) {
    perturb(plan.project_in, perturbed, team_.get());
    project_in = perturbed + plan.project_in.into;
  }
  const int64_t e = plan.row_elements;
  float* rows = Floats(o.workspace);
  const int32_t* tokens = inputs.tokens + plan.first_token;
  ParallelFor(team_.get(), plan.token_count, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t row_first = plan.token_table + static_cast<int64_t>(tokens[t]) * e;
      perturb({row_first, e, t * e}, rows, /*team=*/nullptr);
    }
  });
  std::fill(rows + plan.token_count * e, rows + plan.row_count * e, 0.0f);
  EmbedRows(*model_, rows, positions, project_in, c.examples(),
            schedule_.training().seq_len(), rows + plan.scratch_at, Floats(o.activations));
}

namespace {

// A block's weights perturbed into an op's scratch tensor by tensor
// (PerturbedBlockLayout): the vectors at once, each matrix when the forward
// asks for it. Bitwise the whole block perturbed at once: z depends only on
// (seed, stream, element index).
class PerturbedBlockWeights : public BlockWeightSource {
 public:
  PerturbedBlockWeights(const PerturbedBlockLayout& layout, const Perturbation& perturbation,
                        uint32_t stream, const float* theta, float* scratch, ThreadTeam* team)
      : layout_(layout), perturbation_(perturbation), stream_(stream), theta_(theta),
        scratch_(scratch), team_(team) {
    for (const TensorSlice& t : layout.vectors()) Perturb(t);
  }
  const float* Get(const TensorSlice& t) override {
    return layout_.IsMatrix(t.offset) ? Perturb(t) : scratch_ + layout_.ScratchOffset(t.offset);
  }

 private:
  const float* Perturb(const TensorSlice& t) {
    float* out = scratch_ + layout_.ScratchOffset(t.offset);
    PerturbRange(perturbation_.seed, stream_, t.offset, t.elements(), theta_ + t.offset,
                 perturbation_.epsilon, perturbation_.sign, out, team_);
    return out;
  }

  const PerturbedBlockLayout& layout_;
  const Perturbation perturbation_;
  const uint32_t stream_;
  const float* theta_;
  float* scratch_;
  ThreadTeam* team_;
};

}  // namespace

void CpuBackend::Forward(const ComputeOp& c, const ComputeOperands& o, const StepInputs& inputs) {
  const TrainingSettings& t = schedule_.training();
  const Perturbation p = PerturbationOf(c, t, inputs.seed);
  if (o.adapters != nullptr) {
    // LoRA or a prefix: the adapters perturbed at once; the frozen block
    // read as it is.
    float* adapters = Floats(o.perturbed);
    PerturbRange(p.seed, o.adapter_stream, 0, c.adapters().elements(), Floats(o.adapters),
                 p.epsilon, p.sign, adapters, team_.get());
    const bool lora = TrainsLora(t.peft());
    const BlockLora block_lora = lora ? MakeBlockLora(*model_, t.peft(), adapters) : BlockLora();
    const BlockPrefix prefix = lora ? BlockPrefix() : MakeBlockPrefix(*model_, t.peft(), adapters);
    PartWeights weights(Floats(o.params));
    BlockForward(*model_, weights, inputs.lengths + c.first_example(), c.examples(), t.seq_len(),
                 Floats(o.activations), Floats(o.workspace), team_.get(), rotary_.get(),
                 lora ? &block_lora : nullptr, lora ? nullptr : &prefix);
    return;
  }
  PerturbedBlockWeights weights(*perturbed_block_, p, o.z_stream, Floats(o.params),
                                Floats(o.perturbed), team_.get());
  BlockForward(*model_, weights, inputs.lengths + c.first_example(), c.examples(), t.seq_len(),
               Floats(o.activations), Floats(o.workspace), team_.get(), rotary_.get());
}

void CpuBackend::HeadLoss(const ComputeOp& c, const ComputeOperands& o,
                          const StepInputs& inputs) {
  const TrainingSettings& t = schedule_.training();
  const HeadLossPlan& plan = o.head_loss;
  const Perturbation p = PerturbationOf(c, t, inputs.seed);
  float* perturbed = Floats(o.perturbed);
  PerturbParams(p, o.z_stream, plan.head.first, plan.head.count,
                Floats(o.params) + plan.head.first, perturbed + plan.head.into, team_.get());
  float* rows = perturbed + plan.rows_at;
  const float* table = Floats(o.lm_head);
  const int64_t e = plan.row_elements;
  for (size_t k = 0; k < label_words_.size(); ++k) {
    const int64_t at = static_cast<int64_t>(label_words_[k]) * e;
    PerturbParams(p, plan.table_stream, plan.table_first + at, e, table + at, rows + k * e);
  }
  HeadLossFromRows(*model_, perturbed, rows, Floats(o.activations),
                   inputs.lengths + c.first_example(), c.examples(), t.seq_len(),
                   label_words_.size(), inputs.labels + c.first_example(), Floats(o.workspace),
                   Floats(o.losses));
}

void CpuBackend::ProjectedGradientOp(const ComputeOperands& o, const StepInputs& inputs,
                                     StepResult* result) {
  const TrainingSettings& t = schedule_.training();
  const float* losses = Floats(buffers_[losses_.buffer]);
  const int batch = t.batch_size();
  const int directions = DirectionsOf(t);
  double sum = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(directions) * batch; ++i) {
    loss_plus_[i] = losses[losses_.plus[i]];
    loss_minus_[i] = losses[losses_.minus[i]];
    sum += 0.5 * (static_cast<double>(loss_plus_[i]) + loss_minus_[i]);
  }
  ZoState* states = reinterpret_cast<ZoState*>(o.zo_state);
  for (int d = 0; d < directions; ++d) {
    ZoState& state = states[d];
    state.seed = DirectionSeed(inputs.seed, d);
    state.g = ProjectedGradient(loss_plus_.data() + static_cast<int64_t>(d) * batch,
                                loss_minus_.data() + static_cast<int64_t>(d) * batch, batch,
                                t.epsilon());
    state.learning_rate = inputs.learning_rate;
  }
  result->has_gradient = true;
  result->pending.assign(states, states + directions);
  result->mean_loss = sum / (static_cast<double>(directions) * batch);
}

void CpuBackend::Cast(const ComputeOp& c, const ComputeOperands& o) {
  const DType compute = schedule_.training().compute_dtype();
  const DType wire = schedule_.training().wire_dtype();
  char* params = o.params;
  if (c.cast_direction() == WIRE_TO_COMPUTE) {
    ConvertBuffer(wire, o.wire, compute, params, c.params().elements());
  } else {
    ConvertBuffer(compute, params, wire, o.wire, c.params().elements());
  }
}

}  // namespace zosched
