#include "kernel_plans/pytorch_zo_plan.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernel_plans/profile_plan.h"
#include "models/accounting.h"
#include "models/zoo_model_for_test.h"

namespace zosched {
namespace {

constexpr int64_t kSeq = 2048;
constexpr int64_t kVocab = 50304;  // ZO2's nanoGPT vocabulary

const PyTorchZoVariant kVariants[] = {PyTorchZoVariant::kMezoResident,
                                      PyTorchZoVariant::kZo2Offloaded};

KernelPlan PlanOf(const ModelSpec& model, const ComputeOp& op, DType dtype,
                  PyTorchZoVariant variant) {
  absl::StatusOr<KernelPlan> plan = PyTorchZoPlan(model, op, dtype, variant);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *std::move(plan) : KernelPlan();
}

ComputeOp ForwardOp(ComputeKind kind, Sign sign, int examples, int seq) {
  ComputeOp op;
  op.set_kind(kind);
  op.set_sign(sign);
  op.set_examples(examples);
  op.set_seq_len(seq);
  return op;
}

ComputeOp UpdateOp(Part part, int64_t first_element, int64_t elements) {
  ComputeOp op;
  op.set_kind(UPDATE);
  op.mutable_params()->set_part(part);
  op.mutable_params()->set_first_element(first_element);
  op.mutable_params()->set_elements(elements);
  return op;
}

double GemmFlops(const KernelPlan& plan) {
  double flops = 0;
  for (const Kernel& k : plan) {
    if (k.kind == KernelKind::kGemm) flops += k.flops * k.launches;
  }
  return flops;
}

double NormalElements(const KernelPlan& plan) {
  double n = 0;
  for (const Kernel& k : plan) n += k.normal_elements * k.launches;
  return n;
}

// Launches that write a parameter in place (add_ of a perturbation, sub_ of
// the update).
int64_t InPlaceWrites(const KernelPlan& plan) {
  int64_t n = 0;
  for (const Kernel& k : plan) {
    if (absl::StartsWith(k.name, "add_: ") || absl::StartsWith(k.name, "sub_: ")) n += k.launches;
  }
  return n;
}

void ExpectWellFormed(const KernelPlan& plan, int64_t element_bytes) {
  EXPECT_FALSE(plan.empty());
  for (const Kernel& k : plan) {
    EXPECT_EQ(k.launches, 1) << k.name;  // eager: each torch op its own launch
    EXPECT_GT(k.bytes, 0) << k.name;
    if (k.kind == KernelKind::kGemm) {
      EXPECT_DOUBLE_EQ(k.flops, 2.0 * k.m * k.n * k.k * k.batch) << k.name;
    }
    if (k.normal_elements > 0) {
      EXPECT_EQ(k.generator, NormalGenerator::kTorch) << k.name;
      EXPECT_DOUBLE_EQ(k.bytes, k.normal_elements * element_bytes) << k.name;  // z written
    }
  }
}

TEST(PyTorchZoPlanTest, BlockForwardGemmFlopsAreTheLinearsAndTheCausalTiles) {
  const ModelSpec model = Zoo("opt-1.3b");
  const int64_t h = model.hidden_size();
  const KernelPlan plan =
      PlanOf(model, ForwardOp(BLOCK_FORWARD, PLUS, 1, kSeq), FP16, PyTorchZoVariant::kZo2Offloaded);
  ExpectWellFormed(plan, 2);
  // c_attn, attn.c_proj, c_fc, mlp.c_proj: 2 · tokens · 12h².
  const double linears = 2.0 * kSeq * 12 * h * h;
  // FlashAttention-2 at head width 64: 128 × 128 tiles; query tile i visits
  // i + 1 key tiles, 1 + 2 + ... + 16 = 136 of 256 per head, each tile
  // 2 · 128 · 128 · 64 for Q·Kᵀ and as much for P·V.
  const double attention = 32.0 * 136 * 4 * 128 * 128 * 64;
  EXPECT_DOUBLE_EQ(GemmFlops(plan), linears + attention);
  // 12 tensors × (normal, ·s, ·ε, add_), then ln_1, c_attn, attention,
  // c_proj, residual add, ln_2, c_fc, gelu, c_proj, residual add.
  EXPECT_EQ(PlanLaunches(plan), 12 * 4 + 10);
}

TEST(PyTorchZoPlanTest, AStepPassesOverEachBlockParameterAsZo2Does) {
  const ModelSpec model = Zoo("opt-1.3b");
  const int64_t h = model.hidden_size();
  const double block = static_cast<double>(BlockParams(model));
  const double decayed = 12.0 * h * h;  // the four weights
  for (PyTorchZoVariant variant : kVariants) {
    const KernelPlan plus = PlanOf(model, ForwardOp(BLOCK_FORWARD, PLUS, 1, kSeq), FP16, variant);
    const KernelPlan minus = PlanOf(model, ForwardOp(BLOCK_FORWARD, MINUS, 1, kSeq), FP16, variant);
    const KernelPlan update =
        PlanOf(model, UpdateOp(DECODER_BLOCK, 0, BlockParams(model)), FP16, variant);
    ExpectWellFormed(update, 2);
    // z drawn four times per element (+εz, -2εz, restore +εz, update),
    // each parameter written in place four times (three add_, one sub_).
    EXPECT_DOUBLE_EQ(NormalElements(plus) + NormalElements(minus) + NormalElements(update),
                     4 * block);
    EXPECT_EQ(InPlaceWrites(plus) + InPlaceWrites(minus) + InPlaceWrites(update), 4 * 12);
    // The UPDATE: restore 12 × 4 launches; update: the 4 weights × 6
    // (normal, g·z, wd·θ, +, lr·, sub_), the 8 biases and norms × 3.
    EXPECT_EQ(PlanLaunches(update), 12 * 4 + 4 * 6 + 8 * 3);
    // Bytes per element: a perturbation 8 (z, s·z and ·ε 2 each, add_ 3);
    // the decayed update 13, the other 6.
    EXPECT_DOUBLE_EQ(PlanBytes(update), 2 * (8 * block + 13 * decayed + 6 * (block - decayed)));
  }
}

TEST(PyTorchZoPlanTest, HeadLossIsTheFullVocabularyHeadOverEveryPosition) {
  const ModelSpec model = Zoo("opt-1.3b");
  const int64_t h = model.hidden_size();
  for (PyTorchZoVariant variant : kVariants) {
    const KernelPlan plan = PlanOf(model, ForwardOp(HEAD_LOSS, MINUS, 1, kSeq), FP16, variant);
    ExpectWellFormed(plan, 2);
    std::vector<const Kernel*> gemms;
    for (const Kernel& k : plan) {
      if (k.kind == KernelKind::kGemm) gemms.push_back(&k);
    }
    ASSERT_EQ(gemms.size(), 1u);
    EXPECT_EQ(gemms[0]->m, kVocab);
    EXPECT_EQ(gemms[0]->n, kSeq);
    EXPECT_EQ(gemms[0]->k, h);
    // ln_f and the untied lm_head perturbed; ln_f, the head, log_softmax,
    // nll_loss.
    EXPECT_DOUBLE_EQ(NormalElements(plan), 2.0 * h + static_cast<double>(kVocab) * h);
    EXPECT_EQ(PlanLaunches(plan), 3 * 4 + 4);
  }
}

TEST(PyTorchZoPlanTest, EmbedPerturbsTheWholeTables) {
  const ModelSpec model = Zoo("opt-1.3b");
  const int64_t h = model.hidden_size();
  const KernelPlan plan =
      PlanOf(model, ForwardOp(EMBED, PLUS, 1, kSeq), FP16, PyTorchZoVariant::kMezoResident);
  ExpectWellFormed(plan, 2);
  EXPECT_DOUBLE_EQ(NormalElements(plan), static_cast<double>(kVocab + model.max_positions()) * h);
  EXPECT_EQ(PlanLaunches(plan), 2 * 4 + 3);  // wte, wpe gathers and their add
}

TEST(PyTorchZoPlanTest, TheVariantsDifferInLnfsUpdateOnly) {
  const ModelSpec model = Zoo("opt-1.3b");
  const ComputeOp ops[] = {
      UpdateOp(EMBEDDING_PART, 0, EmbeddingParams(model)),
      UpdateOp(DECODER_BLOCK, 0, BlockParams(model)),
      ForwardOp(EMBED, PLUS, 1, kSeq),
      ForwardOp(BLOCK_FORWARD, MINUS, 1, kSeq),
      ForwardOp(HEAD_LOSS, PLUS, 1, kSeq),
  };
  for (const ComputeOp& op : ops) {
    EXPECT_EQ(PlanLaunches(PlanOf(model, op, FP16, PyTorchZoVariant::kMezoResident)),
              PlanLaunches(PlanOf(model, op, FP16, PyTorchZoVariant::kZo2Offloaded)))
        << op.ShortDebugString();
  }
  const ComputeOp head = UpdateOp(HEAD_PART, 0, FinalNormParams(model) + HeadParams(model));
  // Restore 3 × 4; update lm_head 6, ln_f's two tensors 3 each (MeZO: "ln"
  // in the name) or 6 each (ZO2 passes weight_decay=0.).
  EXPECT_EQ(PlanLaunches(PlanOf(model, head, FP16, PyTorchZoVariant::kMezoResident)),
            12 + 6 + 2 * 3);
  EXPECT_EQ(PlanLaunches(PlanOf(model, head, FP16, PyTorchZoVariant::kZo2Offloaded)),
            12 + 6 + 2 * 6);
}

TEST(PyTorchZoPlanTest, ProjectedGradientWaitsForG) {
  ComputeOp op;
  op.set_kind(PROJECTED_GRADIENT);
  op.set_examples(1);
  const KernelPlan plan = PlanOf(Zoo("opt-1.3b"), op, FP16, PyTorchZoVariant::kZo2Offloaded);
  EXPECT_EQ(PlanLaunches(plan), 3);  // L+ - L-, / 2ε, .item()
  EXPECT_EQ(NormalElements(plan), 0);
}

TEST(PyTorchZoPlanTest, Fp32AttentionIsTheMemoryEfficientKernel) {
  const ModelSpec model = Zoo("opt-1.3b");
  const KernelPlan plan =
      PlanOf(model, ForwardOp(BLOCK_FORWARD, PLUS, 1, kSeq), FP32, PyTorchZoVariant::kMezoResident);
  ExpectWellFormed(plan, 4);
  const int64_t h = model.hidden_size();
  // 64 × 64 tiles: query tile i visits i + 1 key tiles, 1 + ... + 32 = 528.
  const double attention = 32.0 * 528 * 4 * 64 * 64 * 64;
  EXPECT_DOUBLE_EQ(GemmFlops(plan), 2.0 * kSeq * 12 * h * h + attention);
}

TEST(PyTorchZoPlanTest, RefusesOtherFamiliesNamingTheFamily) {
  const ModelSpec llama = Zoo("llama3.2-1b");
  absl::StatusOr<KernelPlan> plan = PyTorchZoPlan(llama, ForwardOp(BLOCK_FORWARD, PLUS, 1, 128),
                                                  FP16, PyTorchZoVariant::kMezoResident);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "LLAMA")) << plan.status();
}

TEST(PyTorchZoPlanTest, RefusesWhatZo2DoesNotRun) {
  const ModelSpec model = Zoo("opt-1.3b");
  ComputeOp cast;
  cast.set_kind(CAST);
  const ComputeOp refused[] = {
      UpdateOp(DECODER_BLOCK, 0, BlockParams(model) / 2),  // a slice
      ForwardOp(BLOCK_FORWARD, SIGN_UNSPECIFIED, 1, kSeq),
      ForwardOp(BLOCK_FORWARD, PLUS, 0, kSeq),
      ForwardOp(EMBED, PLUS, 1, model.max_positions() + 1),  // past wpe
      cast,
  };
  for (const ComputeOp& op : refused) {
    absl::StatusOr<KernelPlan> plan =
        PyTorchZoPlan(model, op, FP16, PyTorchZoVariant::kZo2Offloaded);
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << op.ShortDebugString();
  }
  ModelSpec narrow_ffn = model;
  narrow_ffn.set_ffn_size(3 * model.hidden_size());
  ModelSpec wide_heads = model;
  wide_heads.set_num_heads(8);  // 256 wide
  for (const ModelSpec& other : {narrow_ffn, wide_heads}) {
    EXPECT_EQ(PyTorchZoPlan(other, UpdateOp(DECODER_BLOCK, 0, BlockParams(other)), FP16,
                            PyTorchZoVariant::kMezoResident)
                  .status()
                  .code(),
              absl::StatusCode::kInvalidArgument);
  }
}

// ZO2's and MeZO's PyTorch code paths are modelled for full-parameter ZO:
// their profiles refuse LoRA and prefix tuning, naming the adapters and
// the profiles that cost them; zosched's CUDA plan takes both.
TEST(PyTorchZoPlanTest, ProfilesRefuseAdaptersNamingThem) {
  const ModelSpec model = Zoo("opt-1.3b");
  Peft lora;
  lora.set_kind(LORA);
  lora.set_lora_rank(8);
  lora.set_lora_alpha(16);
  Peft prefix;
  prefix.set_kind(PREFIX);
  prefix.set_prefix_tokens(5);
  const ComputeOp op = ForwardOp(BLOCK_FORWARD, PLUS, 1, kSeq);
  for (const auto& [peft, label] : {std::pair{lora, "lora r8"}, std::pair{prefix, "prefix k5"}}) {
    for (const ComputeProfile profile : {PYTORCH_MEZO, PYTORCH_ZO2}) {
      const absl::Status status = ProfilePlan(profile, model, op, FP16, peft).status();
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << label;
      EXPECT_TRUE(absl::StrContains(status.message(), label)) << status;
      EXPECT_TRUE(absl::StrContains(status.message(), "ZOSCHED_CUDA or ROOFLINE")) << status;
    }
    EXPECT_TRUE(ProfilePlan(ZOSCHED_CUDA, model, op, FP16, peft).ok()) << label;
  }
}

}  // namespace
}  // namespace zosched
