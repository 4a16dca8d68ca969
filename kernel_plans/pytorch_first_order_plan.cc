#include "kernel_plans/pytorch_first_order_plan.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernel_plans/embedding_backward_plan.h"
#include "kernel_plans/fused_attention_plan.h"
#include "kernel_plans/gpt_first_order_op.h"
#include "kernel_plans/multi_tensor_apply.h"

namespace zosched {
namespace {

constexpr int64_t kFp32Bytes = 4;   // parameters, gradients, moments, autocast's FP32 outputs
constexpr int64_t kIndexBytes = 8;  // token ids, positions, targets: int64
constexpr int64_t kMaskBytes = 1;   // the causal mask: bool

// The dimensions of one op, in elements; c = bytes per element of the
// compute dtype.
struct Dims : GptShape {
  bool autocast = false;  // FP16 or BF16 under torch.autocast; FP32: off
};

Dims DimsOf(const ModelSpec& model, const ComputeOp& op, DType dtype) {
  Dims s;
  static_cast<GptShape&>(s) = GptShapeOf(model, op, dtype);
  s.autocast = dtype != FP32;
  return s;
}

// A memory-bound kernel moving `bytes` and doing `flops` over all of its
// `launches` (kernel.h counts them per launch).
Kernel Pass(std::string name, const Dims& s, double bytes, double flops = 0,
            int64_t launches = 1) {
  return MemoryPass(std::move(name), s.dtype, bytes / launches, flops / launches, launches);
}

// A dtype conversion of `elements` (.to(), autocast's casts, ToCopyBackward).
Kernel Cast(const std::string& what, double elements, int64_t from, int64_t to, const Dims& s) {
  return Pass(absl::StrCat("cast ", what), s, elements * (from + to), kElementFlops * elements);
}

// An elementwise kernel over `elements` reading `in` bytes and writing
// `out` bytes of each.
Kernel Elementwise(std::string name, double elements, double in, double out, const Dims& s) {
  return Pass(std::move(name), s, elements * (in + out), kElementFlops * elements);
}

// F.layer_norm on the FP32 residual stream (FP32 under autocast too): reads
// x, weight and bias, writes y and each row's mean and rstd.
Kernel LayerNormForward(const std::string& name, const Dims& s) {
  return Pass(absl::StrCat(name, " layer_norm"), s,
              (2 * s.Th() + 2.0 * s.h) * kFp32Bytes + 2.0 * s.tokens * kFp32Bytes,
              kLayerNormFlops * s.Th());
}

// native_layer_norm_backward: the input gradient (reads dy, x, the
// statistics and the weight) and the weight and bias gradients (reads dy,
// x and the statistics again).
void AppendLayerNormBackward(const std::string& name, const Dims& s, KernelPlan* plan) {
  const double stats = 2.0 * s.tokens * kFp32Bytes;
  plan->push_back(Pass(absl::StrCat(name, " layer_norm backward (input)"), s,
                       3 * s.Th() * kFp32Bytes + stats + s.h * kFp32Bytes,
                       kLayerNormFlops * s.Th()));
  plan->push_back(Pass(absl::StrCat(name, " layer_norm backward (weight, bias)"), s,
                       2 * s.Th() * kFp32Bytes + stats + 2.0 * s.h * kFp32Bytes,
                       2 * kElementFlops * s.Th()));
}

// An nn.Linear(in, out) over the op's tokens. `cast_input`: its input is
// FP32 (a LayerNorm's output), which autocast casts down.
struct Linear {
  std::string name;
  int64_t in = 0, out = 0;
  bool bias = true;
  bool cast_input = false;
};

// Forward: under autocast the casts of the input, the weight and the bias,
// then one addmm (mm without a bias), the bias in the epilogue.
void AppendLinearForward(const Linear& l, const Dims& s, KernelPlan* plan) {
  if (s.autocast) {
    if (l.cast_input) plan->push_back(Cast(l.name + " input", s.tokens * l.in, kFp32Bytes, s.c, s));
    plan->push_back(Cast(l.name + ".weight", l.in * l.out, kFp32Bytes, s.c, s));
    if (l.bias) plan->push_back(Cast(l.name + ".bias", l.out, kFp32Bytes, s.c, s));
  }
  Kernel g = Gemm(absl::StrCat(l.name, l.bias ? " addmm" : " mm"), s.dtype, s.c, l.out, s.tokens,
                  l.in);
  if (l.bias) g.bytes += static_cast<double>(l.out) * s.c;
  plan->push_back(g);
}

// Backward (AddmmBackward0): the input gradient dX = dY·W (m = in, n =
// tokens, k = out), the weight gradient dW = dYᵀ·X (m = in, n = out, k =
// tokens), the bias gradient as a sum over tokens; under autocast the
// ToCopyBackward of each cast: the parameters' gradients and the input's
// cast up to FP32.
void AppendLinearBackward(const Linear& l, const Dims& s, KernelPlan* plan) {
  plan->push_back(Gemm(l.name + " input gradient (mm)", s.dtype, s.c, l.in, s.tokens, l.out));
  plan->push_back(Gemm(l.name + " weight gradient (mm)", s.dtype, s.c, l.in, l.out, s.tokens));
  if (l.bias) {
    plan->push_back(Pass(l.name + " bias gradient (sum)", s,
                         (static_cast<double>(s.tokens) + 1) * l.out * s.c,
                         kElementFlops * s.tokens * l.out));
  }
  if (s.autocast) {
    plan->push_back(Cast(l.name + ".weight gradient", l.in * l.out, s.c, kFp32Bytes, s));
    if (l.bias) plan->push_back(Cast(l.name + ".bias gradient", l.out, s.c, kFp32Bytes, s));
    if (l.cast_input) {
      plan->push_back(Cast(l.name + " input gradient", s.tokens * l.in, s.c, kFp32Bytes, s));
    }
  }
}

struct BlockLinears {
  Linear qkv, proj, fc, fc_proj;
};

BlockLinears BlockLinearsOf(const Dims& s) {
  return {Linear{"attn.c_attn", s.h, 3 * s.h, true, true},
          Linear{"attn.c_proj", s.h, s.h, true, false},
          Linear{"mlp.c_fc", s.h, s.f, true, true},
          Linear{"mlp.c_proj", s.f, s.h, true, false}};
}

const char* FusedName(const Dims& s) {
  return s.dtype == FP32 ? "SDPA memory-efficient attention" : "SDPA FlashAttention-2";
}

// torch.matmul of the [B, heads, T, d] view of an operand laid out
// [B, T, heads, d] folds B and heads into one batch dimension, which
// copies the operand when B > 1 (the two dimensions do not merge).
void AppendBatchLayoutCopy(const std::string& what, const Dims& s, KernelPlan* plan) {
  if (s.examples > 1) {
    plan->push_back(Elementwise(absl::StrCat("copy ", what, " to the bmm layout (matmul reshape)"),
                                s.Th(), s.c, s.c, s));
  }
}

// The attention that keeps its scores S ([B, heads, T, T]): att = q @ kᵀ,
// · 1/√d, masked_fill(bias == 0, -inf), softmax (FP32 out under
// autocast: softmax is an autocast-to-float32 op), att @ v (autocast casts
// the probabilities back down), then the heads merged into [B, T, h]
// (transpose(1, 2).contiguous(): a copy).
void AppendScoresAttentionForward(const Dims& s, KernelPlan* plan) {
  const double S = s.Scores(), square = static_cast<double>(s.seq) * s.seq;
  const int64_t bh = s.examples * s.heads;
  AppendBatchLayoutCopy("q", s, plan);
  AppendBatchLayoutCopy("kᵀ", s, plan);
  plan->push_back(Gemm("q @ kᵀ (bmm)", s.dtype, s.c, s.seq, s.seq, s.d, bh));
  plan->push_back(Elementwise("scores · 1/√d", S, s.c, s.c, s));
  plan->push_back(Elementwise("causal mask (bias == 0)", square, kFp32Bytes, kMaskBytes, s));
  plan->push_back(Pass("masked_fill(-inf)", s, S * 2 * s.c + square * kMaskBytes, kElementFlops * S));
  plan->push_back(Pass("softmax", s, S * (s.c + kFp32Bytes), kSoftmaxFlops * S));
  if (s.autocast) plan->push_back(Cast("attention probabilities", S, kFp32Bytes, s.c, s));
  AppendBatchLayoutCopy("v", s, plan);
  plan->push_back(Gemm("att @ v (bmm)", s.dtype, s.c, s.d, s.seq, s.seq, bh));
  plan->push_back(Elementwise("merge heads (transpose(1, 2).contiguous())", s.Th(), s.c, s.c, s));
}

// Its backward, in reverse: dP = dY @ vᵀ, dV = Pᵀ @ dY (dY copied to the
// bmm layout when B > 1), the probabilities' cast back up, softmax backward
// (reads dP and P in FP32, writes dS in the scores' dtype), masked_fill's
// and the scale's backward, dQ = dS @ k, dK = dSᵀ @ q.
void AppendScoresAttentionBackward(const Dims& s, KernelPlan* plan) {
  const double S = s.Scores(), square = static_cast<double>(s.seq) * s.seq;
  const int64_t bh = s.examples * s.heads;
  AppendBatchLayoutCopy("dY", s, plan);
  plan->push_back(Gemm("dP = dY @ vᵀ (bmm)", s.dtype, s.c, s.seq, s.seq, s.d, bh));
  plan->push_back(Gemm("dV = Pᵀ @ dY (bmm)", s.dtype, s.c, s.d, s.seq, s.seq, bh));
  if (s.autocast) plan->push_back(Cast("attention probabilities gradient", S, s.c, kFp32Bytes, s));
  plan->push_back(Pass("softmax backward", s, S * (2 * kFp32Bytes + s.c), 3 * kElementFlops * S));
  plan->push_back(
      Pass("masked_fill backward", s, S * 2 * s.c + square * kMaskBytes, kElementFlops * S));
  plan->push_back(Elementwise("scores · 1/√d backward", S, s.c, s.c, s));
  plan->push_back(Gemm("dQ = dS @ k (bmm)", s.dtype, s.c, s.d, s.seq, s.seq, bh));
  plan->push_back(Gemm("dK = dSᵀ @ q (bmm)", s.dtype, s.c, s.d, s.seq, s.seq, bh));
}

// x + branch(x): reads the FP32 stream and the branch's output (compute
// dtype), writes FP32.
Kernel ResidualAdd(const std::string& branch, const Dims& s) {
  return Pass(absl::StrCat("residual add (", branch, ")"), s,
              s.Th() * (2 * kFp32Bytes + s.c), kElementFlops * s.Th());
}

// Block.forward.
void AppendBlockForward(const Dims& s, bool fused, KernelPlan* plan) {
  const BlockLinears l = BlockLinearsOf(s);
  plan->push_back(LayerNormForward("ln_1", s));
  AppendLinearForward(l.qkv, s, plan);
  if (fused) {
    plan->push_back(FusedAttentionForward(FusedName(s), s));
  } else {
    AppendScoresAttentionForward(s, plan);
  }
  AppendLinearForward(l.proj, s, plan);
  plan->push_back(ResidualAdd("attention", s));
  plan->push_back(LayerNormForward("ln_2", s));
  AppendLinearForward(l.fc, s, plan);
  plan->push_back(Pass(s.relu ? "relu" : "gelu (tanh)", s, 2 * s.Tf() * s.c,
                       (s.relu ? kElementFlops : kActivationFlops) * s.Tf()));
  AppendLinearForward(l.fc_proj, s, plan);
  plan->push_back(ResidualAdd("mlp", s));
}

// The residual stream's gradient into a branch (under autocast cast down to
// the branch output's dtype), and after the branch its sum with the skip
// path's (two FP32 gradients of x).
Kernel ResidualGradientSum(const std::string& branch, const Dims& s) {
  return Elementwise(absl::StrCat("residual gradient sum (", branch, ")"), s.Th(), 2 * kFp32Bytes,
                     kFp32Bytes, s);
}

// Block backward, optionally recomputing the forward first.
void AppendBlockBackward(const Dims& s, bool fused, bool recompute, KernelPlan* plan) {
  if (recompute) AppendBlockForward(s, fused, plan);
  const BlockLinears l = BlockLinearsOf(s);
  if (s.autocast) plan->push_back(Cast("residual gradient (mlp)", s.Th(), kFp32Bytes, s.c, s));
  AppendLinearBackward(l.fc_proj, s, plan);
  plan->push_back(Pass(s.relu ? "relu backward" : "gelu (tanh) backward", s, 3 * s.Tf() * s.c,
                       (s.relu ? kElementFlops : kActivationFlops) * s.Tf()));
  AppendLinearBackward(l.fc, s, plan);
  AppendLayerNormBackward("ln_2", s, plan);
  plan->push_back(ResidualGradientSum("mlp", s));
  if (s.autocast) {
    plan->push_back(Cast("residual gradient (attention)", s.Th(), kFp32Bytes, s.c, s));
  }
  AppendLinearBackward(l.proj, s, plan);
  if (fused) {
    AppendFusedAttentionBackward(FusedName(s), s, plan);
  } else {
    AppendScoresAttentionBackward(s, plan);
  }
  // SplitBackward of qkv.split: the three gradients concatenated.
  plan->push_back(Elementwise("cat q, k, v gradients (split backward)", 3 * s.Th(), s.c, s.c, s));
  AppendLinearBackward(l.qkv, s, plan);
  AppendLayerNormBackward("ln_1", s, plan);
  plan->push_back(ResidualGradientSum("attention", s));
}

// wte(idx) + wpe(arange(T)): FP32 gathers (embedding is no autocast op)
// and a broadcast add.
KernelPlan EmbedForward(const Dims& s) {
  const double position_rows = static_cast<double>(s.seq) * s.h;
  return {Pass("wte embedding", s, s.tokens * kIndexBytes + 2 * s.Th() * kFp32Bytes),
          Pass("arange positions", s, s.seq * kIndexBytes),
          Pass("wpe embedding", s, s.seq * kIndexBytes + 2 * position_rows * kFp32Bytes),
          Pass("add token and position embeddings", s,
               (2 * s.Th() + position_rows) * kFp32Bytes, kElementFlops * s.Th())};
}

// embedding_dense_backward_cuda of `indices` gradient rows into a table of
// `rows` (FP32).
void AppendEmbeddingBackward(const std::string& table, int64_t indices, int64_t rows,
                             const Dims& s, KernelPlan* plan) {
  AppendEmbeddingBackward(table, indices, rows, s.h, kFp32Bytes, s.dtype, plan);
}

KernelPlan EmbedBackward(const Dims& s) {
  KernelPlan plan;
  // AddBackward0 of the broadcast [T, h] position rows: a sum over the
  // examples (a view for one).
  if (s.examples > 1) {
    plan.push_back(Pass("wpe gradient sum over examples", s,
                        (s.Th() + static_cast<double>(s.seq) * s.h) * kFp32Bytes,
                        kElementFlops * s.Th()));
  }
  AppendEmbeddingBackward("wpe", s.seq, s.positions, s, &plan);
  AppendEmbeddingBackward("wte", s.tokens, s.vocab, s, &plan);
  if (s.tied) {
    const double table = static_cast<double>(s.vocab) * s.h;
    plan.push_back(Elementwise("wte gradient sum (lm_head + embedding)", table, 2 * kFp32Bytes,
                               kFp32Bytes, s));
  }
  return plan;
}

Linear LmHead(const Dims& s) { return Linear{"lm_head", s.h, s.vocab, false, true}; }

// ln_f, lm_head over every position, F.cross_entropy: under autocast its
// FP32 cast of the logits, then log_softmax and nll_loss (reads each row's
// target and log-probability, writes the mean and its weight).
KernelPlan HeadForward(const Dims& s) {
  KernelPlan plan;
  const double logits = static_cast<double>(s.tokens) * s.vocab;
  plan.push_back(LayerNormForward("ln_f", s));
  AppendLinearForward(LmHead(s), s, &plan);
  if (s.autocast) plan.push_back(Cast("logits (cross_entropy)", logits, s.c, kFp32Bytes, s));
  plan.push_back(Pass("log_softmax (cross_entropy)", s, 2 * logits * kFp32Bytes,
                      kSoftmaxFlops * logits));
  plan.push_back(Pass("nll_loss (cross_entropy)", s,
                      s.tokens * (kIndexBytes + kFp32Bytes) + 2.0 * kFp32Bytes,
                      kElementFlops * s.tokens));
  return plan;
}

// loss.backward() from the head: the loss's gradient (ones; under FP16
// GradScaler's scale(loss) and its backward), nll_loss backward (a
// zero-filled [T, V] gradient and the targets' entries), log_softmax
// backward, the logits' cast back, lm_head's backward, ln_f's.
KernelPlan HeadBackward(const Dims& s) {
  KernelPlan plan;
  const double logits = static_cast<double>(s.tokens) * s.vocab;
  plan.push_back(Pass("loss gradient (ones)", s, kFp32Bytes));
  if (s.dtype == FP16) {
    plan.push_back(Pass("GradScaler scale(loss) and its backward", s, 4.0 * kFp32Bytes,
                        2 * kElementFlops, 2));
  }
  plan.push_back(Pass("nll_loss backward: zero fill", s, logits * kFp32Bytes));
  plan.push_back(Pass("nll_loss backward", s, s.tokens * (kIndexBytes + kFp32Bytes) + kFp32Bytes,
                      kElementFlops * s.tokens));
  plan.push_back(Pass("log_softmax backward", s, 3 * logits * kFp32Bytes,
                      3 * kElementFlops * logits));
  if (s.autocast) plan.push_back(Cast("logits gradient", logits, kFp32Bytes, s.c, s));
  AppendLinearBackward(LmHead(s), s, &plan);
  AppendLayerNormBackward("ln_f", s, &plan);
  return plan;
}

// One foreach op over the tensors: `depth` lists, `scalar_list` (a scalar
// per tensor), `bytes` per element (each list read or written once).
Kernel Foreach(const std::string& name, const std::vector<int64_t>& tensors, int depth,
               bool scalar_list, int64_t bytes, const Dims& s) {
  double elements = 0;
  for (const int64_t n : tensors) elements += static_cast<double>(n);
  return Pass(name, s, elements * bytes, kElementFlops * elements,
              MultiTensorLaunches(tensors, TorchMultiTensorLimits(depth, scalar_list)));
}

// AdamW's foreach step over FP32 tensors, after GradScaler's unscale_ under
// FP16; with `step_once`, GradScaler's once-a-step work too.
KernelPlan OptimizerStep(const std::vector<int64_t>& tensors, bool step_once, const Dims& s) {
  KernelPlan plan;
  const int64_t b = kFp32Bytes;
  if (s.dtype == FP16) {
    if (step_once) {
      plan.push_back(Pass("GradScaler found_inf and inv_scale", s, 4.0 * b, 3 * kElementFlops, 4));
    }
    plan.push_back(Foreach("GradScaler unscale_ (non-finite check)", tensors, 1, false, 2 * b, s));
  }
  plan.push_back(Foreach("_foreach_mul_(params, 1 - lr·wd)", tensors, 1, false, 2 * b, s));
  plan.push_back(Foreach("_foreach_lerp_(exp_avg, grad)", tensors, 2, false, 3 * b, s));
  plan.push_back(Foreach("_foreach_mul_(exp_avg_sq, beta2)", tensors, 1, false, 2 * b, s));
  plan.push_back(Foreach("_foreach_addcmul_(exp_avg_sq, grad, grad)", tensors, 3, false, 3 * b, s));
  plan.push_back(Foreach("_foreach_sqrt(exp_avg_sq)", tensors, 2, false, 2 * b, s));
  plan.push_back(Foreach("_foreach_div_(denom, bias_correction2_sqrt)", tensors, 1, true, 2 * b, s));
  plan.push_back(Foreach("_foreach_add_(denom, eps)", tensors, 1, false, 2 * b, s));
  plan.push_back(Foreach("_foreach_addcdiv_(params, exp_avg, denom)", tensors, 3, true, 4 * b, s));
  if (s.dtype == FP16 && step_once) {
    plan.push_back(Pass("GradScaler found_inf to host (.item())", s, b));
    plan.push_back(Pass("GradScaler _amp_update_scale_", s, 4.0 * b, 2 * kElementFlops));
  }
  return plan;
}

// The plans of the ops over tokens (gpt_first_order_op.h's PlanTokenOp).
constexpr TokenOpPlans<Dims> kTokenOpPlans = {EmbedForward, AppendBlockForward, HeadForward,
                                              HeadBackward, AppendBlockBackward, EmbedBackward};

}  // namespace

absl::StatusOr<KernelPlan> PyTorchFirstOrderPlan(const ModelSpec& model, const ComputeOp& op,
                                                 DType compute_dtype) {
  if (absl::Status status = CheckGptBlocks(model, "the PyTorch first-order profile");
      !status.ok()) {
    return status;
  }
  if (compute_dtype != FP32 && compute_dtype != FP16 && compute_dtype != BF16) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the compute dtype is %s; PyTorch trains in FP32, or FP16 and BF16 "
                        "under autocast",
                        DType_Name(compute_dtype)));
  }
  const Dims s = DimsOf(model, op, compute_dtype);
  if (IsTokenOp(op.kind())) return PlanTokenOp(model, op, s, kTokenOpPlans);
  switch (op.kind()) {
    case GRAD_ACCUMULATE:
      return KernelPlan{AccumulateGradientShard(s, op)};
    case OPTIMIZER_STEP: {
      if (op.has_master()) {
        return absl::InvalidArgumentError(
            "OPTIMIZER_STEP op with master weights: Megatron's BF16 recipe, not torch.optim "
            "over FP32 parameters");
      }
      absl::StatusOr<std::vector<TensorSpec>> tensors = OptimizerStepTensors(model, op);
      if (!tensors.ok()) return tensors.status();
      return OptimizerStep(TensorElements(*tensors), op.params().part() == HEAD_PART, s);
    }
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "compute kind %s is a ZO kind: the PyTorch first-order profile runs TRAIN_EMBED to "
          "OPTIMIZER_STEP",
          ComputeKind_Name(op.kind())));
  }
}

}  // namespace zosched
