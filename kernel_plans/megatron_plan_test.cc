#include "kernel_plans/megatron_plan.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernel_plans/first_order_plan_for_test.h"
#include "kernel_plans/profile_plan.h"
#include "kernel_plans/pytorch_first_order_plan.h"
#include "models/zoo_model_for_test.h"

namespace zosched {
namespace {

// Megatron's recipe: BF16 with FP32 main parameters.
struct Setting : FirstOrderSetting {
  Setting() {
    compute = BF16;
    precision = BF16_FP32_GRADS;
  }
};

Schedule Lower(const ModelSpec& model, const Setting& x) { return LowerFirstOrder(model, x); }

KernelPlan PlanOf(const ModelSpec& model, const ComputeOp& op) {
  absl::StatusOr<KernelPlan> plan = MegatronPlan(model, op, BF16);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *std::move(plan) : KernelPlan();
}

// PyTorch eager's plan of the same op under BF16 autocast.
KernelPlan EagerPlanOf(const ModelSpec& model, const ComputeOp& op) {
  absl::StatusOr<KernelPlan> plan = PyTorchFirstOrderPlan(model, op, BF16);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *std::move(plan) : KernelPlan();
}

// The one kernel named exactly `name`.
Kernel Named(const KernelPlan& plan, const std::string& name) {
  for (const Kernel& k : plan) {
    if (k.name == name) return k;
  }
  ADD_FAILURE() << "no kernel '" << name << "'";
  return Kernel();
}

void ExpectGemm(const KernelPlan& plan, const std::string& name, int64_t m, int64_t n, int64_t k) {
  const Kernel g = Named(plan, name);
  EXPECT_EQ(g.kind, KernelKind::kGemm) << name;
  EXPECT_EQ(g.dtype, BF16) << name;
  EXPECT_EQ(g.m, m) << name;
  EXPECT_EQ(g.n, n) << name;
  EXPECT_EQ(g.k, k) << name;
  EXPECT_EQ(g.launches, 1) << name;
}

int64_t StepLaunches(const ModelSpec& model, const Schedule& s, bool megatron) {
  int64_t launches = 0;
  for (const Op& op : s.ops()) {
    if (!op.has_compute()) continue;
    const ComputeOp& c = op.compute();
    launches += PlanLaunches(megatron ? PlanOf(model, c) : EagerPlanOf(model, c));
  }
  return launches;
}

TEST(MegatronPlan, PlansEveryOpOfALoweredSchedule) {
  for (const char* name : {"gpt2-small", "opt-125m"}) {
    const ModelSpec model = Zoo(name);
    for (const bool flash : {true, false}) {
      for (const int micro : {1, 2}) {
        Setting x;
        x.flash = flash;
        x.micro = micro;
        x.seq = 128;
        const Schedule s = Lower(model, x);
        for (const Op& op : s.ops()) {
          if (!op.has_compute()) continue;
          SCOPED_TRACE(absl::StrCat(name, " ", op.name()));
          ExpectWellFormed(PlanOf(model, op.compute()));
        }
      }
    }
  }
}

// TELayerNormColumnParallelLinear is TE's LayerNorm then one GEMM; the
// qkv GEMM adds its bias in the epilogue, linear_proj's and the MLP's
// biases go to bias_dropout_add and bias_gelu: ten launches, no casts.
TEST(MegatronPlan, BlockForwardIsTenFusedLaunches) {
  const ModelSpec model = Zoo("gpt2-small");
  const Setting x;
  const int64_t h = model.hidden_size(), f = model.ffn_size(), tokens = x.micro * x.seq;
  const KernelPlan plan = PlanOf(model, FirstOp(Lower(model, x), TRAIN_BLOCK_FORWARD));
  ExpectGemm(plan, "linear_qkv GEMM", 3 * h, tokens, h);
  ExpectGemm(plan, "linear_proj GEMM", h, tokens, h);
  ExpectGemm(plan, "linear_fc1 GEMM", f, tokens, h);
  ExpectGemm(plan, "linear_fc2 GEMM", h, tokens, f);
  EXPECT_EQ(LaunchesNamed(plan, "TE layernorm"), 2);
  EXPECT_EQ(LaunchesNamed(plan, "TE FusedAttention (cuDNN) forward"), 1);
  EXPECT_EQ(LaunchesNamed(plan, "bias_dropout_add"), 2);
  EXPECT_EQ(LaunchesNamed(plan, "bias_gelu"), 1);
  EXPECT_EQ(LaunchesNamed(plan, "cast"), 0);
  EXPECT_EQ(PlanLaunches(plan), 10);
  // The bias rides in the qkv GEMM's epilogue.
  EXPECT_DOUBLE_EQ(Named(plan, "linear_qkv GEMM").bytes,
                   (3.0 * h * h + 1.0 * h * tokens + 3.0 * h * tokens + 3.0 * h) * 2);
}

// Each projection's dgrad GEMM and its wgrad GEMM into the FP32 main_grad
// (C read and written at 4 bytes); TE's LayerNorm backward is a kernel and
// its finalize; the 4 weights' gradients need no hook, the 8 vectors' do.
TEST(MegatronPlan, BlockBackwardAccumulatesWeightGradientsInTheGemm) {
  const ModelSpec model = Zoo("gpt2-small");
  const Setting x;
  const int64_t h = model.hidden_size(), f = model.ffn_size(), tokens = x.micro * x.seq;
  const KernelPlan plan = PlanOf(model, FirstOp(Lower(model, x), BLOCK_BACKWARD));
  struct Projection {
    const char* name;
    int64_t in, out;
  };
  for (const Projection& p : {Projection{"linear_qkv", h, 3 * h}, Projection{"linear_proj", h, h},
                              Projection{"linear_fc1", h, f}, Projection{"linear_fc2", f, h}}) {
    SCOPED_TRACE(p.name);
    ExpectGemm(plan, absl::StrCat(p.name, " dgrad GEMM"), p.in, tokens, p.out);
    const std::string wgrad = absl::StrCat(p.name, " wgrad GEMM (+= FP32 main_grad)");
    ExpectGemm(plan, wgrad, p.in, p.out, tokens);
    const double bias = p.in == h && p.out == 3 * h ? 3.0 * h * 2 : 0;
    EXPECT_DOUBLE_EQ(Named(plan, wgrad).bytes,
                     (1.0 * p.in * tokens + 1.0 * tokens * p.out) * 2 + 8.0 * p.in * p.out + bias);
  }
  EXPECT_EQ(LaunchesNamed(plan, "GEMM"), 8);
  EXPECT_EQ(LaunchesNamed(plan, "TE layernorm backward"), 4);
  EXPECT_EQ(LaunchesNamed(plan, "TE FusedAttention (cuDNN) backward"), 2);
  EXPECT_EQ(LaunchesNamed(plan, "cast dQ accumulator"), 1);
  EXPECT_EQ(LaunchesNamed(plan, "bias_dropout_add backward"), 2);
  EXPECT_EQ(LaunchesNamed(plan, "bias_gelu backward"), 1);
  EXPECT_EQ(LaunchesNamed(plan, "residual gradient sum"), 2);
  EXPECT_EQ(LaunchesNamed(plan, "DDP hooks"), 8);
  EXPECT_EQ(LaunchesNamed(plan, "SplitAlongDim"), 0);  // TE's dqkv is one buffer
  EXPECT_EQ(PlanLaunches(plan), 29);
}

// The same products as PyTorch eager's: the four projections, their
// gradients, the attention's tiles (fused) or products (scores kept), the
// head's logits and their gradients; recomputation adds the forward's.
TEST(MegatronPlan, GemmFlopsAreTheEagerPlans) {
  const ModelSpec model = Zoo("gpt2-small");
  // Fused or not, recomputing or not.
  for (const int variant : {0, 1, 2, 3}) {
    Setting x;
    x.flash = variant < 2;
    x.recompute = variant % 2 == 1;
    SCOPED_TRACE(absl::StrCat("flash ", x.flash, " recompute ", x.recompute));
    const Schedule s = Lower(model, x);
    std::vector<ComputeKind> kinds = {BLOCK_BACKWARD, TRAIN_HEAD_LOSS, HEAD_BACKWARD};
    if (!x.recompute) kinds.push_back(TRAIN_BLOCK_FORWARD);
    for (const ComputeKind kind : kinds) {
      const ComputeOp op = FirstOp(s, kind);
      EXPECT_DOUBLE_EQ(GemmFlops(PlanOf(model, op)), GemmFlops(EagerPlanOf(model, op)))
          << ComputeKind_Name(kind);
    }
    if (!x.flash) {
      // Scores kept: the lowering's FLOPs exactly, and twice them back
      // (three times recomputing).
      Setting plain = x;
      plain.recompute = false;
      const ComputeOp forward = FirstOp(Lower(model, plain), TRAIN_BLOCK_FORWARD);
      EXPECT_DOUBLE_EQ(GemmFlops(PlanOf(model, forward)), forward.flops());
      EXPECT_DOUBLE_EQ(GemmFlops(PlanOf(model, FirstOp(s, BLOCK_BACKWARD))),
                       (x.recompute ? 3 : 2) * forward.flops());
    }
  }
}

// Fused kernels: with fused attention a block's forward launches half of
// PyTorch eager's under autocast (no casts, the LayerNorm inside TE's
// linear, bias-GELU and bias-dropout-add one kernel each; TE's unfused
// attention builds its mask each call, 10 launches). The backward saves
// less: the casts of the weight gradients go, but the DDP hooks add 8
// small adds of the vectors' gradients into main_grad. Over a step (with
// Megatron's unfused vocab-parallel cross-entropy, the loss's checks and
// the clip) a fifth fewer launches or more, and fewer bytes a block.
TEST(MegatronPlan, LaunchesFewerThanPyTorchEager) {
  const ModelSpec model = Zoo("gpt2-small");
  for (const bool flash : {true, false}) {
    SCOPED_TRACE(absl::StrCat("flash ", flash));
    Setting x;
    x.flash = flash;
    const Schedule s = Lower(model, x);
    const ComputeOp forward = FirstOp(s, TRAIN_BLOCK_FORWARD);
    const int64_t launches = PlanLaunches(PlanOf(model, forward));
    EXPECT_LE((flash ? 2 : 1) * launches, PlanLaunches(EagerPlanOf(model, forward)));
    const ComputeOp backward = FirstOp(s, BLOCK_BACKWARD);
    EXPECT_LT(PlanLaunches(PlanOf(model, backward)), PlanLaunches(EagerPlanOf(model, backward)));
    EXPECT_LT(PlanBytes(PlanOf(model, backward)), PlanBytes(EagerPlanOf(model, backward)));
    Setting amp = x;
    amp.precision = AMP_FP32_MASTER;
    const int64_t megatron = StepLaunches(model, s, true);
    const int64_t eager = StepLaunches(model, Lower(model, amp), false);
    EXPECT_LE(megatron, 0.85 * eager) << megatron << " vs " << eager;
  }
}

// Without flash_attention, TE's unfused attention: its causal mask built
// each call (10 launches), the scores' and context's products, TE's masked
// softmax kernel where is_kernel_available holds (16 < seq < 16384, a
// multiple of 8, examples · heads of 4), else PyTorch's five kernels.
TEST(MegatronPlan, UnfusedAttentionFusesTheSoftmaxWhereTeCan) {
  const ModelSpec model = Zoo("gpt2-small");
  Setting x;
  x.flash = false;
  const int64_t bh = x.micro * model.num_heads(), d = model.hidden_size() / model.num_heads();
  const Schedule s = Lower(model, x);
  const KernelPlan forward = PlanOf(model, FirstOp(s, TRAIN_BLOCK_FORWARD));
  const Kernel scores = Named(forward, "baddbmm q @ kᵀ · 1/√d");
  EXPECT_EQ(scores.m, x.seq);
  EXPECT_EQ(scores.n, x.seq);
  EXPECT_EQ(scores.k, d);
  EXPECT_EQ(scores.batch, bh);
  EXPECT_EQ(LaunchesNamed(forward, "causal mask"), 10);
  EXPECT_EQ(LaunchesNamed(forward, "softmax"), 1);
  EXPECT_EQ(PlanLaunches(forward), 23);
  const KernelPlan backward = PlanOf(model, FirstOp(s, BLOCK_BACKWARD));
  EXPECT_EQ(LaunchesNamed(backward, "scaled_masked_softmax backward (TE)"), 1);
  EXPECT_EQ(LaunchesNamed(backward, "SplitAlongDim"), 1);
  x.seq = 20;  // not a multiple of 8
  const KernelPlan unfused = PlanOf(model, FirstOp(Lower(model, x), TRAIN_BLOCK_FORWARD));
  EXPECT_EQ(LaunchesNamed(unfused, "(TE)"), 0);
  EXPECT_EQ(LaunchesNamed(unfused, "softmax"), 1);
  EXPECT_EQ(PlanLaunches(unfused), 27);
}

// A tied output layer writes a zeroed dummy gradient, which autograd sums
// with the embedding's before the hook adds it into main_grad; an untied
// one does neither.
TEST(MegatronPlan, TiedWeightsSumTheTablesGradients) {
  ModelSpec model = Zoo("gpt2-small");
  ASSERT_TRUE(model.tied_lm_head());
  const Schedule s = Lower(model, Setting());
  const ComputeOp head = FirstOp(s, HEAD_BACKWARD), embed = FirstOp(s, EMBED_BACKWARD);
  EXPECT_EQ(LaunchesNamed(PlanOf(model, head), "dummy wgrad zero fill"), 1);
  EXPECT_EQ(LaunchesNamed(PlanOf(model, embed), "gradient sum"), 1);
  EXPECT_EQ(LaunchesNamed(PlanOf(model, embed), "DDP hooks"), 2);
  model.set_tied_lm_head(false);
  EXPECT_EQ(LaunchesNamed(PlanOf(model, head), "dummy wgrad zero fill"), 0);
  EXPECT_EQ(LaunchesNamed(PlanOf(model, embed), "gradient sum"), 0);
}

// An OPTIMIZER_STEP with its FP32 master weights.
ComputeOp MasterStepOp(Part part, int64_t first, int64_t elements) {
  ComputeOp op = StepOp(part, first, elements);
  op.mutable_master()->set_size_bytes(4 * elements);
  return op;
}

// 54 bytes an element: the NaN check's norm 4, the clip's l2norm 4 and
// scale 8, FusedAdam 28 (g, p, m, v read, p, m, v written), the copy into
// the BF16 model 6, main_grad's zero fill 4. A block's 12 tensors fit one
// launch a pass (two groups for Adam); the head's step carries the
// scalars; 320 chunks of 65,536 elements fill a launch.
TEST(MegatronPlan, OptimizerStepBytesAndLaunches) {
  const ModelSpec model = Zoo("gpt2-small");
  const Schedule s = Lower(model, Setting());
  const ComputeOp block_op = FirstOp(s, OPTIMIZER_STEP, DECODER_BLOCK);
  ASSERT_TRUE(block_op.has_master());
  const int64_t block = block_op.params().elements();
  const KernelPlan plan = PlanOf(model, block_op);
  EXPECT_DOUBLE_EQ(PlanBytes(plan), 54.0 * block);
  EXPECT_EQ(PlanLaunches(plan), 7);
  EXPECT_EQ(LaunchesNamed(plan, "FusedAdam"), 2);
  const KernelPlan head = PlanOf(model, FirstOp(s, OPTIMIZER_STEP, HEAD_PART));
  EXPECT_EQ(LaunchesNamed(head, "(small)"), 14);
  const int64_t full_launch = int64_t{320} * 65536;
  for (const Kernel& k : PlanOf(model, MasterStepOp(DECODER_BLOCK, 0, block - 1))) {
    EXPECT_EQ(k.launches, 1) << k.name;
  }
  const ModelSpec big = Zoo("opt-13b");
  for (const Kernel& k : PlanOf(big, MasterStepOp(DECODER_BLOCK, 3, full_launch + 1))) {
    if (absl::StrContains(k.name, "multi_tensor")) {
      EXPECT_EQ(k.launches, 2) << k.name;
    }
  }
}

// ZO kinds, dtypes other than BF16, other blocks, too many positions, AMP's
// optimizer step (no master weights), a range outside its part.
TEST(MegatronPlan, RefusesWhatMegatronDoesNotRun) {
  const ModelSpec model = Zoo("gpt2-small");
  const ComputeOp block = FirstOp(Lower(model, Setting()), TRAIN_BLOCK_FORWARD);
  ExpectRefusesZoKinds(block, [&model](const ComputeOp& op) {
    return MegatronPlan(model, op, BF16).status();
  });
  for (const DType dtype : {FP16, FP32}) {
    const absl::Status status = MegatronPlan(model, block, dtype).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(status.message(), "BF16")) << status;
  }
  const absl::Status llama = MegatronPlan(Zoo("llama-tiny"), block, BF16).status();
  EXPECT_EQ(llama.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(llama.message(), "Megatron-LM")) << llama;
  ComputeOp long_seq = block;
  long_seq.set_seq_len(model.max_positions() + 1);
  EXPECT_EQ(MegatronPlan(model, long_seq, BF16).status().code(),
            absl::StatusCode::kInvalidArgument);
  Setting amp;
  amp.precision = AMP_FP32_MASTER;
  const absl::Status no_master =
      MegatronPlan(model, FirstOp(Lower(model, amp), OPTIMIZER_STEP), BF16).status();
  EXPECT_EQ(no_master.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(no_master.message(), "pytorch_first_order")) << no_master;
  EXPECT_EQ(MegatronPlan(model, MasterStepOp(HEAD_PART, 0, 1 << 30), BF16).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// ProfilePlan picks this plan for MEGATRON_FIRST_ORDER, which refuses ZO
// kinds by name; its host issues launches at PyTorch eager's pace.
TEST(MegatronPlan, IsTheMegatronProfilesPlan) {
  const ModelSpec model = Zoo("gpt2-small");
  const Schedule s = Lower(model, Setting());
  for (const ComputeKind kind : {TRAIN_EMBED, TRAIN_BLOCK_FORWARD, TRAIN_HEAD_LOSS, HEAD_BACKWARD,
                                 BLOCK_BACKWARD, EMBED_BACKWARD, OPTIMIZER_STEP}) {
    const ComputeOp op = FirstOp(s, kind);
    absl::StatusOr<KernelPlan> plan = ProfilePlan(MEGATRON_FIRST_ORDER, model, op, BF16, Peft());
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(PlanLaunches(*plan), PlanLaunches(PlanOf(model, op))) << ComputeKind_Name(kind);
  }
  ExpectRefusesZoKinds(FirstOp(s, TRAIN_BLOCK_FORWARD), [&model](const ComputeOp& op) {
    return ProfilePlan(MEGATRON_FIRST_ORDER, model, op, BF16, Peft()).status();
  });
  EXPECT_DOUBLE_EQ(ProfileHostDispatchS(MEGATRON_FIRST_ORDER),
                   ProfileHostDispatchS(PYTORCH_FIRST_ORDER));
}

}  // namespace
}  // namespace zosched
