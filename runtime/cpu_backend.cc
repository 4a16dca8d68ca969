#include "runtime/cpu_backend.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "models/model_spec.h"
#include "models/model_tensors.h"
#include "runtime/dtype/convert.h"
#include "runtime/nn/opt_forward.h"
#include "runtime/zo/normal.h"
#include "runtime/zo/zo_math.h"

namespace zosched {
namespace {

constexpr int64_t kAlign = 64;
constexpr int64_t kZChunk = 4096;  // normals generated at a time

int64_t AlignUp(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

int SignOf(Sign sign) { return sign == MINUS ? -1 : 1; }

// Element ranges of a part's tensors and whether weight decay applies.
struct DecayRange {
  int64_t begin, end;
  bool decays;
};

std::vector<DecayRange> DecayRanges(const std::vector<TensorSpec>& tensors) {
  std::vector<DecayRange> ranges;
  int64_t offset = 0;
  for (const TensorSpec& t : tensors) {
    ranges.push_back({offset, offset + t.elements(), t.weight_decay()});
    offset += t.elements();
  }
  return ranges;
}

// z of elements [first, first + count) of `stream`, chunk by chunk:
// fn(index, z) for each element in order.
template <typename Fn>
void ForEachNormal(uint64_t seed, uint32_t stream, int64_t first, int64_t count, Fn fn) {
  thread_local std::vector<float> z(kZChunk);
  for (int64_t done = 0; done < count; done += kZChunk) {
    const int64_t n = std::min(kZChunk, count - done);
    FillNormals(seed, stream, first + done, n, z.data());
    for (int64_t i = 0; i < n; ++i) fn(first + done + i, z[i]);
  }
}

// Writes θ ± εz of `count` parameters of `stream` starting at element
// `first` (θ at `theta`) to `out`.
void Perturb(uint64_t seed, uint32_t stream, int64_t first, int64_t count, const float* theta,
             float eps, int sign, float* out) {
  ForEachNormal(seed, stream, first, count, [&](int64_t index, float z) {
    out[index - first] = Perturbed(theta[index - first], z, eps, sign);
  });
}

}  // namespace

int64_t CpuBackend::HostBytes(const Schedule& schedule, const std::string& host) {
  int64_t total = 0;
  for (const zosched::Buffer& b : schedule.buffers()) {
    if (b.device() < 0 && b.host() == host) total += AlignUp(b.size_bytes());
  }
  return total;
}

absl::StatusOr<std::unique_ptr<CpuBackend>> CpuBackend::Create(
    const Schedule& schedule, int device, const std::vector<int32_t>& label_words,
    NodeSharedMemory* host_memory, MpiCollectives* collectives) {
  std::unique_ptr<CpuBackend> b(new CpuBackend(schedule, device));
  b->model_ = schedule.model();
  RETURN_IF_ERROR(CheckRuntimeSupports(b->model_));
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
  b->label_words_ = label_words;
  b->embedding_layout_ = EmbeddingPartLayout(b->model_);
  b->block_layout_ = BlockPartLayout(b->model_);
  b->head_layout_ = HeadPartLayout(b->model_);
  b->collectives_ = collectives;

  const Device* cluster_device = nullptr;
  for (const Device& d : schedule.cluster().devices()) {
    if (d.name() == schedule.devices(device).cluster_device()) cluster_device = &d;
  }
  if (cluster_device == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "device %d names cluster device '%s', which the cluster lacks", device,
        schedule.devices(device).cluster_device()));
  }
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
  int64_t device_offset = 0, host_offset = 0;
  for (const zosched::Buffer& buf : schedule.buffers()) {
    b->specs_[buf.name()] = &buf;
    if (buf.device() == device) {
      b->buffers_[buf.name()] = base + device_offset;
      device_offset += AlignUp(buf.size_bytes());
      if (buf.kind() == ZO_STATE) b->zo_state_ = buf.name();
      if (buf.kind() == WORKSPACE) {
        (buf.name().find("perturbed") != std::string::npos ? b->perturbed_ : b->workspace_) =
            buf.name();
      }
    } else if (buf.device() < 0 && buf.host() == cluster_device->host()) {
      if (host_memory == nullptr || host_offset + buf.size_bytes() > host_memory->size()) {
        return absl::InternalError(absl::StrFormat(
            "host buffer '%s' does not fit the node's shared memory", buf.name()));
      }
      b->buffers_[buf.name()] = host_memory->data() + host_offset;
      host_offset += AlignUp(buf.size_bytes());
    }
  }
  if (b->zo_state_.empty() || b->workspace_.empty() || b->perturbed_.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "device %d lacks a zo_state, workspace or perturbed buffer in the memory plan", device));
  }
  const int64_t needed =
      BlockWorkspaceFloats(b->model_, t.micro_batch_size(), t.seq_len()) * sizeof(float);
  if (b->specs_.at(b->workspace_)->size_bytes() < needed) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "buffer '%s' has %d bytes; the CPU block forward needs %d for a micro-batch of %d at "
        "seq_len %d",
        b->workspace_, b->specs_.at(b->workspace_)->size_bytes(), needed,
        t.micro_batch_size(), t.seq_len()));
  }
  // Where every (example, sign) loss lands: the same layout on every device.
  b->plus_index_.assign(t.batch_size(), -1);
  b->minus_index_.assign(t.batch_size(), -1);
  for (const Op& op : schedule.ops()) {
    if (!op.has_compute() || op.compute().kind() != HEAD_LOSS) continue;
    for (const BufferRange& w : op.writes()) {
      if (b->specs_.at(w.buffer())->kind() != LOSSES) continue;
      std::vector<int64_t>& index =
          op.compute().sign() == PLUS ? b->plus_index_ : b->minus_index_;
      for (int k = 0; k < op.compute().examples(); ++k) {
        index[op.compute().first_example() + k] = w.offset_bytes() / sizeof(float) + k;
      }
    }
  }
  for (int e = 0; e < t.batch_size(); ++e) {
    if (b->plus_index_[e] < 0 || b->minus_index_[e] < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "example %d has no %s loss in the schedule", e, b->plus_index_[e] < 0 ? "+" : "-"));
    }
  }
  // Emulated links.
  const LinkSpec& host_link = cluster_device->host_link();
  const int64_t host_latency_ns = static_cast<int64_t>(host_link.latency_s() * 1e9);
  b->h2d_ = std::make_unique<EmulatedLink>(host_link.down_gbps(), host_latency_ns);
  b->d2h_ = std::make_unique<EmulatedLink>(host_link.up_gbps(), host_latency_ns);
  double peer_gbps = 0;
  int64_t peer_latency_ns = 0;
  for (const PeerDomain& p : schedule.cluster().peer_domains()) {
    if (p.name() != cluster_device->peer_domain()) continue;
    peer_gbps = p.gbps_per_device();
    peer_latency_ns = static_cast<int64_t>(p.latency_s() * 1e9);
  }
  b->peer_ = std::make_unique<EmulatedLink>(peer_gbps, peer_latency_ns);
  return b;
}

char* CpuBackend::Buffer(const std::string& name) const {
  auto it = buffers_.find(name);
  return it == buffers_.end() ? nullptr : it->second;
}

const zosched::Buffer* CpuBackend::BufferSpec(const std::string& name) const {
  auto it = specs_.find(name);
  return it == specs_.end() ? nullptr : it->second;
}

char* CpuBackend::At(const BufferRange& range) const {
  char* base = Buffer(range.buffer());
  return base == nullptr ? nullptr : base + range.offset_bytes();
}

ZoState CpuBackend::pending() const {
  ZoState state;
  std::memcpy(&state, Buffer(zo_state_), sizeof(state));
  return state;
}

void PinThreadToCore(int index) {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores <= 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(index % cores, &set);
  sched_setaffinity(0, sizeof(set), &set);
}

void CpuBackend::PrepareStreamThread(const Stream& stream) {
  if (stream.kind() == COMPUTE) {
    // SCHED_IDLE: any other runnable thread (a copy or collective due now)
    // preempts compute at once. Lowering one's own priority needs no
    // privilege; failure only costs timing fidelity, so it is not an error.
    sched_param param{};
    if (sched_setscheduler(0, SCHED_IDLE, &param) != 0) {
      setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
    }
    // Pin device d's compute to core d mod cores: devices then share cores
    // evenly and keep their caches, as the simulator's core sharing assumes.
    PinThreadToCore(device_);
  }
}

void CpuBackend::set_pending(const ZoState& state) {
  std::memcpy(Buffer(zo_state_), &state, sizeof(state));
}

absl::Status CpuBackend::Copy(const Op& op) {
  const auto start = EmulatedLink::Clock::now();
  const CopyOp& c = op.copy();
  char* src = At(c.src());
  char* dst = At(c.dst());
  if (src == nullptr || dst == nullptr) {
    return absl::InternalError("a copy buffer is not mapped on this rank");
  }
  if (c.direction() == DEVICE_TO_DEVICE) {
    return absl::UnimplementedError("the CPU runtime has no peer copies (use collectives)");
  }
  ConvertBuffer(c.src_dtype(), src, c.dst_dtype(), dst,
                c.src().size_bytes() / DTypeBytes(c.src_dtype()));
  EmulatedLink& link = c.direction() == HOST_TO_DEVICE ? *h2d_ : *d2h_;
  EmulatedLink::SleepUntil(link.Reserve(start, c.bytes()));
  return absl::OkStatus();
}

absl::Status CpuBackend::Collective(const Op& op) {
  const auto start = EmulatedLink::Clock::now();
  const CollectiveOp& c = op.collective();
  if (c.kind() != ALL_GATHER) {
    return absl::UnimplementedError(absl::StrFormat(
        "the CPU runtime runs ALL_GATHER collectives, not %s", CollectiveKind_Name(c.kind())));
  }
  if (collectives_ == nullptr) return absl::InternalError("no communicator");
  const std::vector<int> group(c.participants().begin(), c.participants().end());
  RETURN_IF_ERROR(collectives_->AllGather(group, At(c.recv()), c.send().size_bytes()));
  const int64_t n = group.size();
  EmulatedLink::SleepUntil(peer_->Reserve(start, c.bytes() * (n - 1) / n));
  return absl::OkStatus();
}

absl::Status CpuBackend::Compute(const Op& op, const StepInputs& inputs) {
  switch (op.compute().kind()) {
    case UPDATE:
      return Update(op);
    case EMBED:
      return Embed(op, inputs);
    case BLOCK_FORWARD:
      return Forward(op, inputs);
    case HEAD_LOSS:
      return HeadLoss(op, inputs);
    case PROJECTED_GRADIENT:
      return ProjectedGradientOp(op, inputs);
    case CAST:
      return Cast(op);
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "compute kind %s is not runnable", ComputeKind_Name(op.compute().kind())));
  }
}

absl::Status CpuBackend::Update(const Op& op) {
  const ZoState state = pending();
  if (state.learning_rate == 0) return absl::OkStatus();  // first step: nothing pending
  const ComputeOp& c = op.compute();
  const int layers = model_.num_layers();
  uint32_t stream;
  std::vector<DecayRange> ranges;
  switch (c.part()) {
    case EMBEDDING_PART:
      stream = EmbeddingStream(layers);
      ranges = DecayRanges(EmbeddingTensors(model_));
      break;
    case DECODER_BLOCK:
      stream = BlockStream(c.block());
      ranges = DecayRanges(BlockTensors(model_, c.block()));
      break;
    case HEAD_PART: {
      stream = HeadStream(layers);
      std::vector<TensorSpec> head = FinalNormTensors(model_);
      for (TensorSpec& t : HeadTensors(model_)) head.push_back(std::move(t));
      ranges = DecayRanges(head);
      break;
    }
    default:
      return absl::InvalidArgumentError("UPDATE of no part");
  }
  float* theta = reinterpret_cast<float*>(At(op.writes(0)));
  const float lambda = schedule_.training().weight_decay();
  const int64_t first = c.first_element(), end = first + c.elements();
  for (const DecayRange& r : ranges) {
    const int64_t lo = std::max(first, r.begin), hi = std::min(end, r.end);
    if (lo >= hi) continue;
    ForEachNormal(state.seed, stream, lo, hi - lo, [&](int64_t index, float z) {
      float& t = theta[index - first];
      t = Updated(t, z, state.learning_rate, state.g, lambda, r.decays);
    });
  }
  return absl::OkStatus();
}

absl::Status CpuBackend::Embed(const Op& op, const StepInputs& inputs) {
  const ComputeOp& c = op.compute();
  const int seq = schedule_.training().seq_len();
  const int64_t h = model_.hidden_size();
  const float eps = schedule_.training().epsilon();
  const int sign = SignOf(c.sign());
  const uint32_t stream = EmbeddingStream(model_.num_layers());
  const float* part = reinterpret_cast<const float*>(At(op.reads(0)));
  float* act = reinterpret_cast<float*>(At(op.writes(0)));
  const int64_t tokens_at = embedding_layout_.Get("embed_tokens.weight").offset;
  const int64_t positions_at = embedding_layout_.Get("embed_positions.weight").offset;
  // Position rows t + 2 (OPT's offset), perturbed once for the whole op.
  std::vector<float> positions(seq * h);
  Perturb(inputs.seed, stream, positions_at + 2 * h, seq * h, part + positions_at + 2 * h, eps,
          sign, positions.data());
  std::vector<float> row(h);
  for (int e = 0; e < c.examples(); ++e) {
    const int32_t* tokens = inputs.tokens + static_cast<int64_t>(c.first_example() + e) * seq;
    for (int t = 0; t < seq; ++t) {
      const int64_t at = tokens_at + static_cast<int64_t>(tokens[t]) * h;
      Perturb(inputs.seed, stream, at, h, part + at, eps, sign, row.data());
      float* out = act + (static_cast<int64_t>(e) * seq + t) * h;
      for (int64_t i = 0; i < h; ++i) out[i] = row[i] + positions[t * h + i];
    }
  }
  return absl::OkStatus();
}

absl::Status CpuBackend::Forward(const Op& op, const StepInputs& inputs) {
  const ComputeOp& c = op.compute();
  const TrainingSettings& t = schedule_.training();
  const float* theta = reinterpret_cast<const float*>(At(op.reads(0)));
  float* perturbed = reinterpret_cast<float*>(Buffer(perturbed_));
  Perturb(inputs.seed, BlockStream(c.block()), 0, block_layout_.total_floats, theta,
          t.epsilon(), SignOf(c.sign()), perturbed);
  BlockForward(model_, perturbed, inputs.lengths + c.first_example(), c.examples(),
               t.seq_len(), reinterpret_cast<float*>(At(op.reads(1))),
               reinterpret_cast<float*>(Buffer(workspace_)));
  return absl::OkStatus();
}

absl::Status CpuBackend::HeadLoss(const Op& op, const StepInputs& inputs) {
  const ComputeOp& c = op.compute();
  const TrainingSettings& t = schedule_.training();
  const int sign = SignOf(c.sign());
  const int64_t e_dim = EmbedDim(model_);
  const float* act = nullptr;
  const float* head = nullptr;
  const float* embedding = nullptr;
  for (const BufferRange& r : op.reads()) {
    const BufferKind kind = specs_.at(r.buffer())->kind();
    const float* p = reinterpret_cast<const float*>(At(r));
    if (kind == ACTIVATIONS) act = p;
    if (kind == RESIDENT_PARAMS && head == nullptr) {
      head = p;
    } else if (kind == RESIDENT_PARAMS) {
      embedding = p;
    }
  }
  float* losses = nullptr;
  for (const BufferRange& w : op.writes()) {
    if (specs_.at(w.buffer())->kind() == LOSSES) losses = reinterpret_cast<float*>(At(w));
  }
  if (act == nullptr || head == nullptr || embedding == nullptr || losses == nullptr) {
    return absl::InvalidArgumentError(
        "HEAD_LOSS must read activations, the head part and the tied embedding part, and "
        "write losses");
  }
  // [perturbed head part | perturbed label-word rows of the tied head].
  float* perturbed = reinterpret_cast<float*>(Buffer(perturbed_));
  const int64_t head_floats = head_layout_.total_floats;
  Perturb(inputs.seed, HeadStream(model_.num_layers()), 0, head_floats, head, t.epsilon(), sign,
          perturbed);
  float* rows = perturbed + head_floats;
  const int n = label_words_.size();
  std::vector<int32_t> row_ids(n);
  for (int k = 0; k < n; ++k) {
    const int64_t at = static_cast<int64_t>(label_words_[k]) * e_dim;
    Perturb(inputs.seed, EmbeddingStream(model_.num_layers()), at, e_dim, embedding + at,
            t.epsilon(), sign, rows + k * e_dim);
    row_ids[k] = k;
  }
  zosched::HeadLoss(model_, perturbed, rows, act, inputs.lengths + c.first_example(),
                    c.examples(), t.seq_len(), row_ids.data(), n,
                    inputs.labels + c.first_example(), losses);
  return absl::OkStatus();
}

absl::Status CpuBackend::ProjectedGradientOp(const Op& op, const StepInputs& inputs) {
  const TrainingSettings& t = schedule_.training();
  const float* losses = reinterpret_cast<const float*>(At(op.reads(0)));
  const int batch = t.batch_size();
  std::vector<float> plus(batch), minus(batch);
  double sum = 0;
  for (int e = 0; e < batch; ++e) {
    plus[e] = losses[plus_index_[e]];
    minus[e] = losses[minus_index_[e]];
    sum += 0.5 * (static_cast<double>(plus[e]) + minus[e]);
  }
  ZoState state;
  state.seed = inputs.seed;
  state.g = ProjectedGradient(plus.data(), minus.data(), batch, t.epsilon());
  state.learning_rate = inputs.learning_rate;
  std::memcpy(Buffer(zo_state_), &state, sizeof(state));
  last_loss_ = sum / batch;
  return absl::OkStatus();
}

absl::Status CpuBackend::Cast(const Op& op) {
  const zosched::Buffer* from = specs_.at(op.reads(0).buffer());
  const zosched::Buffer* to = specs_.at(op.writes(0).buffer());
  ConvertBuffer(from->dtype(), At(op.reads(0)), to->dtype(), At(op.writes(0)),
                op.compute().elements());
  return absl::OkStatus();
}

}  // namespace zosched
