#include "schedule/lowering.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "models/accounting.h"
#include "models/adapters.h"
#include "models/model_spec.h"
#include "schedule/compute_op_model.h"
#include "schedule/device_plan.h"
#include "schedule/first_order_lowering.h"
#include "schedule/first_order_model.h"
#include "schedule/memory_plan.h"
#include "schedule/schedule_builder.h"
#include "schedule/validate.h"

namespace zosched {
namespace {

// Stream names of every lowered schedule.
constexpr char kCompute[] = "compute";
constexpr char kH2d[] = "h2d";
constexpr char kD2h[] = "d2h";
constexpr char kCollective[] = "collective";

// "+" or "-", and the direction after it when it is not 0: "+", "-2".
std::string PathSuffix(const PerturbationPath& path) {
  return absl::StrCat(path.sign == PLUS ? "+" : "-",
                      path.direction > 0 ? absl::StrCat(path.direction) : "");
}

// Emits the ops and edges of every device, given its plan and buffers.
class OpLowering {
 public:
  OpLowering(const ModelSpec& model, const Cluster& cluster, const ResolvedLowerOptions& resolved,
             std::vector<DevicePlan> plans, std::vector<DeviceBuffers> buffers,
             ScheduleBuilder* builder)
      : model_(model),
        counts_(CountModel(model, resolved.options.training.peft())),
        cluster_(cluster),
        options_(resolved.options),
        training_(resolved.options.training),
        plans_(std::move(plans)),
        buffers_(std::move(buffers)),
        builder_(builder),
        block_elements_(counts_.block_params),
        cb_(DTypeBytes(training_.compute_dtype())),
        offloaded_(options_.strategy != MEZO),
        adapters_(counts_.adapter_params > 0),
        slots_(offloaded_ ? options_.block_slots : 0),
        slot_users_(plans_.size(), std::vector<std::vector<const Op*>>(model.num_layers())),
        last_loss_op_(plans_.size(), nullptr) {}

  void Run() {
    for (const DevicePlan& plan : plans_) LowerDevice(plan);
    LowerLossesAndGradient();
  }

 private:
  void LowerDevice(const DevicePlan& plan);
  // The ops of one offloaded block on `plan`'s device; returns the op after
  // which the block's forwards may run (the update or the all-gather).
  const Op* StreamInBlock(const DevicePlan& plan, int block);
  void ForwardBlock(const DevicePlan& plan, int block, const Op* ready);
  void LowerHeadLosses(const DevicePlan& plan);
  void LowerLossesAndGradient();

  // A compute op on `plan`'s device along `path` (forwards only); its cost
  // is filled by Finish.
  Op* AddCompute(const DevicePlan& plan, std::string name, ComputeKind kind,
                 const PerturbationPath* path = nullptr);
  // Fills the op's cost from its kind and operands (compute_op_model.h).
  void Finish(Op* op) const;
  Op* AddUpdate(const DevicePlan& plan, std::string name, const ParamRange& params);
  Op* AddCast(const DevicePlan& plan, std::string name, CastDirection direction,
              const ParamRange& params, const ByteRange& wire);
  // A forward over micro-batch `m` of path `p` (an index into plan.paths)
  // on `plan`'s device, its examples set, named `name` (with " mb m" when
  // the device runs several micro-batches).
  Op* AddForward(const DevicePlan& plan, const std::string& name, ComputeKind kind, int p, int m);
  // The range of micro-batch `m` of path `p` in `plan`'s activations.
  ByteRange MicroBatchActivations(const DevicePlan& plan, int p, int m) const;
  ByteRange PerturbedFor(const DevicePlan& plan, ComputeKind kind) const;
  ByteRange WorkspaceFor(const DevicePlan& plan, ComputeKind kind) const;
  ParamRange ResidentPart(const DevicePlan& plan, Part part) const;
  // The offload of the updated `slice` of `block` (cast to the wire dtype
  // first when it differs), after `update`.
  void Offload(const DevicePlan& plan, int block, const ParamRange& slice,
               const ByteRange& landing_range, const ByteRange& host_range, const Op* update);
  // The ADAPTER_PART of `block` in `plan`'s device's adapters buffer.
  ParamRange Adapters(const DevicePlan& plan, int block) const;
  // Where every loss of the step lands: (device, path index, micro-batch) ->
  // element offset in the losses buffer; the same layout on every device.
  int64_t LossOffset(const DevicePlan& plan, int path_index, int m) const;
  LinkClass PeerLinkClass() const {
    return cluster_.peer_domains().empty() ? PCIE : cluster_.peer_domains(0).link_class();
  }

  const ModelSpec& model_;
  const ModelCounts counts_;  // CountModel(model_, training_.peft())
  const Cluster& cluster_;
  const LowerOptions& options_;
  const TrainingSettings& training_;
  const std::vector<DevicePlan> plans_;
  const std::vector<DeviceBuffers> buffers_;
  ScheduleBuilder* builder_;
  const int64_t block_elements_;
  const int64_t cb_;  // bytes per compute-dtype element
  const bool offloaded_;  // ZO2 / DISTZO2: blocks stream from the host
  // LoRA: only the adapters (resident) are perturbed and updated; the base
  // is frozen, so blocks are uploaded and never offloaded.
  const bool adapters_;
  const int slots_;
  // Per device, per block: the ops that must finish before the block's slot
  // may be refilled (its last forward and its offload).
  std::vector<std::vector<std::vector<const Op*>>> slot_users_;
  // Per device: the compute op that ends its head-and-loss phase.
  std::vector<const Op*> last_loss_op_;
};

Op* OpLowering::AddCompute(const DevicePlan& plan, std::string name, ComputeKind kind,
                           const PerturbationPath* path) {
  Op* op = builder_->AddOp(plan.id, kCompute, std::move(name));
  ComputeOp* c = op->mutable_compute();
  c->set_kind(kind);
  c->set_sign(path != nullptr ? path->sign : SIGN_UNSPECIFIED);
  if (path != nullptr) c->set_direction(path->direction);
  if (IsZoForward(kind)) c->set_seq_len(training_.seq_len());
  return op;
}

void OpLowering::Finish(Op* op) const {
  const ComputeCost cost = ComputeOpCost(model_, counts_, training_, op->compute());
  op->mutable_compute()->set_flops(cost.flops);
  op->mutable_compute()->set_bytes_accessed(cost.bytes_accessed);
}

Op* OpLowering::AddUpdate(const DevicePlan& plan, std::string name, const ParamRange& params) {
  Op* op = AddCompute(plan, std::move(name), UPDATE);
  ComputeOp* c = op->mutable_compute();
  const ByteRange zo_state = Range(buffers_[plan.id].zo_state, 0, ZoStateBytes(training_));
  Set(params, c->mutable_params());
  Set(zo_state, c->mutable_zo_state());
  ScheduleBuilder::Reads(op, zo_state);
  ScheduleBuilder::Reads(op, params.range);
  ScheduleBuilder::Writes(op, params.range);
  Finish(op);
  return op;
}

Op* OpLowering::AddCast(const DevicePlan& plan, std::string name, CastDirection direction,
                        const ParamRange& params, const ByteRange& wire) {
  Op* op = AddCompute(plan, std::move(name), CAST);
  ComputeOp* c = op->mutable_compute();
  c->set_cast_direction(direction);
  Set(params, c->mutable_params());
  Set(wire, c->mutable_wire());
  const bool widen = direction == WIRE_TO_COMPUTE;
  ScheduleBuilder::Reads(op, widen ? wire : params.range);
  ScheduleBuilder::Writes(op, widen ? params.range : wire);
  Finish(op);
  return op;
}

Op* OpLowering::AddForward(const DevicePlan& plan, const std::string& name, ComputeKind kind,
                           int p, int m) {
  const int64_t mb = training_.micro_batch_size();
  Op* op = AddCompute(plan, plan.micro_batches(mb) == 1 ? name : absl::StrCat(name, " mb ", m),
                      kind, &plan.paths[p]);
  ComputeOp* c = op->mutable_compute();
  c->set_first_example(plan.first_example + m * mb);
  c->set_examples(mb);
  return op;
}

ByteRange OpLowering::MicroBatchActivations(const DevicePlan& plan, int p, int m) const {
  const int64_t bytes = MicroBatchActivationBytes(model_, training_);
  return Range(buffers_[plan.id].activations.at(p), m * bytes, bytes);
}

ByteRange OpLowering::PerturbedFor(const DevicePlan& plan, ComputeKind kind) const {
  return Range(buffers_[plan.id].perturbed, 0, PerturbedBytes(model_, counts_, training_, kind));
}

ByteRange OpLowering::WorkspaceFor(const DevicePlan& plan, ComputeKind kind) const {
  return Range(buffers_[plan.id].workspace, 0, WorkspaceBytes(model_, training_, kind));
}

ParamRange OpLowering::ResidentPart(const DevicePlan& plan, Part part) const {
  const int64_t embedding = PartElements(counts_, EMBEDDING_PART);
  const int64_t elements = PartElements(counts_, part);
  const int64_t offset = part == EMBEDDING_PART ? 0 : embedding * cb_;
  return Params(part, 0, 0, elements, Range(buffers_[plan.id].resident, offset, elements * cb_));
}

ParamRange OpLowering::Adapters(const DevicePlan& plan, int block) const {
  const int64_t n = counts_.adapter_params;
  return Params(ADAPTER_PART, block, 0, n, Range(buffers_[plan.id].adapters, block * n * cb_, n * cb_));
}

int64_t OpLowering::LossOffset(const DevicePlan& plan, int path_index, int m) const {
  const int64_t chunk = plan.examples * plan.paths.size();  // this device's losses
  return plan.id * chunk + path_index * plan.examples + m * training_.micro_batch_size();
}

const Op* OpLowering::StreamInBlock(const DevicePlan& plan, int block) {
  const DeviceBuffers& buffers = buffers_[plan.id];
  const int k = block % slots_;
  const std::string b = absl::StrCat(" block ", block);
  const int64_t first = plan.slice_first, count = plan.slice_count;
  const int64_t wb = DTypeBytes(training_.wire_dtype());
  const int64_t hb = DTypeBytes(training_.host_dtype());
  const bool casts = !buffers.wire.empty();
  const std::string& landing = casts ? buffers.wire[k] : buffers.slots[k];
  const LinkClass link = plan.device->host_link().link_class();
  const ByteRange host_range =
      Range(buffers.host_params, (block * block_elements_ + first) * hb, count * hb);
  const ByteRange landing_range = Range(landing, first * wb, count * wb);
  const ParamRange slice =
      Params(DECODER_BLOCK, block, first, count, Range(buffers.slots[k], first * cb_, count * cb_));

  Op* h2d = builder_->AddOp(plan.id, kH2d, absl::StrCat("h2d", b));
  CopyOp* up = h2d->mutable_copy();
  up->set_direction(HOST_TO_DEVICE);
  Set(host_range, up->mutable_src());
  Set(landing_range, up->mutable_dst());
  up->set_bytes(count * wb);
  up->set_link_class(link);
  up->set_src_dtype(training_.host_dtype());
  up->set_dst_dtype(training_.wire_dtype());
  ScheduleBuilder::Reads(h2d, host_range);
  ScheduleBuilder::Writes(h2d, landing_range);
  if (block >= slots_) {
    for (const Op* user : slot_users_[plan.id][block - slots_]) builder_->AddEdge(user, h2d);
  }

  const Op* before_update = h2d;
  if (casts) {
    Op* cast = AddCast(plan, absl::StrCat("cast-in", b), WIRE_TO_COMPUTE, slice, landing_range);
    builder_->AddEdge(h2d, cast);
    before_update = cast;
  }
  // Frozen under LoRA: the slice is ready once it has landed (and widened).
  const Op* update = adapters_ ? before_update : AddUpdate(plan, absl::StrCat("update", b), slice);
  if (!adapters_) builder_->AddEdge(before_update, update);
  if (!adapters_) Offload(plan, block, slice, landing_range, host_range, update);
  if (plan.group.size() == 1) return update;
  // All-gather the block among the devices of this host, in place: each
  // device sends its chunk of the slot and receives the others'.
  const int64_t chunk = plan.slice_chunk;
  const int64_t n = plan.group.size();
  Op* gather = builder_->AddOp(plan.id, kCollective, absl::StrCat("all-gather", b));
  CollectiveOp* c = gather->mutable_collective();
  c->set_kind(ALL_GATHER);
  c->set_key(absl::StrCat("all-gather block ", block, " on ", plan.device->host()));
  c->mutable_participants()->Reserve(n);
  for (int id : plan.group) c->add_participants(id);
  c->set_bytes(chunk * n * cb_);
  Set(Range(buffers.slots[k], plan.rank * chunk * cb_, chunk * cb_), c->mutable_send());
  Set(Range(buffers.slots[k], 0, chunk * n * cb_), c->mutable_recv());
  c->set_link_class(PeerLinkClass());
  // Reads and writes list the bytes that matter: the padding after the last
  // element travels but nobody reads it.
  ScheduleBuilder::Reads(gather, slice.range);
  for (int r = 0; r < n; ++r) {
    if (r == plan.rank) continue;
    const int64_t from = std::min(block_elements_, r * chunk);
    const int64_t to = std::min(block_elements_, (r + 1) * chunk);
    if (to > from) {
      ScheduleBuilder::Writes(gather, Range(buffers.slots[k], from * cb_, (to - from) * cb_));
    }
  }
  builder_->AddEdge(update, gather);
  return gather;
}

void OpLowering::Offload(const DevicePlan& plan, int block, const ParamRange& slice,
                         const ByteRange& landing_range, const ByteRange& host_range,
                         const Op* update) {
  const std::string b = absl::StrCat(" block ", block);
  const int64_t wb = DTypeBytes(training_.wire_dtype());
  const Op* before_offload = update;
  if (!buffers_[plan.id].wire.empty()) {
    before_offload =
        AddCast(plan, absl::StrCat("cast-out", b), COMPUTE_TO_WIRE, slice, landing_range);
  }
  Op* d2h = builder_->AddOp(plan.id, kD2h, absl::StrCat("d2h", b));
  CopyOp* down = d2h->mutable_copy();
  down->set_direction(DEVICE_TO_HOST);
  Set(landing_range, down->mutable_src());
  Set(host_range, down->mutable_dst());
  down->set_bytes(plan.slice_count * wb);
  down->set_link_class(plan.device->host_link().link_class());
  down->set_src_dtype(training_.wire_dtype());
  down->set_dst_dtype(training_.host_dtype());
  ScheduleBuilder::Reads(d2h, landing_range);
  ScheduleBuilder::Writes(d2h, host_range);
  builder_->AddEdge(before_offload, d2h);
  slot_users_[plan.id][block].push_back(d2h);
}

void OpLowering::ForwardBlock(const DevicePlan& plan, int block, const Op* ready) {
  const DeviceBuffers& buffers = buffers_[plan.id];
  const ByteRange weights =
      offloaded_ ? Range(buffers.slots[block % slots_], 0, block_elements_ * cb_)
                 : Range(buffers.blocks, block * block_elements_ * cb_, block_elements_ * cb_);
  const ParamRange params = Params(DECODER_BLOCK, block, 0, block_elements_, weights);
  const ByteRange workspace = WorkspaceFor(plan, BLOCK_FORWARD);
  const ByteRange perturbed = PerturbedFor(plan, BLOCK_FORWARD);
  // Under LoRA the block's adapters take the pending update right before
  // its forwards (every device keeps and updates its own copy, identically).
  ParamRange adapters;
  if (adapters_) {
    adapters = Adapters(plan, block);
    AddUpdate(plan, absl::StrCat("update adapters block ", block), adapters);
  }
  const Op* last = nullptr;
  for (size_t p = 0; p < plan.paths.size(); ++p) {
    const std::string name = absl::StrCat("fwd", PathSuffix(plan.paths[p]), " block ", block);
    for (int m = 0; m < plan.micro_batches(training_.micro_batch_size()); ++m) {
      Op* fwd = AddForward(plan, name, BLOCK_FORWARD, p, m);
      ComputeOp* c = fwd->mutable_compute();
      const ByteRange activations = MicroBatchActivations(plan, p, m);
      Set(params, c->mutable_params());
      Set(activations, c->mutable_activations());
      Set(workspace, c->mutable_workspace());
      Set(perturbed, c->mutable_perturbed());
      if (adapters_) {
        Set(adapters, c->mutable_adapters());
        ScheduleBuilder::Reads(fwd, adapters.range);
      }
      ScheduleBuilder::Reads(fwd, weights);
      ScheduleBuilder::Reads(fwd, activations);
      ScheduleBuilder::Writes(fwd, activations);
      ScheduleBuilder::Writes(fwd, workspace);
      ScheduleBuilder::Writes(fwd, perturbed);
      Finish(fwd);
      builder_->AddEdge(ready, fwd);
      last = fwd;
    }
  }
  if (offloaded_) slot_users_[plan.id][block].push_back(last);
}

void OpLowering::LowerDevice(const DevicePlan& plan) {
  const ParamRange embedding = ResidentPart(plan, EMBEDDING_PART);
  if (!adapters_) AddUpdate(plan, "update embedding", embedding);
  const ByteRange workspace = WorkspaceFor(plan, EMBED);
  const ByteRange perturbed = PerturbedFor(plan, EMBED);
  for (size_t p = 0; p < plan.paths.size(); ++p) {
    for (int m = 0; m < plan.micro_batches(training_.micro_batch_size()); ++m) {
      Op* embed = AddForward(plan, absl::StrCat("embed", PathSuffix(plan.paths[p])), EMBED, p, m);
      ComputeOp* c = embed->mutable_compute();
      const ByteRange activations = MicroBatchActivations(plan, p, m);
      Set(embedding, c->mutable_params());
      Set(activations, c->mutable_activations());
      Set(workspace, c->mutable_workspace());
      ScheduleBuilder::Reads(embed, embedding.range);
      ScheduleBuilder::Writes(embed, workspace);
      if (perturbed.size_bytes > 0) {  // none for a rotary model without project_in
        Set(perturbed, c->mutable_perturbed());
        ScheduleBuilder::Writes(embed, perturbed);
      }
      ScheduleBuilder::Writes(embed, activations);
      Finish(embed);
    }
  }

  const int layers = model_.num_layers();
  if (!offloaded_) {
    const std::string& blocks = buffers_[plan.id].blocks;
    for (int b = 0; b < layers; ++b) {
      if (!adapters_) {
        AddUpdate(plan, absl::StrCat("update block ", b),
                  Params(DECODER_BLOCK, b, 0, block_elements_,
                         Range(blocks, b * block_elements_ * cb_, block_elements_ * cb_)));
      }
      ForwardBlock(plan, b, nullptr);
    }
  } else if (plan.group.size() > 1 && slots_ >= 2) {
    // Sliced: update (and all-gather) block b+1 before forwarding block b.
    const Op* ready = StreamInBlock(plan, 0);
    for (int b = 0; b < layers; ++b) {
      const Op* next = b + 1 < layers ? StreamInBlock(plan, b + 1) : nullptr;
      ForwardBlock(plan, b, ready);
      ready = next;
    }
  } else {
    for (int b = 0; b < layers; ++b) ForwardBlock(plan, b, StreamInBlock(plan, b));
  }
  LowerHeadLosses(plan);
}

void OpLowering::LowerHeadLosses(const DevicePlan& plan) {
  const int64_t mb = training_.micro_batch_size();
  const ParamRange head = ResidentPart(plan, HEAD_PART);
  if (!adapters_) AddUpdate(plan, "update head", head);
  ParamRange lm_head;
  if (model_.tied_lm_head()) {
    const ParamRange embedding = ResidentPart(plan, EMBEDDING_PART);
    const int64_t table = TokenTableElements(model_);
    lm_head = Params(EMBEDDING_PART, 0, 0, table,
                     Range(*embedding.range.buffer, embedding.range.offset_bytes, table * cb_));
  }
  const ByteRange perturbed = PerturbedFor(plan, HEAD_LOSS);
  const ByteRange workspace = WorkspaceFor(plan, HEAD_LOSS);
  const Op* last = nullptr;
  for (size_t p = 0; p < plan.paths.size(); ++p) {
    for (int m = 0; m < plan.micro_batches(mb); ++m) {
      Op* loss = AddForward(plan, absl::StrCat("head", PathSuffix(plan.paths[p]), " loss"),
                            HEAD_LOSS, p, m);
      ComputeOp* c = loss->mutable_compute();
      const ByteRange activations = MicroBatchActivations(plan, p, m);
      const ByteRange losses =
          Range(buffers_[plan.id].losses, LossOffset(plan, p, m) * kLossBytes, mb * kLossBytes);
      Set(head, c->mutable_params());
      if (model_.tied_lm_head()) Set(lm_head, c->mutable_lm_head());
      Set(activations, c->mutable_activations());
      Set(perturbed, c->mutable_perturbed());
      Set(workspace, c->mutable_workspace());
      Set(losses, c->mutable_losses());
      ScheduleBuilder::Reads(loss, activations);
      ScheduleBuilder::Reads(loss, head.range);
      if (model_.tied_lm_head()) ScheduleBuilder::Reads(loss, lm_head.range);
      ScheduleBuilder::Writes(loss, perturbed);
      ScheduleBuilder::Writes(loss, workspace);
      ScheduleBuilder::Writes(loss, losses);
      Finish(loss);
      last = loss;
    }
  }
  last_loss_op_[plan.id] = last;
}

void OpLowering::LowerLossesAndGradient() {
  const int64_t chunk = plans_[0].examples * plans_[0].paths.size();
  const int64_t all = chunk * plans_.size();
  for (const DevicePlan& plan : plans_) {
    const std::string& losses = buffers_[plan.id].losses;
    const Op* ready = last_loss_op_[plan.id];
    if (plans_.size() > 1) {
      Op* gather = builder_->AddOp(plan.id, kCollective, "all-gather losses");
      CollectiveOp* c = gather->mutable_collective();
      c->set_kind(ALL_GATHER);
      c->set_key("all-gather losses");
      c->mutable_participants()->Reserve(plans_.size());
      for (const DevicePlan& p : plans_) c->add_participants(p.id);
      c->set_bytes(all * kLossBytes);
      const ByteRange send = Range(losses, plan.id * chunk * kLossBytes, chunk * kLossBytes);
      Set(send, c->mutable_send());
      Set(Range(losses, 0, all * kLossBytes), c->mutable_recv());
      c->set_link_class(PeerLinkClass());
      ScheduleBuilder::Reads(gather, send);
      for (const DevicePlan& p : plans_) {
        if (p.id == plan.id) continue;
        ScheduleBuilder::Writes(gather,
                                Range(losses, p.id * chunk * kLossBytes, chunk * kLossBytes));
      }
      builder_->AddEdge(ready, gather);
      ready = gather;
    }
    Op* grad = AddCompute(plan, "projected gradient", PROJECTED_GRADIENT);
    ComputeOp* c = grad->mutable_compute();
    c->set_examples(training_.batch_size());
    const ByteRange all_losses = Range(losses, 0, all * kLossBytes);
    const ByteRange zo_state = Range(buffers_[plan.id].zo_state, 0, ZoStateBytes(training_));
    Set(all_losses, c->mutable_losses());
    Set(zo_state, c->mutable_zo_state());
    ScheduleBuilder::Reads(grad, all_losses);
    ScheduleBuilder::Writes(grad, zo_state);
    Finish(grad);
    builder_->AddEdge(ready, grad);
  }
}

std::string ScheduleName(const ModelSpec& model, const Cluster& cluster, const Strategy& s,
                         const TrainingSettings& training) {
  std::string knobs;
  if (s.kind() == DISTZO2) {
    knobs = absl::StrFormat(" P%dxD%d %s", s.pertp(), s.dp(), s.slicing() ? "sliced" : "naive");
  } else if (IsFirstOrder(s.kind())) {
    knobs = absl::StrFormat(" x%d %s%s", s.dp(), s.precision() == BF16_FP32_GRADS ? "bf16" : "amp",
                            s.recompute() ? " recompute" : "");
  }
  if (const int q = DirectionsOf(training); q > 1) absl::StrAppend(&knobs, " q", q);
  if (TrainsAdapters(training.peft())) absl::StrAppend(&knobs, " ", PeftLabel(training.peft()));
  return absl::StrCat(model.name(), " ", absl::AsciiStrToLower(StrategyKind_Name(s.kind())), knobs,
                      " on ", cluster.name());
}

}  // namespace

absl::StatusOr<Schedule> LowerSchedule(const ModelSpec& model, const Cluster& cluster,
                                       const LowerOptions& options) {
  Schedule schedule;
  RETURN_IF_ERROR(LowerScheduleInto(model, cluster, options, &schedule));
  return schedule;
}

absl::Status LowerScheduleInto(const ModelSpec& model, const Cluster& cluster,
                               const LowerOptions& options, Schedule* out) {
  ASSIGN_OR_RETURN(const ResolvedLowerOptions resolved,
                   ResolveLowerOptions(model, cluster, options));
  const LowerOptions& o = resolved.options;
  Schedule& schedule = *out;
  *schedule.mutable_training() = o.training;
  *schedule.mutable_cluster() = cluster;
  *schedule.mutable_model() = model;
  Strategy& s = *schedule.mutable_strategy();
  s.set_kind(o.strategy);
  const bool first_order = IsFirstOrder(o.strategy);
  s.set_pertp(o.strategy == DISTZO2 ? o.pertp : 1);
  s.set_dp(o.strategy == DISTZO2 || first_order ? o.dp : 1);
  s.set_slicing(o.strategy == DISTZO2 && o.slicing);
  s.set_block_slots(o.strategy == MEZO || first_order ? 0 : o.block_slots);
  if (first_order) {
    s.set_precision(o.precision);
    if (o.strategy == DDP) s.set_bucket_bytes(o.bucket_bytes);
    s.set_recompute(o.recompute);
    s.set_flash_attention(o.flash_attention);
  }
  schedule.set_name(ScheduleName(model, cluster, s, o.training));
  if (first_order) {
    LowerFirstOrder(model, resolved, &schedule);
    return ValidateSchedule(schedule);
  }

  std::vector<DevicePlan> plans = PlanDevices(resolved, BlockParams(model));
  const bool offloaded = o.strategy != MEZO;
  for (const DevicePlan& plan : plans) {
    ScheduleDevice* d = schedule.add_devices();
    d->set_id(plan.id);
    d->set_cluster_device(plan.device->name());
    auto add_stream = [d](const char* name, StreamKind kind) {
      Stream* stream = d->add_streams();
      stream->set_name(name);
      stream->set_kind(kind);
    };
    add_stream(kCompute, COMPUTE);
    if (offloaded) add_stream(kH2d, H2D);
    if (offloaded && !TrainsAdapters(o.training.peft())) add_stream(kD2h, D2H);
    if (plans.size() > 1) add_stream(kCollective, COLLECTIVE);
  }
  ScheduleBuilder builder(&schedule);
  std::vector<DeviceBuffers> buffers = PlanMemory(model, resolved, plans, &builder);
  OpLowering(model, cluster, resolved, std::move(plans), std::move(buffers), &builder).Run();
  return ValidateSchedule(schedule);
}

}  // namespace zosched
