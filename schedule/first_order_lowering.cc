#include "schedule/first_order_lowering.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "schedule/compute_op_model.h"
#include "schedule/first_order_model.h"
#include "schedule/schedule_builder.h"

namespace zosched {
namespace {

constexpr char kCompute[] = "compute";
constexpr char kCollective[] = "collective";
constexpr char kGather[] = "gather";
constexpr int64_t kGradBytes = 4;  // FP32 gradients

// A device's buffers; device r's is named "d<r>/" + its kBufferNames entry.
enum DeviceBuffer {
  kParams,
  kGradients,
  kOptimizer,
  kMaster,
  kAct,
  kSaved,
  kRecompute,
  kBucket,
  kGathered0,
  kGathered1,
  kGatheredEmbedding,
  kGatheredHead,
  kDeviceBuffers,
};
constexpr const char* kBufferNames[kDeviceBuffers] = {
    "params",    "gradients", "optimizer", "master",    "act",                "saved",
    "recompute", "bucket",    "gathered0", "gathered1", "gathered-embedding", "gathered-head",
};

// One sharding unit: the embedding part, a decoder block or the head part.
struct Unit {
  Part part;
  int block;
  int64_t elements;
  int64_t chunk;     // each device's share, ⌈elements / n⌉
  int64_t padded;    // chunk · n
  int64_t full_at;   // element offset in the unsharded (padded) layout
  int64_t shard_at;  // element offset in a device's shard layout
  std::string Name() const {
    return part == DECODER_BLOCK    ? absl::StrCat("block ", block)
           : part == EMBEDDING_PART ? "embedding"
                                    : "head";
  }
};

class FirstOrderLowering {
 public:
  FirstOrderLowering(const ModelSpec& model, const ResolvedLowerOptions& resolved,
                     Schedule* schedule)
      : model_(model),
        counts_(CountModel(model)),
        devices_(resolved.devices),
        o_(resolved.options),
        t_(resolved.options.training),
        kind_(resolved.options.strategy),
        n_(resolved.options.dp),
        layers_(model.num_layers()),
        p_(DTypeBytes(t_.host_dtype())),
        c_(DTypeBytes(t_.compute_dtype())),
        share_(t_.batch_size() / n_),
        micro_batches_(share_ / t_.micro_batch_size()),
        block_saved_(BlockSavedBytes(model, t_.micro_batch_size(), t_.seq_len(), o_.flash_attention,
                                     o_.recompute)),
        schedule_(schedule),
        builder_(schedule),
        link_(schedule->cluster().peer_domains().empty()
                  ? PCIE
                  : schedule->cluster().peer_domains(0).link_class()) {
    auto add = [&](Part part, int block) {
      Unit u{part, block, PartElements(counts_, part), 0, 0, 0, 0};
      u.chunk = ShardElements(u.elements, n_);
      u.padded = u.chunk * n_;
      if (!units_.empty()) {
        u.full_at = units_.back().full_at + units_.back().padded;
        u.shard_at = units_.back().shard_at + units_.back().chunk;
      }
      units_.push_back(u);
    };
    add(EMBEDDING_PART, 0);
    for (int b = 0; b < layers_; ++b) add(DECODER_BLOCK, b);
    add(HEAD_PART, 0);
    buffer_names_.reserve(n_ * kDeviceBuffers);
    for (int r = 0; r < n_; ++r) {
      for (const char* name : kBufferNames)
        buffer_names_.push_back(absl::StrCat("d", r, "/", name));
    }
  }

  void Run() {
    for (int r = 0; r < n_; ++r) {
      AddDevice(r);
      PlanMemory(r);
    }
    for (int r = 0; r < n_; ++r) LowerDevice(r);
  }

 private:
  // Unit indices: 0 the embedding, 1 + b block b, layers_ + 1 the head.
  int EmbeddingUnit() const { return 0; }
  int BlockUnit(int b) const { return 1 + b; }
  int HeadUnit() const { return layers_ + 1; }
  // The units in the order the backward produces their gradients.
  std::vector<size_t> BackwardOrder() const {
    std::vector<size_t> order = {static_cast<size_t>(HeadUnit())};
    for (int b = layers_ - 1; b >= 0; --b) order.push_back(BlockUnit(b));
    order.push_back(EmbeddingUnit());
    return order;
  }
  int64_t FullElements() const { return units_.back().full_at + units_.back().padded; }
  int64_t ShardTotal() const { return units_.back().shard_at + units_.back().chunk; }
  // Device r's elements of unit u: [first, first + count).
  int64_t OwnedFirst(const Unit& u, int r) const { return std::min(u.elements, r * u.chunk); }
  int64_t OwnedCount(const Unit& u, int r) const {
    return std::min(u.elements, (r + 1) * u.chunk) - OwnedFirst(u, r);
  }
  int64_t OwnedAt(size_t unit, int r) const;  // element offset in optimizer/master
  const std::string& Buf(int r, DeviceBuffer b) const {
    return buffer_names_[r * kDeviceBuffers + b];
  }
  std::string MicroBatchName(const std::string& name, int m) const {
    return micro_batches_ == 1 ? name : absl::StrCat(name, " mb ", m);
  }
  // Gradients sharded (ZERO_2/3 over several devices): backwards write
  // their unit's whole gradient into the bucket, reduce-scattered from there.
  bool Sharded() const { return n_ > 1 && ShardsGradients(kind_); }
  bool GathersBlocks() const { return n_ > 1 && ShardsParams(kind_); }

  void AddDevice(int r);
  void PlanMemory(int r);
  void LowerDevice(int r);
  void Forward(int r, int m);
  void Backward(int r, int m);
  // DDP: the gradient all-reduces, in buckets of consecutive units in
  // backward order (head, blocks L-1..0, embedding) closed once they reach
  // bucket_bytes, each after the last micro-batch's backward produced it.
  void AllReduceBuckets(int r);
  void OptimizerSteps(int r);

  // Where compute reads unit u's parameters (for ZERO_3 blocks: gather g's slot).
  ParamRange ComputeParams(int r, size_t unit, int gather) const;
  // Where the backward writes unit u's gradient (the whole unit).
  ByteRange GradientOut(int r, size_t unit) const;
  // Under recompute: where a block's forward and its recomputing backward
  // compute its intermediates transiently.
  ByteRange RecomputeWorkspace(int r) const;
  // The bucket region (ZERO_2/3) of unit u's full gradient; "" key when none.
  std::string RegionKey(size_t unit) const;
  ByteRange OwnedGradient(int r, size_t unit) const;
  Op* AddCompute(int r, std::string name, ComputeKind kind, int m);
  Op* AddCollective(int r, const char* stream, std::string name, CollectiveKind kind,
                    const std::string& key, const ByteRange& send, const ByteRange& recv);
  void Finish(Op* op) const;
  // ZERO_3: the all-gather of block b into slot g % 2, after the slot's last user.
  const Op* GatherBlock(int r, int b, int g, const std::string& why);
  // After a backward produced unit u's gradient on micro-batch m: its reduction.
  void ReduceUnit(int r, size_t unit, int m, const Op* producer);
  void FlushAccumulates(int r, size_t keep);

  const ModelSpec& model_;
  const ModelCounts counts_;  // CountModel(model_)
  const std::vector<const Device*>& devices_;
  const LowerOptions& o_;
  const TrainingSettings& t_;
  const StrategyKind kind_;
  const int n_, layers_;
  const int64_t p_, c_;
  const int share_, micro_batches_;
  const int64_t block_saved_;
  Schedule* schedule_;
  ScheduleBuilder builder_;
  std::vector<Unit> units_;
  std::vector<std::string> buffer_names_;  // Buf
  const LinkClass link_;  // of the collectives: the peer domain's, else PCIe

  // Per-device state while lowering it.
  std::map<size_t, const Op*> params_ready_;      // unit -> the op that gathered it
  std::map<size_t, const Op*> reduced_;           // unit -> its last reduction
  std::map<std::string, const Op*> region_free_;  // bucket region -> last reader
  std::vector<std::pair<size_t, const Op*>> pending_accumulates_;
  std::vector<const Op*> slot_user_;  // ZERO_3: per slot, the compute that read it
  int gather_count_ = 0;
};

int64_t FirstOrderLowering::OwnedAt(size_t unit, int r) const {
  int64_t at = 0;
  for (size_t u = 0; u < unit; ++u) {
    at += ShardsOptimizer(kind_) && n_ > 1 ? OwnedCount(units_[u], r) : units_[u].elements;
  }
  return at;
}

void FirstOrderLowering::AddDevice(int r) {
  ScheduleDevice* d = schedule_->add_devices();
  d->set_id(r);
  d->set_cluster_device(devices_[r]->name());
  auto add_stream = [d](const char* name, StreamKind kind) {
    Stream* s = d->add_streams();
    s->set_name(name);
    s->set_kind(kind);
  };
  add_stream(kCompute, COMPUTE);
  if (n_ > 1) add_stream(kCollective, COLLECTIVE);
  if (GathersBlocks()) add_stream(kGather, COLLECTIVE);
}

void FirstOrderLowering::PlanMemory(int r) {
  const DType pd = t_.host_dtype(), cd = t_.compute_dtype();
  const bool shard_params = GathersBlocks();
  Buffer* params =
      builder_.AddBuffer(Buf(r, kParams), RESIDENT_PARAMS, r, "",
                         (shard_params ? ShardTotal() : FullElements()) * p_, pd, true);
  for (const Unit& u : units_) {
    const int64_t count = shard_params ? OwnedCount(u, r) : u.elements;
    if (count == 0) continue;
    ParamPlacement* placed = params->add_params();
    *placed = Placement(u.part, u.block, count, (shard_params ? u.shard_at : u.full_at) * p_);
    placed->set_first_element(shard_params ? OwnedFirst(u, r) : 0);
  }
  builder_.AddBuffer(Buf(r, kGradients), GRADIENTS, r, "",
                     (Sharded() ? ShardTotal() : FullElements()) * kGradBytes, FP32, false);
  const int64_t owned = OwnedAt(units_.size(), r);
  builder_.AddBuffer(Buf(r, kOptimizer), OPTIMIZER_STATE, r, "", owned * 8, FP32, true);
  if (pd != FP32)
    builder_.AddBuffer(Buf(r, kMaster), MASTER_WEIGHTS, r, "", owned * 4, FP32, true);
  const int64_t tokens = static_cast<int64_t>(t_.micro_batch_size()) * t_.seq_len();
  builder_.AddBuffer(Buf(r, kAct), ACTIVATIONS, r, "", tokens * model_.hidden_size() * c_, cd,
                     false);
  builder_.AddBuffer(
      Buf(r, kSaved), SAVED_ACTIVATIONS, r, "",
      layers_ * block_saved_ + HeadSavedBytes(model_, t_.micro_batch_size(), t_.seq_len()), cd,
      false);
  if (o_.recompute) {
    builder_.AddBuffer(
        Buf(r, kRecompute), WORKSPACE, r, "",
        BlockRecomputeBytes(model_, t_.micro_batch_size(), t_.seq_len(), o_.flash_attention), cd,
        false);
  }
  const int64_t block_padded = units_[BlockUnit(0)].padded;
  if (Sharded()) {
    // Two block slots, then the embedding's and the head's full gradients.
    builder_.AddBuffer(
        Buf(r, kBucket), COMM_BUCKET, r, "",
        (2 * block_padded + units_[EmbeddingUnit()].padded + units_[HeadUnit()].padded) *
            kGradBytes,
        FP32, false);
  }
  if (shard_params) {
    for (DeviceBuffer slot : {kGathered0, kGathered1}) {
      builder_.AddBuffer(Buf(r, slot), BLOCK_SLOT, r, "", block_padded * p_, pd, false);
    }
    builder_.AddBuffer(Buf(r, kGatheredEmbedding), BLOCK_SLOT, r, "",
                       units_[EmbeddingUnit()].padded * p_, pd, false);
    builder_.AddBuffer(Buf(r, kGatheredHead), BLOCK_SLOT, r, "", units_[HeadUnit()].padded * p_,
                       pd, false);
  }
}

ParamRange FirstOrderLowering::ComputeParams(int r, size_t unit, int gather) const {
  const Unit& u = units_[unit];
  if (!GathersBlocks()) {
    return Params(u.part, u.block, 0, u.elements,
                  Range(Buf(r, kParams), u.full_at * p_, u.elements * p_));
  }
  const std::string& slot = u.part == DECODER_BLOCK ? Buf(r, gather % 2 ? kGathered1 : kGathered0)
                            : u.part == EMBEDDING_PART ? Buf(r, kGatheredEmbedding)
                                                       : Buf(r, kGatheredHead);
  return Params(u.part, u.block, 0, u.elements, Range(slot, 0, u.elements * p_));
}

std::string FirstOrderLowering::RegionKey(size_t unit) const {
  const Unit& u = units_[unit];
  if (u.part != DECODER_BLOCK) return u.Name();
  return u.block % 2 ? "slot1" : "slot0";
}

ByteRange FirstOrderLowering::RecomputeWorkspace(int r) const {
  return Range(Buf(r, kRecompute), 0,
               BlockRecomputeBytes(model_, t_.micro_batch_size(), t_.seq_len(), o_.flash_attention));
}

ByteRange FirstOrderLowering::GradientOut(int r, size_t unit) const {
  const Unit& u = units_[unit];
  if (!Sharded())
    return Range(Buf(r, kGradients), u.full_at * kGradBytes, u.elements * kGradBytes);
  const int64_t block_padded = units_[BlockUnit(0)].padded;
  int64_t at = 0;
  if (u.part == DECODER_BLOCK) {
    at = (u.block % 2) * block_padded;
  } else {
    at = 2 * block_padded + (u.part == HEAD_PART ? units_[EmbeddingUnit()].padded : 0);
  }
  return Range(Buf(r, kBucket), at * kGradBytes, u.elements * kGradBytes);
}

ByteRange FirstOrderLowering::OwnedGradient(int r, size_t unit) const {
  const Unit& u = units_[unit];
  const int64_t count = OwnedCount(u, r);
  if (Sharded()) return Range(Buf(r, kGradients), u.shard_at * kGradBytes, count * kGradBytes);
  const int64_t first = ShardsOptimizer(kind_) ? OwnedFirst(u, r) : 0;
  return Range(Buf(r, kGradients), (u.full_at + first) * kGradBytes,
               (ShardsOptimizer(kind_) ? count : u.elements) * kGradBytes);
}

Op* FirstOrderLowering::AddCompute(int r, std::string name, ComputeKind kind, int m) {
  Op* op = builder_.AddOp(r, kCompute, std::move(name));
  ComputeOp* c = op->mutable_compute();
  c->set_kind(kind);
  if (m >= 0) {
    c->set_examples(t_.micro_batch_size());
    c->set_first_example(r * share_ + m * t_.micro_batch_size());
    c->set_seq_len(t_.seq_len());
  }
  return op;
}

void FirstOrderLowering::Finish(Op* op) const {
  const ComputeCost cost = ComputeOpCost(model_, counts_, t_, op->compute());
  op->mutable_compute()->set_flops(cost.flops);
  op->mutable_compute()->set_bytes_accessed(cost.bytes_accessed);
}

Op* FirstOrderLowering::AddCollective(int r, const char* stream, std::string name,
                                      CollectiveKind kind, const std::string& key,
                                      const ByteRange& send, const ByteRange& recv) {
  Op* op = builder_.AddOp(r, stream, std::move(name));
  CollectiveOp* c = op->mutable_collective();
  c->set_kind(kind);
  c->set_key(key);
  c->mutable_participants()->Reserve(n_);
  for (int i = 0; i < n_; ++i) c->add_participants(i);
  c->set_bytes(kind == REDUCE_SCATTER ? send.size_bytes : recv.size_bytes);
  Set(send, c->mutable_send());
  Set(recv, c->mutable_recv());
  c->set_link_class(link_);
  return op;
}

const Op* FirstOrderLowering::GatherBlock(int r, int b, int g, const std::string& why) {
  const Unit& u = units_[BlockUnit(b)];
  const ByteRange slot = ComputeParams(r, BlockUnit(b), g).range;
  Op* gather = AddCollective(r, kGather, absl::StrCat("all-gather block ", b, " ", why), ALL_GATHER,
                             absl::StrCat("all-gather block ", b, " ", why),
                             Range(Buf(r, kParams), u.shard_at * p_, u.chunk * p_),
                             Range(*slot.buffer, 0, u.padded * p_));
  ScheduleBuilder::Reads(gather, Range(Buf(r, kParams), u.shard_at * p_, OwnedCount(u, r) * p_));
  ScheduleBuilder::Writes(gather, slot);
  builder_.AddEdge(slot_user_[g % 2], gather);
  return gather;
}

void FirstOrderLowering::LowerDevice(int r) {
  params_ready_.clear();
  reduced_.clear();
  region_free_.clear();
  pending_accumulates_.clear();
  slot_user_.assign(2, nullptr);
  gather_count_ = 0;
  if (n_ > 1 && ShardsOptimizer(kind_)) {
    // ZERO_3 gathers the embedding and head once a step; ZERO_1/2 every
    // unit's updated chunks, in the order the forward needs them.
    for (size_t unit = 0; unit < units_.size(); ++unit) {
      const Unit& u = units_[unit];
      if (GathersBlocks() && u.part == DECODER_BLOCK) continue;
      const ByteRange recv = GathersBlocks()
                                 ? Range(*ComputeParams(r, unit, 0).range.buffer, 0, u.padded * p_)
                                 : Range(Buf(r, kParams), u.full_at * p_, u.padded * p_);
      const ByteRange send =
          GathersBlocks() ? Range(Buf(r, kParams), u.shard_at * p_, u.chunk * p_)
                          : Range(Buf(r, kParams), (u.full_at + r * u.chunk) * p_, u.chunk * p_);
      Op* gather =
          AddCollective(r, GathersBlocks() ? kGather : kCollective, "all-gather " + u.Name(),
                        ALL_GATHER, "all-gather " + u.Name(), send, recv);
      const int64_t own = OwnedCount(u, r);
      if (own > 0) {
        ScheduleBuilder::Reads(gather, Range(*send.buffer, send.offset_bytes, own * p_));
      }
      for (int i = 0; i < n_; ++i) {
        if (!GathersBlocks() && i == r) continue;  // in place: its own chunk is there
        const int64_t count = OwnedCount(u, i);
        if (count > 0) {
          ScheduleBuilder::Writes(
              gather, Range(*recv.buffer, recv.offset_bytes + OwnedFirst(u, i) * p_, count * p_));
        }
      }
      params_ready_[unit] = gather;
    }
  }
  for (int m = 0; m < micro_batches_; ++m) {
    Forward(r, m);
    Backward(r, m);
  }
  if (kind_ == DDP && n_ > 1) AllReduceBuckets(r);
  OptimizerSteps(r);
}

void FirstOrderLowering::Forward(int r, int m) {
  const ByteRange act =
      Range(Buf(r, kAct), 0,
            static_cast<int64_t>(t_.micro_batch_size()) * t_.seq_len() * model_.hidden_size() * c_);
  const size_t emb = EmbeddingUnit();
  const ParamRange embedding = ComputeParams(r, emb, 0);
  Op* embed = AddCompute(r, MicroBatchName("embed", m), TRAIN_EMBED, m);
  Set(embedding, embed->mutable_compute()->mutable_params());
  Set(act, embed->mutable_compute()->mutable_activations());
  ScheduleBuilder::Reads(embed, embedding.range);
  ScheduleBuilder::Writes(embed, act);
  Finish(embed);
  builder_.AddEdge(params_ready_[emb], embed);

  for (int b = 0; b < layers_; ++b) {
    const size_t unit = BlockUnit(b);
    const Op* ready = params_ready_[unit];
    const int g = gather_count_;
    if (GathersBlocks()) ready = GatherBlock(r, b, gather_count_++, MicroBatchName("fwd", m));
    Op* fwd =
        AddCompute(r, MicroBatchName(absl::StrCat("fwd block ", b), m), TRAIN_BLOCK_FORWARD, m);
    ComputeOp* c = fwd->mutable_compute();
    const ParamRange params = ComputeParams(r, unit, g);
    const ByteRange saved = Range(Buf(r, kSaved), b * block_saved_, block_saved_);
    Set(params, c->mutable_params());
    Set(act, c->mutable_activations());
    Set(saved, c->mutable_saved());
    if (o_.recompute) {
      const ByteRange workspace = RecomputeWorkspace(r);
      Set(workspace, c->mutable_workspace());
      ScheduleBuilder::Writes(fwd, workspace);
    }
    ScheduleBuilder::Reads(fwd, params.range);
    ScheduleBuilder::Reads(fwd, act);
    ScheduleBuilder::Writes(fwd, act);
    ScheduleBuilder::Writes(fwd, saved);
    Finish(fwd);
    builder_.AddEdge(ready, fwd);
    if (GathersBlocks()) slot_user_[g % 2] = fwd;
  }

  const size_t head = HeadUnit();
  Op* loss = AddCompute(r, MicroBatchName("head loss", m), TRAIN_HEAD_LOSS, m);
  ComputeOp* c = loss->mutable_compute();
  const ParamRange params = ComputeParams(r, head, 0);
  Set(params, c->mutable_params());
  if (model_.tied_lm_head()) {
    const ByteRange table = embedding.range;
    const ParamRange lm_head =
        Params(EMBEDDING_PART, 0, 0, TokenTableElements(model_),
               Range(*table.buffer, table.offset_bytes, TokenTableElements(model_) * p_));
    Set(lm_head, c->mutable_lm_head());
    ScheduleBuilder::Reads(loss, lm_head.range);
  }
  const ByteRange saved = Range(Buf(r, kSaved), layers_ * block_saved_,
                                HeadSavedBytes(model_, t_.micro_batch_size(), t_.seq_len()));
  Set(act, c->mutable_activations());
  Set(saved, c->mutable_saved());
  ScheduleBuilder::Reads(loss, params.range);
  ScheduleBuilder::Reads(loss, act);
  ScheduleBuilder::Writes(loss, saved);
  Finish(loss);
  builder_.AddEdge(params_ready_[head], loss);
}

void FirstOrderLowering::Backward(int r, int m) {
  const ByteRange act =
      Range(Buf(r, kAct), 0,
            static_cast<int64_t>(t_.micro_batch_size()) * t_.seq_len() * model_.hidden_size() * c_);
  const size_t head = HeadUnit(), emb = EmbeddingUnit();
  // Waits for the bucket region `unit` writes to be free again.
  auto claim = [&](Op* op, size_t unit) {
    if (Sharded()) builder_.AddEdge(region_free_[RegionKey(unit)], op);
  };

  Op* hb = AddCompute(r, MicroBatchName("head backward", m), HEAD_BACKWARD, m);
  {
    ComputeOp* c = hb->mutable_compute();
    const ParamRange params = ComputeParams(r, head, 0);
    const ByteRange saved = Range(Buf(r, kSaved), layers_ * block_saved_,
                                  HeadSavedBytes(model_, t_.micro_batch_size(), t_.seq_len()));
    const ByteRange gradients = GradientOut(r, head);
    Set(params, c->mutable_params());
    Set(saved, c->mutable_saved());
    Set(act, c->mutable_activations());
    Set(gradients, c->mutable_gradients());
    ScheduleBuilder::Reads(hb, params.range);
    ScheduleBuilder::Reads(hb, saved);
    ScheduleBuilder::Writes(hb, saved);
    ScheduleBuilder::Reads(hb, act);
    ScheduleBuilder::Writes(hb, act);
    ScheduleBuilder::Writes(hb, gradients);
    const bool accumulates = m > 0 && !Sharded();  // into last micro-batch's gradients
    if (accumulates) ScheduleBuilder::Reads(hb, gradients);
    claim(hb, head);
    if (model_.tied_lm_head()) {
      const ByteRange table = ComputeParams(r, emb, 0).range;
      const ParamRange lm_head =
          Params(EMBEDDING_PART, 0, 0, TokenTableElements(model_),
                 Range(*table.buffer, table.offset_bytes, TokenTableElements(model_) * p_));
      Set(lm_head, c->mutable_lm_head());
      ScheduleBuilder::Reads(hb, lm_head.range);
      // The token table's gradient: the start of the embedding's.
      const ByteRange out = GradientOut(r, emb);
      const ByteRange table_grad =
          Range(*out.buffer, out.offset_bytes, TokenTableElements(model_) * kGradBytes);
      if (accumulates) ScheduleBuilder::Reads(hb, table_grad);
      ScheduleBuilder::Writes(hb, table_grad);
      claim(hb, emb);
    }
    Finish(hb);
  }
  ReduceUnit(r, head, m, hb);

  for (int b = layers_ - 1; b >= 0; --b) {
    const size_t unit = BlockUnit(b);
    const Op* ready = params_ready_[unit];
    const int g = gather_count_;
    if (GathersBlocks()) ready = GatherBlock(r, b, gather_count_++, MicroBatchName("bwd", m));
    Op* bwd = AddCompute(r, MicroBatchName(absl::StrCat("bwd block ", b), m), BLOCK_BACKWARD, m);
    ComputeOp* c = bwd->mutable_compute();
    c->set_recompute(o_.recompute);
    const ParamRange params = ComputeParams(r, unit, g);
    const ByteRange saved = Range(Buf(r, kSaved), b * block_saved_, block_saved_);
    const ByteRange gradients = GradientOut(r, unit);
    Set(params, c->mutable_params());
    Set(saved, c->mutable_saved());
    Set(act, c->mutable_activations());
    Set(gradients, c->mutable_gradients());
    if (o_.recompute) {
      const ByteRange workspace = RecomputeWorkspace(r);
      Set(workspace, c->mutable_workspace());
      ScheduleBuilder::Writes(bwd, workspace);
    }
    ScheduleBuilder::Reads(bwd, params.range);
    ScheduleBuilder::Reads(bwd, saved);
    ScheduleBuilder::Reads(bwd, act);
    ScheduleBuilder::Writes(bwd, act);
    if (m > 0 && !Sharded()) ScheduleBuilder::Reads(bwd, gradients);
    ScheduleBuilder::Writes(bwd, gradients);
    Finish(bwd);
    builder_.AddEdge(ready, bwd);
    claim(bwd, unit);
    if (GathersBlocks()) slot_user_[g % 2] = bwd;
    FlushAccumulates(r, unit);
    ReduceUnit(r, unit, m, bwd);
  }

  Op* eb = AddCompute(r, MicroBatchName("embed backward", m), EMBED_BACKWARD, m);
  {
    ComputeOp* c = eb->mutable_compute();
    const ByteRange gradients = GradientOut(r, emb);
    Set(ComputeParams(r, emb, 0), c->mutable_params());
    Set(act, c->mutable_activations());
    Set(gradients, c->mutable_gradients());
    ScheduleBuilder::Reads(eb, act);
    if (m > 0 && !Sharded()) {
      ScheduleBuilder::Reads(eb, gradients);
    } else if (model_.tied_lm_head()) {  // the head wrote the token table's part
      ScheduleBuilder::Reads(eb, Range(*gradients.buffer, gradients.offset_bytes,
                                       TokenTableElements(model_) * kGradBytes));
    }
    ScheduleBuilder::Writes(eb, gradients);
    if (!model_.tied_lm_head()) claim(eb, emb);
    Finish(eb);
  }
  FlushAccumulates(r, emb);
  ReduceUnit(r, emb, m, eb);
  FlushAccumulates(r, units_.size());
}

void FirstOrderLowering::ReduceUnit(int r, size_t unit, int m, const Op* producer) {
  if (n_ == 1) return;
  const Unit& u = units_[unit];
  const bool last = m == micro_batches_ - 1;
  const std::string mb = micro_batches_ == 1 ? "" : absl::StrCat(" mb ", m);
  if (kind_ == DDP) return;  // its buckets: AllReduceBuckets, once the backward is done
  if (kind_ == ZERO_1) {
    if (!last) return;
    const ByteRange send = Range(Buf(r, kGradients), u.full_at * kGradBytes, u.padded * kGradBytes);
    const ByteRange recv =
        Range(Buf(r, kGradients), (u.full_at + r * u.chunk) * kGradBytes, u.chunk * kGradBytes);
    Op* rs = AddCollective(r, kCollective, "reduce-scatter " + u.Name(), REDUCE_SCATTER,
                           "reduce-scatter " + u.Name(), send, recv);
    ScheduleBuilder::Reads(rs, Range(*send.buffer, send.offset_bytes, u.elements * kGradBytes));
    if (OwnedCount(u, r) > 0) {
      ScheduleBuilder::Writes(rs, Range(*recv.buffer, (u.full_at + OwnedFirst(u, r)) * kGradBytes,
                                        OwnedCount(u, r) * kGradBytes));
    }
    builder_.AddEdge(producer, rs);
    reduced_[unit] = rs;
    return;
  }
  // ZERO_2 / ZERO_3: every micro-batch, from the bucket region.
  const ByteRange region = GradientOut(r, unit);
  const ByteRange send = Range(*region.buffer, region.offset_bytes, u.padded * kGradBytes);
  const ByteRange recv =
      m == 0 ? Range(Buf(r, kGradients), u.shard_at * kGradBytes, u.chunk * kGradBytes)
             : Range(*region.buffer, region.offset_bytes + r * u.chunk * kGradBytes,
                     u.chunk * kGradBytes);
  Op* rs = AddCollective(r, kCollective, "reduce-scatter " + u.Name() + mb, REDUCE_SCATTER,
                         "reduce-scatter " + u.Name() + mb, send, recv);
  ScheduleBuilder::Reads(rs, region);
  const int64_t own = OwnedCount(u, r);
  if (own > 0)
    ScheduleBuilder::Writes(rs, Range(*recv.buffer, recv.offset_bytes, own * kGradBytes));
  builder_.AddEdge(producer, rs);
  if (m == 0 || own == 0) {
    region_free_[RegionKey(unit)] = rs;
    reduced_[unit] = rs;
  } else {
    pending_accumulates_.emplace_back(unit, rs);
  }
}

void FirstOrderLowering::FlushAccumulates(int r, size_t keep) {
  std::vector<std::pair<size_t, const Op*>> still;
  for (const auto& [unit, rs] : pending_accumulates_) {
    if (unit == keep) {
      still.emplace_back(unit, rs);
      continue;
    }
    const Unit& u = units_[unit];
    const int64_t own = OwnedCount(u, r);
    Op* acc = AddCompute(r, "accumulate " + u.Name(), GRAD_ACCUMULATE, -1);
    ComputeOp* c = acc->mutable_compute();
    const ByteRange shard =
        GathersBlocks() ? Range(Buf(r, kParams), u.shard_at * p_, own * p_)
                        : Range(Buf(r, kParams), (u.full_at + OwnedFirst(u, r)) * p_, own * p_);
    Set(Params(u.part, u.block, OwnedFirst(u, r), own, shard), c->mutable_params());
    const ByteRange region = GradientOut(r, unit);
    const ByteRange bucket =
        Range(*region.buffer, region.offset_bytes + r * u.chunk * kGradBytes, own * kGradBytes);
    const ByteRange gradients =
        Range(Buf(r, kGradients), u.shard_at * kGradBytes, own * kGradBytes);
    Set(bucket, c->mutable_bucket());
    Set(gradients, c->mutable_gradients());
    ScheduleBuilder::Reads(acc, bucket);
    ScheduleBuilder::Reads(acc, gradients);
    ScheduleBuilder::Writes(acc, gradients);
    Finish(acc);
    builder_.AddEdge(rs, acc);
    region_free_[RegionKey(unit)] = acc;
    reduced_[unit] = acc;
  }
  pending_accumulates_ = std::move(still);
}

void FirstOrderLowering::AllReduceBuckets(int r) {
  const std::vector<size_t> order = BackwardOrder();
  // The op that produced each unit's gradient last (the last micro-batch's).
  std::map<size_t, const Op*> producer;
  for (const Op& op : schedule_->ops()) {
    if (op.device() != r || !op.has_compute() || !op.compute().has_gradients()) continue;
    const ParamOperand& p = op.compute().params();
    producer[p.part() == DECODER_BLOCK    ? BlockUnit(p.block())
             : p.part() == EMBEDDING_PART ? EmbeddingUnit()
                                          : HeadUnit()] = &op;
  }
  int bucket = 0;
  std::vector<size_t> members;
  int64_t bytes = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    members.push_back(order[i]);
    bytes += units_[order[i]].padded * kGradBytes;
    if (bytes < o_.bucket_bytes && i + 1 < order.size()) continue;
    // Members are consecutive units in reverse layout order: one range.
    const Unit& lo = units_[members.back()];
    const Unit& hi = units_[members.front()];
    const ByteRange range = Range(Buf(r, kGradients), lo.full_at * kGradBytes,
                                  (hi.full_at + hi.padded - lo.full_at) * kGradBytes);
    std::string names;
    for (size_t unit : members)
      absl::StrAppend(&names, names.empty() ? "" : ", ", units_[unit].Name());
    Op* ar =
        AddCollective(r, kCollective, absl::StrCat("all-reduce bucket ", bucket, " (", names, ")"),
                      ALL_REDUCE, absl::StrCat("all-reduce bucket ", bucket), range, range);
    for (size_t unit : members) {
      const ByteRange g = Range(Buf(r, kGradients), units_[unit].full_at * kGradBytes,
                                units_[unit].elements * kGradBytes);
      ScheduleBuilder::Reads(ar, g);
      ScheduleBuilder::Writes(ar, g);
      builder_.AddEdge(producer[unit], ar);
      reduced_[unit] = ar;
    }
    ++bucket;
    members.clear();
    bytes = 0;
  }
}

void FirstOrderLowering::OptimizerSteps(int r) {
  const std::vector<size_t> order = BackwardOrder();
  const bool sharded_optimizer = n_ > 1 && ShardsOptimizer(kind_);
  bool waited = false;
  for (size_t unit : order) {
    const Unit& u = units_[unit];
    const int64_t first = sharded_optimizer ? OwnedFirst(u, r) : 0;
    const int64_t count = sharded_optimizer ? OwnedCount(u, r) : u.elements;
    if (count == 0) continue;
    Op* step = AddCompute(r, "adamw " + u.Name(), OPTIMIZER_STEP, -1);
    ComputeOp* c = step->mutable_compute();
    const ByteRange weights = GathersBlocks()
                                  ? Range(Buf(r, kParams), u.shard_at * p_, count * p_)
                                  : Range(Buf(r, kParams), (u.full_at + first) * p_, count * p_);
    const ByteRange gradients = OwnedGradient(r, unit);
    const int64_t at = OwnedAt(unit, r);
    const ByteRange optimizer_state = Range(Buf(r, kOptimizer), at * 8, count * 8);
    Set(Params(u.part, u.block, first, count, weights), c->mutable_params());
    Set(gradients, c->mutable_gradients());
    Set(optimizer_state, c->mutable_optimizer_state());
    ScheduleBuilder::Reads(step, weights);
    ScheduleBuilder::Writes(step, weights);
    ScheduleBuilder::Reads(step, gradients);
    ScheduleBuilder::Reads(step, optimizer_state);
    ScheduleBuilder::Writes(step, optimizer_state);
    if (t_.host_dtype() != FP32) {
      const ByteRange master = Range(Buf(r, kMaster), at * 4, count * 4);
      Set(master, c->mutable_master());
      ScheduleBuilder::Reads(step, master);
      ScheduleBuilder::Writes(step, master);
    }
    Finish(step);
    // optimizer.step() runs once backward() has returned, and backward()
    // waits for every gradient reduction (DDP's and FSDP's final callbacks):
    // the first step waits for all of them, the rest follow on the stream.
    if (!waited) {
      for (const auto& [reduced_unit, reduction] : reduced_) builder_.AddEdge(reduction, step);
      waited = true;
    }
  }
}

}  // namespace

void LowerFirstOrder(const ModelSpec& model, const ResolvedLowerOptions& resolved,
                     Schedule* schedule) {
  FirstOrderLowering(model, resolved, schedule).Run();
}

}  // namespace zosched
