#include "schedule/lowering.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "schedule/validate.h"

namespace zosched {
namespace {

constexpr int64_t kLossBytes = 4;      // one fp32 per-example loss
constexpr int64_t kZoStateBytes = 16;  // pending seed (u64) + g (f32) + pad

// Stream names of every lowered schedule.
constexpr char kCompute[] = "compute";
constexpr char kH2d[] = "h2d";
constexpr char kD2h[] = "d2h";
constexpr char kCollective[] = "collective";

std::string SignSuffix(Sign sign) { return sign == PLUS ? "+" : "-"; }

BufferRange Range(const std::string& buffer, int64_t offset, int64_t size) {
  BufferRange r;
  r.set_buffer(buffer);
  r.set_offset_bytes(offset);
  r.set_size_bytes(size);
  return r;
}

// The fixed facts every op builder needs.
struct Sizes {
  int64_t block_elements = 0;     // E: parameters of one decoder block
  int64_t embedding_elements = 0; // resident embedding part
  int64_t head_elements = 0;      // resident head part (final norm + head)
  int64_t host_bytes = 0;         // bytes per element of each dtype
  int64_t wire_bytes = 0;
  int64_t compute_bytes = 0;
  bool casts = false;             // wire dtype != compute dtype
  int64_t workspace_bytes = 0;    // one micro-batch's block-forward scratch
  // θ±εz of one block (or of the head's final norm, project_out and label
  // rows): perturbation is out of place, so forwards read a perturbed copy.
  int64_t perturbed_bytes = 0;
};

// One device's role in the schedule.
struct DevicePlan {
  int id = 0;
  const Device* device = nullptr;
  std::vector<Sign> signs;      // the perturbation paths it runs
  int first_example = 0;        // its data-parallel share
  int examples = 0;
  // Slicing group: the devices that share this device's host (sliced
  // DISTZO2), or just this device. `rank` is its position in the group.
  std::vector<int> group;
  int rank = 0;
  std::string host_params;      // the host parameter store it streams from
  // Its buffers.
  std::string resident, blocks, workspace, perturbed, losses, zo_state;
  std::map<Sign, std::string> activations;
  std::vector<std::string> slots, wire;
};

// Appends ops, buffers and edges to a Schedule.
class Builder {
 public:
  explicit Builder(Schedule* schedule) : schedule_(schedule) {}

  std::string AddBuffer(const std::string& name, BufferKind kind, int device,
                        const std::string& host, int64_t size_bytes,
                        DType dtype, bool persistent) {
    Buffer* b = schedule_->add_buffers();
    b->set_name(name);
    b->set_kind(kind);
    b->set_device(device);
    b->set_host(host);
    b->set_size_bytes(size_bytes);
    b->set_dtype(dtype);
    b->set_persistent(persistent);
    return name;
  }

  Op* AddOp(int device, const std::string& stream, const std::string& name) {
    Op* op = schedule_->add_ops();
    op->set_id(schedule_->ops_size() - 1);
    op->set_device(device);
    op->set_stream(stream);
    op->set_name(name);
    return op;
  }

  // `to` waits for `from`. Ops on one stream are ordered already.
  void AddEdge(const Op* from, const Op* to) {
    if (from == nullptr) return;
    if (from->device() == to->device() && from->stream() == to->stream()) return;
    Edge* e = schedule_->add_edges();
    e->set_from(from->id());
    e->set_to(to->id());
  }

 private:
  Schedule* schedule_;
};

class Lowering {
 public:
  Lowering(const ModelSpec& model, const Cluster& cluster,
           const LowerOptions& options, Schedule* schedule)
      : model_(model), cluster_(cluster), options_(options),
        training_(schedule->training()), schedule_(schedule),
        builder_(schedule) {}

  absl::Status Run(const std::vector<const Device*>& devices);

 private:
  void PlanDevices(const std::vector<const Device*>& devices);
  void PlanBuffers();
  void LowerDevice(DevicePlan& plan);
  // The ops of one offloaded block on `plan`'s device; returns the op
  // after which the block's forwards may run (the update or the all-gather).
  const Op* StreamInBlock(const DevicePlan& plan, int block);
  void ForwardBlock(const DevicePlan& plan, int block, const Op* ready);
  void LowerLossesAndGradient();

  // Element range [first, first + count) of `plan`'s slice of a block.
  int64_t SliceChunk(const DevicePlan& plan) const;
  int64_t SliceFirst(const DevicePlan& plan) const;
  int64_t SliceCount(const DevicePlan& plan) const;
  int MicroBatches(const DevicePlan& plan) const {
    return plan.examples / training_.micro_batch_size();
  }
  Op* AddCompute(const DevicePlan& plan, const std::string& name,
                 ComputeKind kind, Part part, int block, Sign sign);
  Op* AddUpdate(const DevicePlan& plan, const std::string& name, Part part,
                int block, const BufferRange& params, int64_t first_element,
                int64_t elements);

  const ModelSpec& model_;
  const Cluster& cluster_;
  const LowerOptions& options_;
  const TrainingSettings& training_;
  Schedule* schedule_;
  Builder builder_;
  Sizes sizes_;
  std::vector<DevicePlan> plans_;
  bool offloaded_ = false;  // ZO2 / DISTZO2: blocks stream from the host
  int slots_ = 0;
  // Per device, per block: the ops that must finish before the block's slot
  // may be refilled (its last forward and its offload).
  std::vector<std::vector<std::vector<const Op*>>> slot_users_;
  // Per device: the compute op that ends its head-and-loss phase.
  std::vector<const Op*> last_loss_op_;
};

int64_t Lowering::SliceChunk(const DevicePlan& plan) const {
  const int64_t n = plan.group.size();
  return (sizes_.block_elements + n - 1) / n;
}

int64_t Lowering::SliceFirst(const DevicePlan& plan) const {
  return std::min(sizes_.block_elements, plan.rank * SliceChunk(plan));
}

int64_t Lowering::SliceCount(const DevicePlan& plan) const {
  return std::min(sizes_.block_elements, SliceFirst(plan) + SliceChunk(plan)) -
         SliceFirst(plan);
}

Op* Lowering::AddCompute(const DevicePlan& plan, const std::string& name,
                         ComputeKind kind, Part part, int block, Sign sign) {
  Op* op = builder_.AddOp(plan.id, kCompute, name);
  ComputeOp* c = op->mutable_compute();
  c->set_kind(kind);
  c->set_part(part);
  c->set_block(block);
  c->set_sign(sign);
  c->set_seq_len(training_.seq_len());
  return op;
}

Op* Lowering::AddUpdate(const DevicePlan& plan, const std::string& name,
                        Part part, int block, const BufferRange& params,
                        int64_t first_element, int64_t elements) {
  Op* op = AddCompute(plan, name, UPDATE, part, block, SIGN_UNSPECIFIED);
  ComputeOp* c = op->mutable_compute();
  c->set_seq_len(0);
  c->set_first_element(first_element);
  c->set_elements(elements);
  // θ ← θ - η(g z + λθ): z from Philox, then 2 multiplies and 2 adds.
  c->set_flops(4 * elements);
  c->set_bytes_accessed(2 * elements * sizes_.compute_bytes);
  *op->add_reads() = Range(plan.zo_state, 0, kZoStateBytes);
  *op->add_reads() = params;
  *op->add_writes() = params;
  return op;
}

void Lowering::PlanDevices(const std::vector<const Device*>& devices) {
  const int p_count = options_.strategy == DISTZO2 ? options_.pertp : 1;
  const int d_count = options_.strategy == DISTZO2 ? options_.dp : 1;
  const int share = training_.batch_size() / d_count;
  for (int p = 0; p < p_count; ++p) {
    for (int d = 0; d < d_count; ++d) {
      DevicePlan plan;
      plan.id = p * d_count + d;
      plan.device = devices[plan.id];
      if (p_count == 1) {
        plan.signs = {PLUS, MINUS};
      } else {
        plan.signs = {p == 0 ? PLUS : MINUS};
      }
      plan.first_example = d * share;
      plan.examples = share;
      plans_.push_back(plan);
    }
  }
  // Slicing groups: devices sharing a host, in rank order.
  for (DevicePlan& plan : plans_) {
    for (const DevicePlan& other : plans_) {
      const bool same_group = options_.strategy == DISTZO2 && options_.slicing
                                  ? other.device->host() == plan.device->host()
                                  : other.id == plan.id;
      if (!same_group) continue;
      if (other.id == plan.id) plan.rank = plan.group.size();
      plan.group.push_back(other.id);
    }
  }
}

void Lowering::PlanBuffers() {
  const int64_t cb = sizes_.compute_bytes;
  const int64_t seq = training_.seq_len();
  const DType compute = training_.compute_dtype();
  const int64_t total_losses =
      static_cast<int64_t>(plans_.size()) * plans_[0].examples *
      plans_[0].signs.size();
  std::map<std::string, std::string> host_stores;  // host -> store buffer
  for (DevicePlan& plan : plans_) {
    const std::string d = absl::StrCat("d", plan.id, "/");
    plan.resident = builder_.AddBuffer(
        d + "resident", RESIDENT_PARAMS, plan.id, "",
        (sizes_.embedding_elements + sizes_.head_elements) * cb, compute, true);
    if (!offloaded_) {
      plan.blocks = builder_.AddBuffer(
          d + "blocks", RESIDENT_PARAMS, plan.id, "",
          model_.num_layers() * sizes_.block_elements * cb, compute, true);
    } else {
      const int64_t padded = SliceChunk(plan) * plan.group.size();
      for (int k = 0; k < slots_; ++k) {
        plan.slots.push_back(builder_.AddBuffer(absl::StrCat(d, "slot", k),
                                                BLOCK_SLOT, plan.id, "",
                                                padded * cb, compute, false));
        if (sizes_.casts) {
          plan.wire.push_back(builder_.AddBuffer(
              absl::StrCat(d, "wire", k), WIRE_STAGING, plan.id, "",
              padded * sizes_.wire_bytes, training_.wire_dtype(), false));
        }
      }
      const std::string& host = plan.device->host();
      const int64_t store_bytes =
          model_.num_layers() * sizes_.block_elements * sizes_.host_bytes;
      if (!(options_.strategy == DISTZO2 && !options_.slicing)) {
        // One store per host, shared by its devices.
        auto [it, inserted] = host_stores.emplace(host, "");
        if (inserted) {
          it->second = builder_.AddBuffer(host + "/params", HOST_PARAMS, -1, host,
                                          store_bytes, training_.host_dtype(), true);
        }
        plan.host_params = it->second;
      } else {
        // The naive scheme: every device its own host copy.
        plan.host_params =
            builder_.AddBuffer(absl::StrCat(host, "/params.d", plan.id), HOST_PARAMS,
                               -1, host, store_bytes, training_.host_dtype(), true);
      }
    }
    for (Sign sign : plan.signs) {
      plan.activations[sign] = builder_.AddBuffer(
          d + "act" + SignSuffix(sign), ACTIVATIONS, plan.id, "",
          plan.examples * seq * model_.hidden_size() * cb, compute, false);
    }
    plan.workspace = builder_.AddBuffer(d + "workspace", WORKSPACE, plan.id, "",
                                        sizes_.workspace_bytes, compute, false);
    plan.perturbed = builder_.AddBuffer(d + "perturbed", WORKSPACE, plan.id, "",
                                        sizes_.perturbed_bytes, compute, false);
    plan.losses = builder_.AddBuffer(d + "losses", LOSSES, plan.id, "",
                                     total_losses * kLossBytes, FP32, false);
    plan.zo_state = builder_.AddBuffer(d + "zo_state", ZO_STATE, plan.id, "",
                                       kZoStateBytes, FP32, true);
  }
}

const Op* Lowering::StreamInBlock(const DevicePlan& plan, int block) {
  const int k = block % slots_;
  const std::string b = absl::StrCat(" block ", block);
  const int64_t first = SliceFirst(plan), count = SliceCount(plan);
  const int64_t cb = sizes_.compute_bytes, wb = sizes_.wire_bytes;
  const std::string& landing = sizes_.casts ? plan.wire[k] : plan.slots[k];
  const LinkClass link = plan.device->host_link().link_class();
  const BufferRange host_range =
      Range(plan.host_params,
            (block * sizes_.block_elements + first) * sizes_.host_bytes,
            count * sizes_.host_bytes);
  const BufferRange landing_range = Range(landing, first * wb, count * wb);
  const BufferRange slice = Range(plan.slots[k], first * cb, count * cb);

  Op* h2d = builder_.AddOp(plan.id, kH2d, "h2d" + b);
  CopyOp* up = h2d->mutable_copy();
  up->set_direction(HOST_TO_DEVICE);
  *up->mutable_src() = host_range;
  *up->mutable_dst() = landing_range;
  up->set_bytes(count * wb);
  up->set_link_class(link);
  up->set_src_dtype(training_.host_dtype());
  up->set_dst_dtype(training_.wire_dtype());
  *h2d->add_reads() = host_range;
  *h2d->add_writes() = landing_range;
  if (block >= slots_) {
    for (const Op* user : slot_users_[plan.id][block - slots_]) {
      builder_.AddEdge(user, h2d);
    }
  }

  const Op* before_update = h2d;
  if (sizes_.casts) {
    Op* cast = AddCompute(plan, "cast-in" + b, CAST, DECODER_BLOCK, block,
                          SIGN_UNSPECIFIED);
    cast->mutable_compute()->set_seq_len(0);
    cast->mutable_compute()->set_first_element(first);
    cast->mutable_compute()->set_elements(count);
    cast->mutable_compute()->set_bytes_accessed(count * (wb + cb));
    *cast->add_reads() = landing_range;
    *cast->add_writes() = slice;
    builder_.AddEdge(h2d, cast);
    before_update = cast;
  }
  Op* update = AddUpdate(plan, "update" + b, DECODER_BLOCK, block, slice, first, count);
  builder_.AddEdge(before_update, update);

  const Op* before_offload = update;
  if (sizes_.casts) {
    Op* cast = AddCompute(plan, "cast-out" + b, CAST, DECODER_BLOCK, block,
                          SIGN_UNSPECIFIED);
    cast->mutable_compute()->set_seq_len(0);
    cast->mutable_compute()->set_first_element(first);
    cast->mutable_compute()->set_elements(count);
    cast->mutable_compute()->set_bytes_accessed(count * (wb + cb));
    *cast->add_reads() = slice;
    *cast->add_writes() = landing_range;
    before_offload = cast;
  }
  Op* d2h = builder_.AddOp(plan.id, kD2h, "d2h" + b);
  CopyOp* down = d2h->mutable_copy();
  down->set_direction(DEVICE_TO_HOST);
  *down->mutable_src() = landing_range;
  *down->mutable_dst() = host_range;
  down->set_bytes(count * wb);
  down->set_link_class(link);
  down->set_src_dtype(training_.wire_dtype());
  down->set_dst_dtype(training_.host_dtype());
  *d2h->add_reads() = landing_range;
  *d2h->add_writes() = host_range;
  builder_.AddEdge(before_offload, d2h);
  slot_users_[plan.id][block].push_back(d2h);

  if (plan.group.size() == 1) return update;
  // All-gather the block among the devices of this host. NCCL's in-place
  // all-gather sends this device's chunk of the slot and fills the others.
  const int64_t chunk = SliceChunk(plan);
  Op* gather = builder_.AddOp(plan.id, kCollective, "all-gather" + b);
  CollectiveOp* c = gather->mutable_collective();
  c->set_kind(ALL_GATHER);
  c->set_key(absl::StrCat("all-gather block ", block, " on ", plan.device->host()));
  for (int id : plan.group) c->add_participants(id);
  c->set_bytes(chunk * plan.group.size() * cb);
  *c->mutable_send() = Range(plan.slots[k], plan.rank * chunk * cb, chunk * cb);
  *c->mutable_recv() = Range(plan.slots[k], 0, chunk * plan.group.size() * cb);
  c->set_link_class(cluster_.peer_domains().empty()
                        ? PCIE
                        : cluster_.peer_domains(0).link_class());
  // Reads and writes list the bytes that matter: the padding after the last
  // element travels but nobody reads it.
  *gather->add_reads() = slice;
  for (int r = 0; r < static_cast<int>(plan.group.size()); ++r) {
    if (r == plan.rank) continue;
    const int64_t from = std::min(sizes_.block_elements, r * chunk);
    const int64_t to = std::min(sizes_.block_elements, (r + 1) * chunk);
    if (to > from) *gather->add_writes() = Range(plan.slots[k], from * cb, (to - from) * cb);
  }
  builder_.AddEdge(update, gather);
  return gather;
}

void Lowering::ForwardBlock(const DevicePlan& plan, int block, const Op* ready) {
  const int64_t mb = training_.micro_batch_size();
  const int64_t seq = training_.seq_len();
  const int64_t h = model_.hidden_size();
  const int64_t cb = sizes_.compute_bytes;
  const int64_t act_bytes = mb * seq * h * cb;
  const BufferRange weights =
      offloaded_ ? Range(plan.slots[block % slots_], 0, sizes_.block_elements * cb)
                 : Range(plan.blocks, block * sizes_.block_elements * cb,
                         sizes_.block_elements * cb);
  const Op* last = nullptr;
  for (Sign sign : plan.signs) {
    for (int m = 0; m < MicroBatches(plan); ++m) {
      std::string name = absl::StrCat("fwd", SignSuffix(sign), " block ", block);
      if (MicroBatches(plan) > 1) absl::StrAppend(&name, " mb ", m);
      Op* fwd = AddCompute(plan, name, BLOCK_FORWARD, DECODER_BLOCK, block, sign);
      ComputeOp* c = fwd->mutable_compute();
      c->set_first_example(plan.first_example + m * mb);
      c->set_examples(mb);
      c->set_flops(BlockForwardFlopsPerToken(model_, seq) * mb * seq);
      c->set_bytes_accessed(sizes_.block_elements * cb + 2 * act_bytes);
      const BufferRange act = Range(plan.activations.at(sign), m * act_bytes, act_bytes);
      *fwd->add_reads() = weights;
      *fwd->add_reads() = act;
      *fwd->add_writes() = act;
      *fwd->add_writes() = Range(plan.workspace, 0, sizes_.workspace_bytes);
      *fwd->add_writes() = Range(plan.perturbed, 0, sizes_.block_elements * cb);
      builder_.AddEdge(ready, fwd);
      last = fwd;
    }
  }
  if (offloaded_) slot_users_[plan.id][block].push_back(last);
}

void Lowering::LowerDevice(DevicePlan& plan) {
  const int64_t cb = sizes_.compute_bytes;
  const int64_t mb = training_.micro_batch_size();
  const int64_t seq = training_.seq_len();
  const int64_t h = model_.hidden_size();
  const int64_t act_bytes = mb * seq * h * cb;
  const BufferRange embedding =
      Range(plan.resident, 0, sizes_.embedding_elements * cb);
  const BufferRange head = Range(plan.resident, sizes_.embedding_elements * cb,
                                 sizes_.head_elements * cb);

  AddUpdate(plan, "update embedding", EMBEDDING_PART, 0, embedding, 0,
            sizes_.embedding_elements);
  for (Sign sign : plan.signs) {
    for (int m = 0; m < MicroBatches(plan); ++m) {
      std::string name = "embed" + SignSuffix(sign);
      if (MicroBatches(plan) > 1) absl::StrAppend(&name, " mb ", m);
      Op* embed = AddCompute(plan, name, EMBED, EMBEDDING_PART, 0, sign);
      ComputeOp* c = embed->mutable_compute();
      c->set_first_example(plan.first_example + m * mb);
      c->set_examples(mb);
      // Token and position rows, θ±εz on the rows read, summed.
      c->set_flops(3 * mb * seq * h);
      c->set_bytes_accessed(3 * act_bytes);
      *embed->add_reads() = embedding;
      *embed->add_writes() = Range(plan.activations.at(sign), m * act_bytes, act_bytes);
    }
  }

  if (!offloaded_) {
    for (int b = 0; b < model_.num_layers(); ++b) {
      const BufferRange weights = Range(plan.blocks, b * sizes_.block_elements * cb,
                                        sizes_.block_elements * cb);
      AddUpdate(plan, absl::StrCat("update block ", b), DECODER_BLOCK, b, weights,
                0, sizes_.block_elements);
      ForwardBlock(plan, b, nullptr);
    }
  } else if (plan.group.size() > 1 && slots_ >= 2) {
    // Sliced: update (and all-gather) block b+1 before forwarding block b.
    const Op* ready = StreamInBlock(plan, 0);
    for (int b = 0; b < model_.num_layers(); ++b) {
      const Op* next =
          b + 1 < model_.num_layers() ? StreamInBlock(plan, b + 1) : nullptr;
      ForwardBlock(plan, b, ready);
      ready = next;
    }
  } else {
    for (int b = 0; b < model_.num_layers(); ++b) {
      ForwardBlock(plan, b, StreamInBlock(plan, b));
    }
  }

  AddUpdate(plan, "update head", HEAD_PART, 0, head, 0, sizes_.head_elements);
  const int64_t local = plan.examples;
  const int64_t chunk = local * plan.signs.size();
  const Op* last = nullptr;
  for (size_t s = 0; s < plan.signs.size(); ++s) {
    const Sign sign = plan.signs[s];
    for (int m = 0; m < MicroBatches(plan); ++m) {
      std::string name = "head" + SignSuffix(sign) + " loss";
      if (MicroBatches(plan) > 1) absl::StrAppend(&name, " mb ", m);
      Op* loss = AddCompute(plan, name, HEAD_LOSS, HEAD_PART, 0, sign);
      ComputeOp* c = loss->mutable_compute();
      c->set_first_example(plan.first_example + m * mb);
      c->set_examples(mb);
      // Last position only: final norm, project_out, label-word logits.
      const int64_t e = EmbedDim(model_);
      c->set_flops(mb * (8 * h + 2 * (e != h ? h * e : 0) +
                         2 * training_.num_label_words() * e));
      c->set_bytes_accessed(
          sizes_.head_elements * cb +
          LabelHeadSliceBytes(model_, training_.num_label_words(),
                              training_.compute_dtype()) +
          mb * h * cb);
      *loss->add_reads() = Range(plan.activations.at(sign), m * act_bytes, act_bytes);
      *loss->add_reads() = head;
      if (model_.tied_lm_head()) *loss->add_reads() = embedding;
      *loss->add_writes() = Range(plan.perturbed, 0, sizes_.perturbed_bytes);
      *loss->add_writes() =
          Range(plan.losses, (plan.id * chunk + s * local + m * mb) * kLossBytes,
                mb * kLossBytes);
      last = loss;
    }
  }
  last_loss_op_[plan.id] = last;
}

void Lowering::LowerLossesAndGradient() {
  const int64_t chunk = plans_[0].examples * plans_[0].signs.size();
  const int64_t all = chunk * plans_.size();
  for (const DevicePlan& plan : plans_) {
    const Op* ready = last_loss_op_[plan.id];
    if (plans_.size() > 1) {
      Op* gather = builder_.AddOp(plan.id, kCollective, "all-gather losses");
      CollectiveOp* c = gather->mutable_collective();
      c->set_kind(ALL_GATHER);
      c->set_key("all-gather losses");
      for (const DevicePlan& p : plans_) c->add_participants(p.id);
      c->set_bytes(all * kLossBytes);
      *c->mutable_send() = Range(plan.losses, plan.id * chunk * kLossBytes, chunk * kLossBytes);
      *c->mutable_recv() = Range(plan.losses, 0, all * kLossBytes);
      c->set_link_class(cluster_.peer_domains().empty()
                            ? PCIE
                            : cluster_.peer_domains(0).link_class());
      *gather->add_reads() = c->send();
      for (const DevicePlan& p : plans_) {
        if (p.id == plan.id) continue;
        *gather->add_writes() = Range(plan.losses, p.id * chunk * kLossBytes, chunk * kLossBytes);
      }
      builder_.AddEdge(ready, gather);
      ready = gather;
    }
    Op* grad = AddCompute(plan, "projected gradient", PROJECTED_GRADIENT,
                          PART_UNSPECIFIED, 0, SIGN_UNSPECIFIED);
    grad->mutable_compute()->set_seq_len(0);
    grad->mutable_compute()->set_examples(training_.batch_size());
    grad->mutable_compute()->set_flops(3 * all);
    grad->mutable_compute()->set_bytes_accessed(all * kLossBytes);
    *grad->add_reads() = Range(plan.losses, 0, all * kLossBytes);
    *grad->add_writes() = Range(plan.zo_state, 0, kZoStateBytes);
    builder_.AddEdge(ready, grad);
  }
}

absl::Status Lowering::Run(const std::vector<const Device*>& devices) {
  offloaded_ = options_.strategy != MEZO;
  slots_ = offloaded_ ? options_.block_slots : 0;
  sizes_.block_elements = BlockParams(model_);
  sizes_.embedding_elements = EmbeddingParams(model_);
  sizes_.head_elements = FinalNormParams(model_) + HeadParams(model_);
  sizes_.host_bytes = DTypeBytes(training_.host_dtype());
  sizes_.wire_bytes = DTypeBytes(training_.wire_dtype());
  sizes_.compute_bytes = DTypeBytes(training_.compute_dtype());
  sizes_.casts = training_.wire_dtype() != training_.compute_dtype();
  sizes_.workspace_bytes =
      training_.micro_batch_size() * training_.seq_len() *
      DualForwardActivationBytesPerToken(model_, training_.seq_len(),
                                         training_.compute_dtype())
          .workspace;
  const int64_t head_needed = FinalNormParams(model_) +
                              (EmbedDim(model_) != model_.hidden_size()
                                   ? model_.hidden_size() * EmbedDim(model_)
                                   : 0) +
                              training_.num_label_words() * EmbedDim(model_);
  sizes_.perturbed_bytes =
      std::max(sizes_.block_elements, head_needed) * sizes_.compute_bytes;

  PlanDevices(devices);
  for (const DevicePlan& plan : plans_) {
    ScheduleDevice* d = schedule_->add_devices();
    d->set_id(plan.id);
    d->set_cluster_device(plan.device->name());
    auto add_stream = [d](const char* name, StreamKind kind) {
      Stream* s = d->add_streams();
      s->set_name(name);
      s->set_kind(kind);
    };
    add_stream(kCompute, COMPUTE);
    if (offloaded_) {
      add_stream(kH2d, H2D);
      add_stream(kD2h, D2H);
    }
    if (plans_.size() > 1) add_stream(kCollective, COLLECTIVE);
  }
  PlanBuffers();
  slot_users_.assign(plans_.size(),
                     std::vector<std::vector<const Op*>>(model_.num_layers()));
  last_loss_op_.assign(plans_.size(), nullptr);
  for (DevicePlan& plan : plans_) LowerDevice(plan);
  LowerLossesAndGradient();
  return absl::OkStatus();
}

// The cluster devices the strategy runs on, in rank order.
absl::StatusOr<std::vector<const Device*>> SelectDevices(const Cluster& cluster,
                                                         const LowerOptions& options) {
  std::vector<const Device*> devices;
  const int wanted = options.strategy == DISTZO2 ? options.pertp * options.dp : 1;
  if (options.devices.empty()) {
    if (cluster.devices_size() < wanted) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "cluster '%s' has %d devices; the strategy needs %d",
          cluster.name(), cluster.devices_size(), wanted));
    }
    for (int i = 0; i < wanted; ++i) devices.push_back(&cluster.devices(i));
    return devices;
  }
  for (const std::string& name : options.devices) {
    auto it = std::find_if(cluster.devices().begin(), cluster.devices().end(),
                           [&](const Device& d) { return d.name() == name; });
    if (it == cluster.devices().end()) {
      std::vector<std::string> known;
      for (const Device& d : cluster.devices()) known.push_back(d.name());
      return absl::InvalidArgumentError(absl::StrFormat(
          "cluster '%s' has no device '%s' (devices: %s)", cluster.name(), name,
          absl::StrJoin(known, ", ")));
    }
    devices.push_back(&*it);
  }
  if (static_cast<int>(devices.size()) != wanted) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d devices given, but %s needs %d%s", devices.size(),
        StrategyKind_Name(options.strategy), wanted,
        options.strategy == DISTZO2
            ? absl::StrFormat(" (P·D = %d·%d)", options.pertp, options.dp)
            : ""));
  }
  return devices;
}

bool HasPeak(const Device& device, DType dtype) {
  for (const ComputePeak& p : device.peaks()) {
    if (p.dtype() == dtype) return true;
  }
  return false;
}

// The compute dtype: the requested one, which every device must support; by
// default the model's weight dtype where every device has a peak for it,
// else FP32 (the CPU testbed computes in FP32 only).
absl::StatusOr<DType> ChooseComputeDType(const ModelSpec& model, DType requested,
                                         const std::vector<const Device*>& devices) {
  const DType dtype = requested != DTYPE_UNSPECIFIED ? requested : model.weight_dtype();
  for (const Device* d : devices) {
    if (HasPeak(*d, dtype)) continue;
    if (requested == DTYPE_UNSPECIFIED && HasPeak(*d, FP32)) return FP32;
    std::vector<std::string> supported;
    for (const ComputePeak& p : d->peaks()) supported.push_back(DType_Name(p.dtype()));
    return absl::InvalidArgumentError(absl::StrFormat(
        "device '%s' (%s) does not compute in %s (it has peaks for %s); choose "
        "another compute dtype",
        d->name(), d->model(), DType_Name(dtype), absl::StrJoin(supported, ", ")));
  }
  return dtype;
}

absl::Status CheckOptions(const ModelSpec& model, const LowerOptions& options,
                          const TrainingSettings& t) {
  auto invalid = [](auto&&... args) {
    return absl::InvalidArgumentError(absl::StrFormat(args...));
  };
  if (options.strategy == STRATEGY_KIND_UNSPECIFIED) {
    return invalid("no strategy given (expected MEZO, ZO2 or DISTZO2)");
  }
  const int dp = options.strategy == DISTZO2 ? options.dp : 1;
  if (options.strategy == DISTZO2) {
    if (options.pertp != 1 && options.pertp != 2) {
      return invalid("pertp is %d: perturbation parallelism splits the +ε and "
                     "-ε passes, so P must be 1 or 2", options.pertp);
    }
    if (options.dp < 1) return invalid("dp is %d (expected >= 1)", options.dp);
  }
  if (options.strategy != MEZO && options.block_slots < 1) {
    return invalid("block_slots is %d (expected >= 1; ZO2 uses 3)", options.block_slots);
  }
  if (t.batch_size() < 1 || t.seq_len() < 1 || t.micro_batch_size() < 1) {
    return invalid("batch %d, micro-batch %d and seq_len %d must be positive",
                   t.batch_size(), t.micro_batch_size(), t.seq_len());
  }
  if (t.batch_size() % dp != 0) {
    return invalid("batch %d is not divisible by D = %d data-parallel groups",
                   t.batch_size(), dp);
  }
  const int share = t.batch_size() / dp;
  if (share % t.micro_batch_size() != 0) {
    return invalid("each device's share of %d examples is not divisible by the "
                   "micro-batch %d", share, t.micro_batch_size());
  }
  if (t.seq_len() > model.max_positions()) {
    return invalid("seq_len %d exceeds model '%s' max_positions %d", t.seq_len(),
                   model.name(), model.max_positions());
  }
  if (t.num_label_words() < 1) {
    return invalid("num_label_words is %d (expected >= 1)", t.num_label_words());
  }
  if (!(t.epsilon() > 0)) return invalid("epsilon %g must be positive", t.epsilon());
  return absl::OkStatus();
}

}  // namespace

TrainingSettings DefaultTrainingSettings() {
  TrainingSettings t;
  t.set_batch_size(16);
  t.set_micro_batch_size(0);
  t.set_seq_len(2048);
  t.set_epsilon(1e-3);
  t.set_learning_rate(1e-7);
  t.set_weight_decay(0);
  t.set_base_seed(0);
  t.set_seed_policy(SEED_FROM_STEP);
  t.set_num_label_words(2);
  return t;
}

absl::StatusOr<Schedule> LowerSchedule(const ModelSpec& model,
                                       const Cluster& cluster,
                                       const LowerOptions& options) {
  Schedule schedule;
  TrainingSettings& t = *schedule.mutable_training();
  t = options.training;
  const int dp = options.strategy == DISTZO2 ? options.dp : 1;
  if (t.micro_batch_size() == 0 && dp > 0) t.set_micro_batch_size(t.batch_size() / dp);
  RETURN_IF_ERROR(CheckOptions(model, options, t));
  ASSIGN_OR_RETURN(std::vector<const Device*> devices, SelectDevices(cluster, options));
  ASSIGN_OR_RETURN(DType compute, ChooseComputeDType(model, t.compute_dtype(), devices));
  t.set_compute_dtype(compute);
  if (t.host_dtype() == DTYPE_UNSPECIFIED) t.set_host_dtype(model.weight_dtype());
  if (t.wire_dtype() == DTYPE_UNSPECIFIED) t.set_wire_dtype(t.host_dtype());

  *schedule.mutable_cluster() = cluster;
  *schedule.mutable_model() = model;
  Strategy& s = *schedule.mutable_strategy();
  s.set_kind(options.strategy);
  s.set_pertp(options.strategy == DISTZO2 ? options.pertp : 1);
  s.set_dp(dp);
  s.set_slicing(options.strategy == DISTZO2 && options.slicing);
  s.set_block_slots(options.strategy == MEZO ? 0 : options.block_slots);
  schedule.set_name(absl::StrCat(
      model.name(), " ", absl::AsciiStrToLower(StrategyKind_Name(options.strategy)),
      options.strategy == DISTZO2
          ? absl::StrFormat(" P%dxD%d %s", s.pertp(), s.dp(),
                            s.slicing() ? "sliced" : "naive")
          : "",
      " on ", cluster.name()));

  Lowering lowering(model, cluster, options, &schedule);
  RETURN_IF_ERROR(lowering.Run(devices));
  RETURN_IF_ERROR(ValidateSchedule(schedule));
  return schedule;
}

}  // namespace zosched
