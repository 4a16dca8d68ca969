// First-order lowering against figures derived by hand for GPT-2 Large
// (models/zoo/gpt2-large.pbtxt: h = 1280, 36 layers, 20 heads, f = 5120,
// V = 50257, 1024 positions, tied head), whose units split evenly over 1, 2,
// 4 and 8 devices, so no padding enters the figures.
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/first_order_model.h"
#include "schedule/lowering.h"
#include "schedule/training_settings.h"
#include "schedule/validate.h"

namespace zosched {
namespace {

constexpr int64_t kH = 1280, kLayers = 36, kHeads = 20, kFfn = 5120, kVocab = 50257;
// Token table + position table; one block (ln1 2h, qkv 3h²+3h, proj h²+h,
// ln2 2h, fc 4h²+4h, proj 4h²+h); the final norm (the head is tied).
constexpr int64_t kEmbedding = kVocab * kH + 1024 * kH;          // 65,639,680
constexpr int64_t kBlock = 12 * kH * kH + 13 * kH;               // 19,677,440
constexpr int64_t kHead = 2 * kH;                                // 2,560
constexpr int64_t kPsi = kEmbedding + kLayers * kBlock + kHead;  // 774,030,080

LowerOptions Options(StrategyKind kind, int devices, int batch, int micro, int seq = 1024) {
  LowerOptions o;
  o.strategy = kind;
  o.dp = devices;
  o.training = DefaultTrainingSettings();
  o.training.set_batch_size(batch);
  o.training.set_micro_batch_size(micro);
  o.training.set_seq_len(seq);
  return o;
}

absl::StatusOr<Schedule> LowerOn(const std::string& cluster, const LowerOptions& o,
                                 const std::string& model = "gpt2-large") {
  absl::StatusOr<ModelSpec> m = LoadModelSpec(model);
  absl::StatusOr<Cluster> c = LoadCluster(cluster);
  if (!m.ok()) return m.status();
  if (!c.ok()) return c.status();
  return LowerSchedule(*m, *c, o);
}

Schedule Lower(const LowerOptions& o) {
  absl::StatusOr<Schedule> s = LowerOn("hgx_h100", o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : Schedule();
}

int64_t Bytes(const Schedule& s, BufferKind kind, int device = 0) {
  int64_t bytes = 0;
  for (const Buffer& b : s.buffers()) {
    if (b.kind() == kind && b.device() == device) bytes += b.size_bytes();
  }
  return bytes;
}

struct Collectives {
  int count = 0;
  int64_t bytes = 0;
};
// Device 0's collectives by kind.
std::map<CollectiveKind, Collectives> CollectivesOf(const Schedule& s) {
  std::map<CollectiveKind, Collectives> out;
  for (const Op& op : s.ops()) {
    if (op.device() != 0 || !op.has_collective()) continue;
    Collectives& c = out[op.collective().kind()];
    ++c.count;
    c.bytes += op.collective().bytes();
  }
  return out;
}

int CountCompute(const Schedule& s, ComputeKind kind) {
  int n = 0;
  for (const Op& op : s.ops())
    n += op.device() == 0 && op.has_compute() && op.compute().kind() == kind;
  return n;
}

TEST(FirstOrderModelTest, RecipesHold16And18BytesPerParameter) {
  EXPECT_EQ(RecipeBytes(AMP_FP32_MASTER).total(), 16);
  EXPECT_EQ(RecipeBytes(BF16_FP32_GRADS).total(), 18);
  EXPECT_EQ(RecipeBytes(BF16_FP32_GRADS).params, 2);
  EXPECT_EQ(RecipeBytes(BF16_FP32_GRADS).master, 4);
}

// Per device, over 4 devices: parameters, gradients, master weights and
// AdamW's moments, sharded by stage. Twice the bytes per parameter (so
// that 4.5 stays an integer):
//   AMP  (4, 4, 0, 8): DDP 16, ZeRO-1 4+4+8/4 = 10, ZeRO-2 4+12/4 = 7, ZeRO-3 16/4 = 4
//   BF16 (2, 4, 4, 8): DDP 18, ZeRO-1 2+4+12/4 = 9, ZeRO-2 2+16/4 = 6, ZeRO-3 18/4 = 4.5
TEST(FirstOrderLoweringTest, ModelStatePerDeviceByRecipeAndStage) {
  const std::map<std::pair<PrecisionRecipe, StrategyKind>, int64_t> twice = {
      {{AMP_FP32_MASTER, SINGLE_DEVICE}, 32}, {{AMP_FP32_MASTER, DDP}, 32},
      {{AMP_FP32_MASTER, ZERO_1}, 20},        {{AMP_FP32_MASTER, ZERO_2}, 14},
      {{AMP_FP32_MASTER, ZERO_3}, 8},         {{BF16_FP32_GRADS, SINGLE_DEVICE}, 36},
      {{BF16_FP32_GRADS, DDP}, 36},           {{BF16_FP32_GRADS, ZERO_1}, 18},
      {{BF16_FP32_GRADS, ZERO_2}, 12},        {{BF16_FP32_GRADS, ZERO_3}, 9},
  };
  for (const auto& [key, expected] : twice) {
    const auto [recipe, kind] = key;
    LowerOptions o =
        Options(kind, kind == SINGLE_DEVICE ? 1 : 4, kind == SINGLE_DEVICE ? 8 : 32, 8);
    o.precision = recipe;
    const Schedule s = Lower(o);
    const int64_t state = Bytes(s, RESIDENT_PARAMS) + Bytes(s, GRADIENTS) +
                          Bytes(s, OPTIMIZER_STATE) + Bytes(s, MASTER_WEIGHTS);
    EXPECT_EQ(2 * state, expected * kPsi)
        << PrecisionRecipe_Name(recipe) << " " << StrategyKind_Name(kind);
    EXPECT_EQ(s.training().host_dtype(), recipe == AMP_FP32_MASTER ? FP32 : BF16);
    EXPECT_EQ(s.training().compute_dtype(), recipe == AMP_FP32_MASTER ? FP16 : BF16);
  }
}

// Korthikanti et al.: s·b·h·34 bytes per block with a fused attention
// kernel, + 5·a·s²·b with a dense one, 2·s·b·h with full recomputation; the
// head keeps FP32 logits 4·s·b·V and its norm's input 2·s·b·h.
TEST(FirstOrderLoweringTest, SavedActivationsFollowTheStatedFormula) {
  const int64_t s = 1024, b = 8, sbh = s * b * kH;
  const int64_t head = 4 * s * b * kVocab + 2 * sbh;
  EXPECT_EQ(34 * sbh, 18 * sbh + 4 * s * b * kFfn);  // the generalised count at f = 4h
  LowerOptions o = Options(SINGLE_DEVICE, 1, 8, 8);
  EXPECT_EQ(Bytes(Lower(o), SAVED_ACTIVATIONS), kLayers * 34 * sbh + head);
  o.flash_attention = false;
  EXPECT_EQ(Bytes(Lower(o), SAVED_ACTIVATIONS),
            kLayers * (34 * sbh + 5 * kHeads * s * s * b) + head);
  o.flash_attention = true;
  o.recompute = true;
  const Schedule r = Lower(o);
  EXPECT_EQ(Bytes(r, SAVED_ACTIVATIONS), kLayers * 2 * sbh + head);
  EXPECT_EQ(Bytes(r, WORKSPACE), 34 * sbh);  // one block rebuilt at a time
}

// Forward per token 2·(12h²) + 4·s·h; the backward twice that; with
// recomputation three times.
TEST(FirstOrderLoweringTest, BackwardCostsTwiceTheForward) {
  const int64_t tokens = 8 * 1024;
  const int64_t forward = (24 * kH * kH + 4 * 1024 * kH) * tokens;
  for (bool recompute : {false, true}) {
    LowerOptions o = Options(SINGLE_DEVICE, 1, 8, 8);
    o.recompute = recompute;
    const Schedule s = Lower(o);
    for (const Op& op : s.ops()) {
      if (!op.has_compute()) continue;
      if (op.compute().kind() == TRAIN_BLOCK_FORWARD) {
        EXPECT_EQ(op.compute().flops(), forward);
      }
      if (op.compute().kind() == BLOCK_BACKWARD) {
        EXPECT_EQ(op.compute().flops(), (recompute ? 3 : 2) * forward) << op.name();
      }
    }
  }
}

// DDP over 4 devices, 4 micro-batches: FP32 gradients all-reduced once per
// step in 37 buckets of the 25 MiB cap (the head's 10 KB joins block 35's
// 79 MB; every other block and the embedding fill one alone), 4Ψ bytes in
// all; a ring moves 2(N-1)/N of that per device. Only the last micro-batch
// synchronises.
TEST(FirstOrderLoweringTest, DdpAllReducesBucketsOnTheLastMicroBatch) {
  const Schedule s = Lower(Options(DDP, 4, 32, 2));
  const auto c = CollectivesOf(s);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c.at(ALL_REDUCE).count, 37);
  EXPECT_EQ(c.at(ALL_REDUCE).bytes, 4 * kPsi);
  EXPECT_EQ(2 * 3 * c.at(ALL_REDUCE).bytes / 4, 6 * kPsi);  // per device on the ring
  std::map<int64_t, const Op*> by_id;
  for (const Op& op : s.ops()) by_id[op.id()] = &op;
  int waits = 0;
  for (const Edge& e : s.edges()) {
    const Op& to = *by_id[e.to()];
    if (!to.has_collective()) continue;
    ++waits;
    EXPECT_TRUE(absl::EndsWith(by_id[e.from()]->name(), "mb 3")) << by_id[e.from()]->name();
  }
  EXPECT_EQ(waits, 4 * 38);  // each device's all-reduces wait for its 38 units' producers
}

// ZeRO-1 reduce-scatters each of the 38 units once (last micro-batch) and
// all-gathers its updated chunks once; ZeRO-2 reduce-scatters on every
// micro-batch and adds the 3 later ones into the shard.
TEST(FirstOrderLoweringTest, ZeroOneAndTwoCollectivesPerStep) {
  const auto one = CollectivesOf(Lower(Options(ZERO_1, 4, 32, 2)));
  EXPECT_EQ(one.at(REDUCE_SCATTER).count, 38);
  EXPECT_EQ(one.at(ALL_GATHER).count, 38);
  EXPECT_EQ(one.at(REDUCE_SCATTER).bytes, 4 * kPsi);  // FP32 gradients
  EXPECT_EQ(one.at(ALL_GATHER).bytes, 4 * kPsi);      // FP32 weights (AMP)
  const Schedule two = Lower(Options(ZERO_2, 4, 32, 2));
  const auto c = CollectivesOf(two);
  EXPECT_EQ(c.at(REDUCE_SCATTER).count, 4 * 38);
  EXPECT_EQ(c.at(ALL_GATHER).count, 38);
  EXPECT_EQ(CountCompute(two, GRAD_ACCUMULATE), 3 * 38);
  EXPECT_EQ(CountCompute(two, OPTIMIZER_STEP), 38);
}

// ZeRO-3 with one unit per block: each micro-batch all-gathers every block
// before its forward and again before its backward (2·36), the embedding
// and head once a step (2), and reduce-scatters all 38 units: about 3Ψ.
TEST(FirstOrderLoweringTest, ZeroThreeMovesAboutThreePsi) {
  const auto c = CollectivesOf(Lower(Options(ZERO_3, 4, 32, 8)));
  EXPECT_EQ(c.at(ALL_GATHER).count, 2 * 36 + 2);
  EXPECT_EQ(c.at(REDUCE_SCATTER).count, 38);
  EXPECT_EQ(c.at(ALL_GATHER).bytes, 4 * (2 * kLayers * kBlock + kEmbedding + kHead));
  EXPECT_EQ(c.at(REDUCE_SCATTER).bytes, 4 * kPsi);
  const double psis =
      static_cast<double>(c.at(ALL_GATHER).bytes + c.at(REDUCE_SCATTER).bytes) / (4.0 * kPsi);
  EXPECT_GT(psis, 2.9);
  EXPECT_LT(psis, 3.0);
  const auto two = CollectivesOf(Lower(Options(ZERO_3, 4, 32, 4)));
  EXPECT_EQ(two.at(ALL_GATHER).count, 2 * 2 * 36 + 2);
  EXPECT_EQ(two.at(REDUCE_SCATTER).count, 2 * 38);
}

TEST(FirstOrderLoweringTest, APlanThatDoesNotFitIsRefusedWithTheShortfall) {
  LowerOptions o = Options(SINGLE_DEVICE, 1, 32, 32);
  absl::StatusOr<Schedule> s = LowerOn("h100_sxm_x1", o, "gpt2-xl");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(s.status().message(), "over by")) << s.status();
}

TEST(FirstOrderLoweringTest, OptionsThatCannotBeLoweredAreRefused) {
  LowerOptions o = Options(SINGLE_DEVICE, 2, 32, 8);
  EXPECT_TRUE(absl::StrContains(LowerOn("hgx_h100", o).status().message(),
                                "SINGLE_DEVICE runs on one device"));
  o = Options(DDP, 2, 32, 8);
  o.pertp = 2;
  EXPECT_TRUE(absl::StrContains(LowerOn("hgx_h100", o).status().message(), "DISTZO2 only"));
  o = Options(DDP, 2, 32, 8);
  o.bucket_bytes = 1000;
  EXPECT_TRUE(absl::StrContains(LowerOn("hgx_h100", o).status().message(), "at least 1 MiB"));
  o = Options(ZERO_3, 4, 30, 1);
  EXPECT_TRUE(absl::StrContains(LowerOn("hgx_h100", o).status().message(),
                                "not a positive multiple of D = 4"));
}

// Validation holds first-order schedules to their own contract.
TEST(FirstOrderValidationTest, RefusesEditsThatBreakTheContract) {
  LowerOptions o = Options(ZERO_3, 2, 16, 4, 256);
  o.precision = BF16_FP32_GRADS;
  const Schedule lowered = Lower(o);
  ASSERT_TRUE(ValidateSchedule(lowered).ok());
  auto first = [](Schedule& s, ComputeKind kind) -> ComputeOp* {
    for (Op& op : *s.mutable_ops()) {
      if (op.has_compute() && op.compute().kind() == kind) return op.mutable_compute();
    }
    return nullptr;
  };
  auto refused = [](const Schedule& s, const std::string& want) {
    const absl::Status status = ValidateSchedule(s);
    EXPECT_TRUE(absl::StrContains(status.message(), want)) << status;
  };
  Schedule s = lowered;
  first(s, OPTIMIZER_STEP)->clear_master();
  refused(s, "compute.master is unset; expected set for OPTIMIZER_STEP with BF16 parameters");
  s = lowered;
  first(s, TRAIN_BLOCK_FORWARD)->mutable_saved()->set_size_bytes(1024);
  refused(s, "compute.saved.size_bytes is 1024");
  s = lowered;
  first(s, BLOCK_BACKWARD)->set_flops(1);
  refused(s, "compute.flops is 1");
  s = lowered;
  first(s, HEAD_BACKWARD)->set_kind(UPDATE);
  refused(s, "compute.kind is UPDATE; expected a kind of first-order schedules");
  s = lowered;
  s.mutable_strategy()->set_kind(ZO2);
  refused(s, "which ZO schedules do not have");
}

}  // namespace
}  // namespace zosched
