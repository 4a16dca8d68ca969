#include "kernel_plans/pytorch_first_order_plan.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernel_plans/first_order_plan_for_test.h"
#include "kernel_plans/profile_plan.h"
#include "models/zoo_model_for_test.h"

namespace zosched {
namespace {


using Setting = FirstOrderSetting;

Schedule Lower(const ModelSpec& model, const Setting& x) { return LowerFirstOrder(model, x); }

KernelPlan PlanOf(const ModelSpec& model, const ComputeOp& op, DType dtype) {
  absl::StatusOr<KernelPlan> plan = PyTorchFirstOrderPlan(model, op, dtype);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *std::move(plan) : KernelPlan();
}

const ComputeKind kFirstOrderKinds[] = {TRAIN_EMBED,    TRAIN_BLOCK_FORWARD, TRAIN_HEAD_LOSS,
                                        HEAD_BACKWARD,  BLOCK_BACKWARD,      EMBED_BACKWARD,
                                        OPTIMIZER_STEP};

TEST(PyTorchFirstOrderPlan, PlansEveryOpOfALoweredSchedule) {
  const ModelSpec model = Zoo("gpt2-small");
  for (const DType dtype : {FP32, FP16, BF16}) {
    for (const bool flash : {true, false}) {
      Setting x;
      x.compute = dtype;
      x.flash = flash;
      const Schedule s = Lower(model, x);
      for (const Op& op : s.ops()) {
        if (!op.has_compute()) continue;
        SCOPED_TRACE(op.name());
        ExpectWellFormed(PlanOf(model, op.compute(), dtype));
      }
    }
  }
}

// The lowering counts a block's forward as BlockForwardFlopsPerToken ·
// tokens: the four projections and the attention's two products over the
// full score square. The attention that keeps its scores computes exactly
// that; the fused kernel skips the tiles above the diagonal.
TEST(PyTorchFirstOrderPlan, BlockForwardGemmsAreTheLoweringsFlops) {
  const ModelSpec model = Zoo("gpt2-small");
  for (const DType dtype : {FP32, FP16}) {
    Setting x;
    x.compute = dtype;
    x.flash = false;
    const ComputeOp op = FirstOp(Lower(model, x), TRAIN_BLOCK_FORWARD);
    EXPECT_DOUBLE_EQ(GemmFlops(PlanOf(model, op, dtype)), op.flops());

    x.flash = true;
    const ComputeOp fused_op = FirstOp(Lower(model, x), TRAIN_BLOCK_FORWARD);
    const KernelPlan fused = PlanOf(model, fused_op, dtype);
    const double square = 4.0 * x.micro * x.seq * x.seq * model.hidden_size();
    const double attention = GemmFlops(fused, "SDPA");
    EXPECT_DOUBLE_EQ(GemmFlops(fused) - attention, fused_op.flops() - square);
    EXPECT_GE(attention, square / 2);
    EXPECT_LE(attention, square);
  }
}

// Backward: an input and a weight gradient per projection, four products
// for the kept scores (2x the forward); the fused backward's five products
// a tile pair (2.5x its forward's two); recomputation adds the forward.
TEST(PyTorchFirstOrderPlan, BlockBackwardGemmsAreTwiceTheForward) {
  const ModelSpec model = Zoo("gpt2-small");
  for (const bool flash : {false, true}) {
    for (const bool recompute : {false, true}) {
      SCOPED_TRACE(absl::StrCat("flash ", flash, " recompute ", recompute));
      Setting x;
      x.flash = flash;
      x.recompute = recompute;
      const Schedule s = Lower(model, x);
      const ComputeOp backward = FirstOp(s, BLOCK_BACKWARD);
      EXPECT_EQ(backward.recompute(), recompute);
      Setting plain = x;
      plain.recompute = false;
      const double forward =
          GemmFlops(PlanOf(model, FirstOp(Lower(model, plain), TRAIN_BLOCK_FORWARD), FP16));
      const double flops = GemmFlops(PlanOf(model, backward, FP16));
      const double extra = recompute ? forward : 0;
      if (!flash) {
        EXPECT_DOUBLE_EQ(flops, 2 * forward + extra);
      } else {
        EXPECT_GT(flops, 2 * forward + extra);
        EXPECT_LT(flops, 2.5 * forward + extra);
      }
    }
  }
}

// Under recomputation a block's forward runs the kernels it runs without
// (its workspace says which attention), and keeps only the block's input.
TEST(PyTorchFirstOrderPlan, RecomputingForwardRunsTheSameKernels) {
  const ModelSpec model = Zoo("gpt2-small");
  for (const bool flash : {false, true}) {
    SCOPED_TRACE(absl::StrCat("flash ", flash));
    Setting x;
    x.flash = flash;
    const KernelPlan plain = PlanOf(model, FirstOp(Lower(model, x), TRAIN_BLOCK_FORWARD), FP16);
    x.recompute = true;
    const ComputeOp forward = FirstOp(Lower(model, x), TRAIN_BLOCK_FORWARD);
    EXPECT_TRUE(forward.has_workspace());
    const KernelPlan recomputing = PlanOf(model, forward, FP16);
    ASSERT_EQ(recomputing.size(), plain.size());
    for (size_t i = 0; i < plain.size(); ++i) EXPECT_EQ(recomputing[i].name, plain[i].name);
  }
  // A forward of a recomputing schedule lowered without its workspace does
  // not say which attention ran.
  Setting x;
  x.recompute = true;
  ComputeOp forward = FirstOp(Lower(model, x), TRAIN_BLOCK_FORWARD);
  forward.clear_workspace();
  const absl::StatusOr<KernelPlan> plan = PyTorchFirstOrderPlan(model, forward, FP16);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "without a workspace")) << plan.status();
}

// Autocast casts each projection's weight and bias once a forward and casts
// their gradients back; FP32 has no casts.
TEST(PyTorchFirstOrderPlan, AutocastCastsWeightsOnceAForward) {
  const ModelSpec model = Zoo("gpt2-small");
  for (const DType dtype : {FP32, BF16}) {
    Setting x;
    x.compute = dtype;
    const Schedule s = Lower(model, x);
    const KernelPlan forward = PlanOf(model, FirstOp(s, TRAIN_BLOCK_FORWARD), dtype);
    const KernelPlan backward = PlanOf(model, FirstOp(s, BLOCK_BACKWARD), dtype);
    const int64_t casts = dtype == FP32 ? 0 : 8;
    EXPECT_EQ(LaunchesNamed(forward, ".weight") + LaunchesNamed(forward, ".bias"), casts);
    EXPECT_EQ(LaunchesNamed(backward, ".weight gradient") + LaunchesNamed(backward, ".bias gradient"),
              casts);
    if (dtype == FP32) EXPECT_EQ(LaunchesNamed(forward, "cast"), 0);
  }
}

double Bytes(const KernelPlan& plan) {
  double bytes = 0;
  for (const Kernel& k : plan) bytes += k.bytes * k.launches;
  return bytes;
}

// AdamW's eight foreach passes move 80 bytes an element (weight decay 8,
// lerp 12, mul 8, addcmul 12, sqrt 8, div 8, add 8, addcdiv 16); FP16 adds
// GradScaler's unscale (8). A block's 12 tensors take one launch a pass.
TEST(PyTorchFirstOrderPlan, OptimizerStepBytesAndLaunches) {
  const ModelSpec model = Zoo("gpt2-small");
  const int64_t block = FirstOp(Lower(model, Setting()), OPTIMIZER_STEP, DECODER_BLOCK)
                            .params()
                            .elements();
  const ComputeOp op = StepOp(DECODER_BLOCK, 0, block);
  const KernelPlan bf16 = PlanOf(model, op, BF16);
  EXPECT_DOUBLE_EQ(Bytes(bf16), 80.0 * block);
  EXPECT_EQ(bf16.size(), 8u);
  for (const Kernel& k : bf16) EXPECT_EQ(k.launches, 1) << k.name;
  EXPECT_DOUBLE_EQ(Bytes(PlanOf(model, op, FP32)), 80.0 * block);
  EXPECT_DOUBLE_EQ(Bytes(PlanOf(model, op, FP16)), 88.0 * block);
  // GradScaler's once-a-step work rides on the head's step.
  const int64_t head = FirstOp(Lower(model, Setting()), OPTIMIZER_STEP, HEAD_PART)
                           .params()
                           .elements();
  const KernelPlan head_fp16 = PlanOf(model, StepOp(HEAD_PART, 0, head), FP16);
  EXPECT_GT(Bytes(head_fp16), 88.0 * head);
  EXPECT_EQ(LaunchesNamed(head_fp16, ".item()"), 1);
}

// A whole part is its parameter tensors, a shard (FSDP's flat parameter)
// one tensor; 2,240 chunks of 65,536 elements fill a launch.
TEST(PyTorchFirstOrderPlan, OptimizerShardIsOneTensorInChunks) {
  const ModelSpec model = Zoo("opt-13b");
  const int64_t full_launch = int64_t{2240} * 65536;
  const int64_t block = 12 * model.hidden_size() * model.hidden_size() + 13 * model.hidden_size();
  ASSERT_GT(block, full_launch + 1);
  for (const Kernel& k : PlanOf(model, StepOp(DECODER_BLOCK, 0, full_launch), BF16)) {
    EXPECT_EQ(k.launches, 1) << k.name;
  }
  for (const Kernel& k : PlanOf(model, StepOp(DECODER_BLOCK, 7, full_launch + 1), BF16)) {
    EXPECT_EQ(k.launches, 2) << k.name;
  }
  // The whole block: its 16 tensors (q, k and v apart), 4,810 chunks.
  for (const Kernel& k : PlanOf(model, StepOp(DECODER_BLOCK, 0, block), BF16)) {
    EXPECT_EQ(k.launches, 3) << k.name;
  }
}

// Up to 3,072 indices the embedding backward is one kernel into a
// zero-filled table, beyond it sorts.
TEST(PyTorchFirstOrderPlan, EmbeddingBackwardSortsLongBatches) {
  const ModelSpec model = Zoo("gpt2-small");
  Setting x;
  x.micro = 2;
  x.seq = 1024;
  const KernelPlan short_batch =
      PlanOf(model, FirstOp(Lower(model, x), EMBED_BACKWARD), FP16);
  EXPECT_EQ(LaunchesNamed(short_batch, "sort"), 0);
  x.micro = 4;
  x.batch = 8;
  const KernelPlan long_batch = PlanOf(model, FirstOp(Lower(model, x), EMBED_BACKWARD), FP16);
  EXPECT_EQ(LaunchesNamed(long_batch, "wte indices sort"), 11);
  EXPECT_EQ(LaunchesNamed(long_batch, "wpe indices sort"), 0);
  EXPECT_EQ(LaunchesNamed(long_batch, "wte gradient sum"), 1);  // tied
}

TEST(PyTorchFirstOrderPlan, RefusesWhatThePyTorchProgramDoesNotRun) {
  const ModelSpec model = Zoo("gpt2-small");
  const Schedule s = Lower(model, Setting());
  const ComputeOp block = FirstOp(s, TRAIN_BLOCK_FORWARD);
  // ZO kinds, named.
  ExpectRefusesZoKinds(block, [&model](const ComputeOp& op) {
    return PyTorchFirstOrderPlan(model, op, FP16).status();
  });
  // Models of another block, dtypes, token counts, ranges, master weights.
  EXPECT_EQ(PyTorchFirstOrderPlan(Zoo("llama-tiny"), block, FP16).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PyTorchFirstOrderPlan(Zoo("opt-350m"), block, FP16).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PyTorchFirstOrderPlan(model, block, DTYPE_UNSPECIFIED).status().code(),
            absl::StatusCode::kInvalidArgument);
  ComputeOp long_seq = block;
  long_seq.set_seq_len(model.max_positions() + 1);
  EXPECT_EQ(PyTorchFirstOrderPlan(model, long_seq, FP16).status().code(),
            absl::StatusCode::kInvalidArgument);
  ComputeOp resized = block;
  resized.mutable_saved()->set_size_bytes(block.saved().size_bytes() + 2);
  EXPECT_EQ(PyTorchFirstOrderPlan(model, resized, FP16).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PyTorchFirstOrderPlan(model, StepOp(HEAD_PART, 0, 1 << 30), FP16).status().code(),
            absl::StatusCode::kInvalidArgument);
  ComputeOp master = FirstOp(s, OPTIMIZER_STEP);
  master.mutable_master()->set_size_bytes(4);
  EXPECT_EQ(PyTorchFirstOrderPlan(model, master, FP16).status().code(),
            absl::StatusCode::kInvalidArgument);
  // OPT sizes run as GPT-2 blocks.
  Setting opt;
  opt.seq = 128;
  const ModelSpec opt_125m = Zoo("opt-125m");
  const Schedule opt_schedule = Lower(opt_125m, opt);
  for (const Op& op : opt_schedule.ops()) {
    if (op.has_compute()) ExpectWellFormed(PlanOf(opt_125m, op.compute(), FP16));
  }
}

// The ZO profiles refuse first-order kinds and PYTORCH_FIRST_ORDER the ZO kinds,
// each naming the kind.
TEST(PyTorchFirstOrderPlan, ProfilesKeepToTheirKinds) {
  const ModelSpec model = Zoo("gpt2-small");
  const Schedule s = Lower(model, Setting());
  for (const ComputeKind kind : kFirstOrderKinds) {
    const ComputeOp op = FirstOp(s, kind);
    EXPECT_TRUE(ProfilePlan(PYTORCH_FIRST_ORDER, model, op, FP16, Peft()).ok()) << ComputeKind_Name(kind);
    for (const ComputeProfile zo : {ZOSCHED_CUDA, PYTORCH_MEZO, PYTORCH_ZO2}) {
      const absl::Status status = ProfilePlan(zo, model, op, FP16, Peft()).status();
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument)
          << ComputeProfile_Name(zo) << " " << ComputeKind_Name(kind);
      EXPECT_TRUE(absl::StrContains(status.message(), ComputeKind_Name(kind))) << status;
    }
  }
  ComputeOp zo_forward;
  zo_forward.set_kind(BLOCK_FORWARD);
  zo_forward.set_sign(PLUS);
  zo_forward.set_examples(1);
  zo_forward.set_seq_len(128);
  const absl::Status status = ProfilePlan(PYTORCH_FIRST_ORDER, model, zo_forward, FP16, Peft()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "BLOCK_FORWARD")) << status;
  EXPECT_DOUBLE_EQ(ProfileHostDispatchS(PYTORCH_FIRST_ORDER), ProfileHostDispatchS(PYTORCH_ZO2));
}

}  // namespace
}  // namespace zosched
