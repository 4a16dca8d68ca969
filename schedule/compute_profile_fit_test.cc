#include "schedule/compute_profile_fit.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

ProfiledConfig Config(StrategyKind strategy, Family family,
                      PrecisionRecipe precision = AMP_FP32_MASTER, bool recompute = false) {
  ProfiledConfig c;
  c.strategy = strategy;
  c.family = family;
  c.precision = precision;
  c.recompute = recompute;
  return c;
}

TEST(ComputeProfileFitTest, EachStrategyHasItsImplementationsProfile) {
  for (StrategyKind k : {MEZO, ZO2, DISTZO2}) {
    EXPECT_EQ(KernelProfileFor(Config(k, OPT)), ZOSCHED_CUDA);
    EXPECT_EQ(KernelProfileFor(Config(k, LLAMA)), ZOSCHED_CUDA);
  }
  for (StrategyKind k : {SINGLE_DEVICE, DDP, ZERO_1, ZERO_2, ZERO_3}) {
    EXPECT_EQ(KernelProfileFor(Config(k, OPT)), PYTORCH_FIRST_ORDER);
    EXPECT_EQ(KernelProfileFor(Config(k, GPT2)), PYTORCH_FIRST_ORDER);
    // Megatron's recipe: Megatron-LM's fused kernels.
    EXPECT_EQ(KernelProfileFor(Config(k, GPT2, BF16_FP32_GRADS)), MEGATRON_FIRST_ORDER);
    // No kernel-level profile of training another family: the roofline.
    // Recomputation too: the block's forward again before its backward.
    EXPECT_EQ(KernelProfileFor(Config(k, GPT2, BF16_FP32_GRADS, true)), MEGATRON_FIRST_ORDER);
    EXPECT_EQ(KernelProfileFor(Config(k, OPT, AMP_FP32_MASTER, true)), PYTORCH_FIRST_ORDER);
    EXPECT_EQ(KernelProfileFor(Config(k, QWEN3)), ROOFLINE);
  }
  EXPECT_EQ(KernelProfileFor(Config(STRATEGY_KIND_UNSPECIFIED, OPT)), ROOFLINE);
  EXPECT_EQ(ComputeProfileFlagName(PYTORCH_FIRST_ORDER), "pytorch_first_order");
}

std::string Refusal(ComputeProfile profile, const ProfiledConfig& config) {
  const absl::Status status = CheckProfileRuns(profile, config);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  return std::string(status.message());
}

TEST(ComputeProfileFitTest, AProfileRunsOnlyWhatItsImplementationRuns) {
  for (StrategyKind k : {MEZO, ZO2, DISTZO2, SINGLE_DEVICE, DDP, ZERO_3}) {
    for (PrecisionRecipe p : {AMP_FP32_MASTER, BF16_FP32_GRADS}) {
      for (Family f : {OPT, LLAMA}) {
        for (bool recompute : {false, true}) {
          const ProfiledConfig c = Config(k, f, p, recompute);
          EXPECT_TRUE(CheckProfileRuns(ROOFLINE, c).ok());
          EXPECT_TRUE(CheckProfileRuns(KernelProfileFor(c), c).ok());
        }
      }
    }
  }
  EXPECT_TRUE(CheckProfileRuns(PYTORCH_ZO2, Config(ZO2, OPT)).ok());
  EXPECT_TRUE(CheckProfileRuns(PYTORCH_MEZO, Config(MEZO, GPT2)).ok());
  EXPECT_EQ(Refusal(PYTORCH_FIRST_ORDER, Config(ZO2, OPT)),
            "pytorch_first_order (PyTorch eager training) runs the first-order strategies "
            "(SINGLE_DEVICE, DDP, ZERO_1/2/3), not ZO2 (expected zosched_cuda, pytorch_mezo, "
            "pytorch_zo2 or roofline)");
  EXPECT_EQ(Refusal(ZOSCHED_CUDA, Config(DDP, OPT)),
            "zosched_cuda (zosched's CUDA backend) runs the ZO strategies (MEZO, ZO2, DISTZO2), "
            "not DDP (expected pytorch_first_order or roofline)");
  EXPECT_EQ(Refusal(PYTORCH_ZO2, Config(DISTZO2, OPT)),
            "pytorch_zo2 (ZO2's PyTorch code) runs MEZO and ZO2 on one GPU, not DISTZO2 "
            "(expected zosched_cuda or roofline)");
  EXPECT_EQ(Refusal(PYTORCH_MEZO, Config(MEZO, LLAMA)),
            "pytorch_mezo (ZO2's PyTorch code) runs OPT and GPT-2 models, not LLAMA (expected "
            "zosched_cuda or roofline)");
  EXPECT_EQ(Refusal(PYTORCH_FIRST_ORDER, Config(ZERO_2, GPT2, BF16_FP32_GRADS)),
            "pytorch_first_order (PyTorch eager training) trains FP32 parameters (precision "
            "AMP_FP32_MASTER), not BF16_FP32_GRADS (expected megatron_first_order or "
            "roofline)");
  EXPECT_EQ(Refusal(MEGATRON_FIRST_ORDER, Config(DDP, OPT)),
            "megatron_first_order (Megatron-LM's GPT training) trains BF16 parameters with FP32 "
            "gradients (precision BF16_FP32_GRADS), not AMP_FP32_MASTER (expected "
            "pytorch_first_order or roofline)");
  EXPECT_EQ(Refusal(PYTORCH_FIRST_ORDER, Config(DDP, LLAMA, AMP_FP32_MASTER, true)),
            "pytorch_first_order (PyTorch eager training) runs OPT and GPT-2 models, not LLAMA "
            "(expected roofline)");
}

}  // namespace
}  // namespace zosched
