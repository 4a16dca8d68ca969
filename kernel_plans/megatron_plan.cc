#include "kernel_plans/megatron_plan.h"

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

constexpr char kProfile[] = "the Megatron-LM profile";
constexpr char kFusedAttention[] = "TE FusedAttention (cuDNN)";

constexpr int64_t kFp32Bytes = 4;   // main_grad, main parameters, moments, statistics
constexpr int64_t kIndexBytes = 8;  // token ids, targets: int64
constexpr int64_t kMaskBytes = 1;   // the causal mask: bool

// A memory-bound kernel moving `bytes` and doing `flops` over all of its
// `launches` (kernel.h counts them per launch).
Kernel Pass(std::string name, const GptShape& s, double bytes, double flops = 0,
            int64_t launches = 1) {
  return MemoryPass(std::move(name), s.dtype, bytes / launches, flops / launches, launches);
}

// TE's LayerNorm forward (TELayerNormColumnParallelLinear's or TENorm's):
// reads x, weight and bias, writes y and each row's FP32 mean and rstd.
Kernel LayerNormForward(const std::string& name, const GptShape& s) {
  return Pass(absl::StrCat(name, " TE layernorm"), s,
              (2 * s.Th() + 2.0 * s.h) * s.c + 2.0 * s.tokens * kFp32Bytes,
              kLayerNormFlops * s.Th());
}

// TE's layernorm_bwd: one kernel reads dy, x, the statistics and the
// weight, writes dx and per-CTA partial weight and bias gradients; its
// finalize kernel sums the partials into the BF16 weight and bias
// gradients (the partials, a few rows of h, not counted).
void AppendLayerNormBackward(const std::string& name, const GptShape& s, KernelPlan* plan) {
  plan->push_back(Pass(absl::StrCat(name, " TE layernorm backward"), s,
                       3 * s.Th() * s.c + 2.0 * s.tokens * kFp32Bytes + s.h * s.c,
                       kLayerNormFlops * s.Th()));
  plan->push_back(Pass(absl::StrCat(name, " TE layernorm backward: dgamma, dbeta finalize"), s,
                       2.0 * s.h * s.c, 2.0 * s.h));
}

// A TE linear (or ColumnParallelLinear) of `in` to `out` over the op's
// tokens; `bias_in_gemm`: its bias is added in the GEMM's epilogue (and its
// gradient comes out of the wgrad GEMM's), else left to the next fused
// kernel or absent.
struct Linear {
  std::string name;
  int64_t in = 0, out = 0;
  bool bias_in_gemm = false;
};

Kernel LinearForward(const Linear& l, const GptShape& s) {
  Kernel g = Gemm(absl::StrCat(l.name, " GEMM"), s.dtype, s.c, l.out, s.tokens, l.in);
  if (l.bias_in_gemm) g.bytes += static_cast<double>(l.out) * s.c;
  return g;
}

// The dgrad GEMM dX = dY·W, then the wgrad GEMM dW += dYᵀ·X into the FP32
// main_grad (gradient accumulation fusion: C read and written in FP32).
void AppendLinearBackward(const Linear& l, const GptShape& s, KernelPlan* plan) {
  plan->push_back(Gemm(absl::StrCat(l.name, " dgrad GEMM"), s.dtype, s.c, l.in, s.tokens, l.out));
  Kernel w = Gemm(absl::StrCat(l.name, " wgrad GEMM (+= FP32 main_grad)"), s.dtype, s.c, l.in,
                  l.out, s.tokens);
  w.bytes = (static_cast<double>(l.in) * s.tokens + static_cast<double>(s.tokens) * l.out) * s.c +
            2.0 * l.in * l.out * kFp32Bytes;
  if (l.bias_in_gemm) w.bytes += static_cast<double>(l.out) * s.c;
  plan->push_back(w);
}

struct BlockLinears {
  Linear qkv, proj, fc1, fc2;
};

BlockLinears BlockLinearsOf(const GptShape& s) {
  return {Linear{"linear_qkv", s.h, 3 * s.h, true}, Linear{"linear_proj", s.h, s.h, false},
          Linear{"linear_fc1", s.h, s.f, false}, Linear{"linear_fc2", s.f, s.h, false}};
}

// bias_dropout_add_fused_train with p = 0: x + bias + residual in one
// kernel (torch.compile); reads x, the bias and the residual, writes the
// sum.
Kernel BiasDropoutAdd(const std::string& name, const GptShape& s) {
  return Pass(absl::StrCat(name, " bias_dropout_add"), s, (3 * s.Th() + s.h) * s.c,
              2 * kElementFlops * s.Th());
}

// Its backward: x's and the residual's gradients are the output's; the
// bias's is its sum over the tokens.
Kernel BiasDropoutAddBackward(const std::string& name, const GptShape& s) {
  return Pass(absl::StrCat(name, " bias_dropout_add backward: bias gradient (sum)"), s,
              (s.Th() + s.h) * s.c, kElementFlops * s.Th());
}

// A sum of two BF16 gradients of the residual stream (autograd's).
Kernel ResidualGradientSum(const std::string& branch, const GptShape& s) {
  return Pass(absl::StrCat("residual gradient sum (", branch, ")"), s, 3 * s.Th() * s.c,
              kElementFlops * s.Th());
}

// The activation after linear_fc1, whose bias it adds: bias_gelu (one
// compiled kernel), or for ReLU the bias add and F.relu.
void AppendActivationForward(const GptShape& s, KernelPlan* plan) {
  const double bias = static_cast<double>(s.f) * s.c;
  if (!s.relu) {
    plan->push_back(Pass("bias_gelu", s, 2 * s.Tf() * s.c + bias, kActivationFlops * s.Tf()));
    return;
  }
  plan->push_back(Pass("linear_fc1 bias add", s, 2 * s.Tf() * s.c + bias, kElementFlops * s.Tf()));
  plan->push_back(Pass("relu", s, 2 * s.Tf() * s.c, kElementFlops * s.Tf()));
}

// Its backward: bias_gelu_back (reads the gradient, the input and the
// bias) or ReLU's threshold_backward, then the bias gradient, a sum over
// the tokens.
void AppendActivationBackward(const GptShape& s, KernelPlan* plan) {
  const double bias = static_cast<double>(s.f) * s.c;
  if (!s.relu) {
    plan->push_back(
        Pass("bias_gelu backward", s, 3 * s.Tf() * s.c + bias, kActivationFlops * s.Tf()));
  } else {
    plan->push_back(Pass("relu backward", s, 3 * s.Tf() * s.c, kElementFlops * s.Tf()));
  }
  plan->push_back(Pass("linear_fc1 bias gradient (sum over tokens)", s, s.Tf() * s.c + bias,
                       kElementFlops * s.Tf()));
}

// Whether TE's fused masked softmax runs (FusedScaleMaskSoftmax
// .is_kernel_available, attention/dot_product_attention/softmax.py:296-329:
// 16 < keys < 16384, keys a multiple of 8, examples · heads of 4, the rows
// a multiple of the rows a block takes, which a multiple of 8 keys is).
bool FusedSoftmax(const GptShape& s) {
  return s.seq > 16 && s.seq < 16384 && s.seq % 8 == 0 && s.examples * s.heads % 4 == 0;
}

// TE's UnfusedDotProductAttention (--attention-backend unfused,
// attention/dot_product_attention/backends.py:351-760): the causal mask
// built again each call (utils.py get_full_mask: two aranges, their
// difference, the window's two offsets, two comparisons, ~, & and
// logical_not over [s, s]), scores by baddbmm with α = 1/√d (q and k are
// views of the qkv output), the masked softmax (BF16 in and out; where
// TE's kernel does not run, PyTorch's: the masks' logical_or, .float(),
// masked_fill_, softmax, .bfloat16()), att @ v by bmm, and the context
// back to [s, b, h] (permute(2, 0, 1, 3).contiguous(): a copy).
void AppendUnfusedAttentionForward(const GptShape& s, KernelPlan* plan) {
  const double S = s.Scores(), square = static_cast<double>(s.seq) * s.seq;
  const int64_t bh = s.examples * s.heads;
  plan->push_back(Pass("causal mask (get_full_mask)", s, 37 * square, 8 * square, 10));
  plan->push_back(Gemm("baddbmm q @ kᵀ · 1/√d", s.dtype, s.c, s.seq, s.seq, s.d, bh));
  if (FusedSoftmax(s)) {
    plan->push_back(Pass("scaled_masked_softmax (TE)", s, 2 * S * s.c + square * kMaskBytes,
                         kSoftmaxFlops * S));
  } else {
    plan->push_back(Pass("masks logical_or", s, 3 * square * kMaskBytes, square));
    plan->push_back(Pass("scores .float()", s, S * (s.c + kFp32Bytes), kElementFlops * S));
    plan->push_back(Pass("masked_fill_(causal mask)", s, 2 * S * kFp32Bytes + square * kMaskBytes,
                         kElementFlops * S));
    plan->push_back(Pass("softmax", s, 2 * S * kFp32Bytes, kSoftmaxFlops * S));
    plan->push_back(
        Pass("probabilities .bfloat16()", s, S * (kFp32Bytes + s.c), kElementFlops * S));
  }
  plan->push_back(Gemm("bmm att @ v", s.dtype, s.c, s.d, s.seq, s.seq, bh));
  plan->push_back(Pass("context permute(2, 0, 1, 3).contiguous()", s, 2 * s.Th() * s.c));
}

// Its backward: bmm's (dP = dO @ vᵀ, dV = Pᵀ @ dO), the softmax's, baddbmm's
// (dQ = dS @ k · α, dK = dSᵀ @ q · α), and SplitAlongDim's backward, which
// concatenates the three gradients into the qkv layout (they are separate
// tensors here; TE's utils.py SplitAlongDim.backward).
void AppendUnfusedAttentionBackward(const GptShape& s, KernelPlan* plan) {
  const double S = s.Scores(), square = static_cast<double>(s.seq) * s.seq;
  const int64_t bh = s.examples * s.heads;
  plan->push_back(Gemm("dP = dO @ vᵀ (bmm backward)", s.dtype, s.c, s.seq, s.seq, s.d, bh));
  plan->push_back(Gemm("dV = Pᵀ @ dO (bmm backward)", s.dtype, s.c, s.d, s.seq, s.seq, bh));
  if (FusedSoftmax(s)) {
    plan->push_back(Pass("scaled_masked_softmax backward (TE)", s, 3 * S * s.c,
                         3 * kElementFlops * S));
  } else {
    plan->push_back(Pass("probabilities .bfloat16() backward", s, S * (s.c + kFp32Bytes),
                         kElementFlops * S));
    plan->push_back(Pass("softmax backward", s, 3 * S * kFp32Bytes, 3 * kElementFlops * S));
    plan->push_back(Pass("masked_fill_ backward", s, 2 * S * kFp32Bytes + square * kMaskBytes,
                         kElementFlops * S));
    plan->push_back(Pass("scores .float() backward", s, S * (kFp32Bytes + s.c), kElementFlops * S));
  }
  plan->push_back(
      Gemm("dQ = dS @ k · 1/√d (baddbmm backward)", s.dtype, s.c, s.d, s.seq, s.seq, bh));
  plan->push_back(
      Gemm("dK = dSᵀ @ q · 1/√d (baddbmm backward)", s.dtype, s.c, s.d, s.seq, s.seq, bh));
  plan->push_back(Pass("cat q, k, v gradients (SplitAlongDim backward)", s, 2 * 3 * s.Th() * s.c,
                       kElementFlops * 3 * s.Th()));
}

// TransformerLayer.forward.
void AppendBlockForward(const GptShape& s, bool fused, KernelPlan* plan) {
  const BlockLinears l = BlockLinearsOf(s);
  plan->push_back(LayerNormForward(l.qkv.name, s));
  plan->push_back(LinearForward(l.qkv, s));
  if (fused) {
    plan->push_back(FusedAttentionForward(kFusedAttention, s));
  } else {
    AppendUnfusedAttentionForward(s, plan);
  }
  plan->push_back(LinearForward(l.proj, s));
  plan->push_back(BiasDropoutAdd("self_attn_bda", s));
  plan->push_back(LayerNormForward(l.fc1.name, s));
  plan->push_back(LinearForward(l.fc1, s));
  AppendActivationForward(s, plan);
  plan->push_back(LinearForward(l.fc2, s));
  plan->push_back(BiasDropoutAdd("mlp_bda", s));
}

// The layer's backward, optionally recomputing its forward first; TE's
// FusedAttention writes dq, dk and dv into one qkv-shaped buffer, so its
// SplitAlongDim backward is a view.
void AppendBlockBackward(const GptShape& s, bool fused, bool recompute, KernelPlan* plan) {
  if (recompute) AppendBlockForward(s, fused, plan);
  const BlockLinears l = BlockLinearsOf(s);
  plan->push_back(BiasDropoutAddBackward("mlp_bda", s));
  AppendLinearBackward(l.fc2, s, plan);
  AppendActivationBackward(s, plan);
  AppendLinearBackward(l.fc1, s, plan);
  AppendLayerNormBackward(l.fc1.name, s, plan);
  plan->push_back(ResidualGradientSum("mlp", s));
  plan->push_back(BiasDropoutAddBackward("self_attn_bda", s));
  AppendLinearBackward(l.proj, s, plan);
  if (fused) {
    AppendFusedAttentionBackward(kFusedAttention, s, plan);
  } else {
    AppendUnfusedAttentionBackward(s, plan);
  }
  AppendLinearBackward(l.qkv, s, plan);
  AppendLayerNormBackward(l.qkv.name, s, plan);
  plan->push_back(ResidualGradientSum("attention", s));
  // The DDP hooks of the two norms' weights and biases and the four
  // projections' biases: main_grad += grad, reading both (FP32 and BF16),
  // writing FP32.
  const double vectors = 9.0 * s.h + s.f;
  plan->push_back(Pass("DDP hooks: main_grad.add_(grad) of the norms and biases", s,
                       vectors * (2 * kFp32Bytes + s.c), kElementFlops * vectors, 8));
}

// F.embedding of the tokens and of the position ids (both [b, s]), their
// sum, and the [b, s, h] to [s, b, h] transpose (a copy when b > 1).
KernelPlan EmbedForward(const GptShape& s) {
  const double lookup = s.tokens * kIndexBytes + 2 * s.Th() * s.c;
  KernelPlan plan = {Pass("word_embeddings (F.embedding)", s, lookup),
                     Pass("position_embeddings (F.embedding)", s, lookup),
                     Pass("add word and position embeddings", s, 3 * s.Th() * s.c,
                          kElementFlops * s.Th())};
  if (s.examples > 1) {
    plan.push_back(Pass("embeddings transpose(0, 1).contiguous()", s, 2 * s.Th() * s.c));
  }
  return plan;
}

// Both tables' backward into BF16 gradients, for a tied token table
// autograd's sum of its two gradients (the head's zeroed dummy and this
// one), then the DDP hooks' main_grad.add_(grad) of both tables.
KernelPlan EmbedBackward(const GptShape& s) {
  KernelPlan plan;
  if (s.examples > 1) {
    plan.push_back(
        Pass("embedding gradient .contiguous() (word, position)", s, 2 * 2 * s.Th() * s.c, 0, 2));
  }
  AppendEmbeddingBackward("position_embeddings", s.tokens, s.positions, s.h, s.c, s.dtype, &plan);
  AppendEmbeddingBackward("word_embeddings", s.tokens, s.vocab, s.h, s.c, s.dtype, &plan);
  const double table = static_cast<double>(s.vocab) * s.h;
  if (s.tied) {
    plan.push_back(Pass("word_embeddings gradient sum (output layer's dummy + embedding)", s,
                        3 * table * s.c, kElementFlops * table));
  }
  const double tables = table + static_cast<double>(s.positions) * s.h;
  plan.push_back(Pass("DDP hooks: main_grad.add_(grad) of the two tables", s,
                      tables * (2 * kFp32Bytes + s.c), kElementFlops * tables, 2));
  return plan;
}

Linear OutputLayer(const GptShape& s) { return Linear{"output_layer", s.h, s.vocab, false}; }

// The final norm, the logits, vocab_parallel_cross_entropy on the FP32
// logits (.float(); max; -= max; the target's logit; exp in place; sum;
// log(sum) - target logit; /= sum, the softmax kept for backward), and the
// loss's bookkeeping.
KernelPlan HeadForward(const GptShape& s) {
  // The small kernels (U: counted from the sources in the header; each
  // moves a few vectors of T elements): cross-entropy's target mask (lt,
  // ge, or), masked target (clone, sub, its masked fill), arange, the
  // gather of the target logits, its clone and masked fill; loss_func's
  // losses · mask, sum, mask sum, the count's clone and cast, the loss's
  // clone, the report's cat, isnan and isinf each with an .item(), and
  // forward_step's clamp and two divisions.
  constexpr int64_t kTargetLaunches = 10;
  constexpr int64_t kLossFuncLaunches = 14;
  const double logits = static_cast<double>(s.tokens) * s.vocab;
  const double rows = static_cast<double>(s.tokens) * kFp32Bytes;
  const int64_t transposes = s.examples > 1 ? 2 : 0;  // labels' and loss's [b, s] <-> [s, b]
  KernelPlan plan;
  plan.push_back(LayerNormForward("final_layernorm", s));
  plan.push_back(LinearForward(OutputLayer(s), s));
  plan.push_back(Pass("cross_entropy logits .float()", s, logits * (s.c + kFp32Bytes),
                      kElementFlops * logits));
  plan.push_back(Pass("cross_entropy max over the vocabulary", s,
                      logits * kFp32Bytes + s.tokens * (kFp32Bytes + kIndexBytes),
                      kElementFlops * logits));
  plan.push_back(Pass("cross_entropy logits -= max", s, 2 * logits * kFp32Bytes + rows,
                      kElementFlops * logits));
  plan.push_back(Pass("cross_entropy target mask and target logit (small)", s,
                      kTargetLaunches * 2.0 * s.tokens * kIndexBytes, 0, kTargetLaunches));
  plan.push_back(Pass("cross_entropy exp (in place)", s, 2 * logits * kFp32Bytes,
                      kElementFlops * logits));
  plan.push_back(Pass("cross_entropy sum over the vocabulary", s, logits * kFp32Bytes + rows,
                      kElementFlops * logits));
  plan.push_back(Pass("cross_entropy log(sum) - target logit", s, 5 * rows, 2 * s.tokens, 2));
  plan.push_back(Pass("cross_entropy exp /= sum (softmax)", s, 2 * logits * kFp32Bytes + rows,
                      kElementFlops * logits));
  plan.push_back(Pass("loss_func and forward_step bookkeeping (small)", s,
                      (kLossFuncLaunches + transposes) * 2.0 * rows, 0,
                      kLossFuncLaunches + transposes));
  return plan;
}

// The loss's backward to the logits (the small kernels of the loss and of
// cross-entropy's target entries; softmax · the loss gradient; the cast to
// BF16 of the .float()'s gradient), the output layer's (for a tied weight
// its zero-filled dummy gradient), the final norm's and its two hooks.
KernelPlan HeadBackward(const GptShape& s) {
  // The small kernels (U, as HeadForward's): backward_step's loss scale and
  // ones, the backward of the scale, the two divisions and the mask;
  // cross-entropy's 1 - mask (cast, rsub), arange and the targets' gather,
  // subtraction and index_put_.
  constexpr int64_t kLossLaunches = 6;
  constexpr int64_t kTargetLaunches = 6;
  const double logits = static_cast<double>(s.tokens) * s.vocab;
  const double rows = static_cast<double>(s.tokens) * kFp32Bytes;
  KernelPlan plan;
  plan.push_back(Pass("loss backward: scale, ones, divisions, mask (small)", s,
                      kLossLaunches * 2.0 * rows, 0, kLossLaunches));
  plan.push_back(Pass("cross_entropy backward: target entries (small)", s,
                      kTargetLaunches * 2.0 * s.tokens * kIndexBytes, 0, kTargetLaunches));
  plan.push_back(Pass("cross_entropy backward: softmax ·= loss gradient", s,
                      2 * logits * kFp32Bytes + rows, kElementFlops * logits));
  plan.push_back(Pass("logits gradient to BF16 (.float()'s backward)", s,
                      logits * (kFp32Bytes + s.c), kElementFlops * logits));
  AppendLinearBackward(OutputLayer(s), s, &plan);
  if (s.tied) {
    plan.push_back(Pass("output_layer dummy wgrad zero fill (tied weight)", s,
                        static_cast<double>(s.vocab) * s.h * s.c));
  }
  AppendLayerNormBackward("final_layernorm", s, &plan);
  plan.push_back(Pass("DDP hooks: main_grad.add_(grad) of the final norm", s,
                      2.0 * s.h * (2 * kFp32Bytes + s.c), 2.0 * s.h, 2));
  return plan;
}

// The plans of the ops over tokens (gpt_first_order_op.h's PlanTokenOp).
constexpr TokenOpPlans<GptShape> kTokenOpPlans = {EmbedForward, AppendBlockForward, HeadForward,
                                                  HeadBackward, AppendBlockBackward, EmbedBackward};

// One multi-tensor pass (apex's and TE's limits) over `tensors`, moving
// `bytes` an element.
Kernel MultiTensorPass(const std::string& name, const std::vector<int64_t>& tensors, int depth,
                       int64_t bytes, const GptShape& s) {
  double elements = 0;
  for (const int64_t n : tensors) elements += static_cast<double>(n);
  return Pass(name, s, elements * bytes, kElementFlops * elements,
              MultiTensorLaunches(tensors, ApexMultiTensorLimits(depth)));
}

// The optimizer's work on `tensors` (FP32 main parameters, their FP32
// main_grad, moments): see the header's OPTIMIZER_STEP.
KernelPlan OptimizerStep(const std::vector<TensorSpec>& tensors, bool step_once,
                         const GptShape& s) {
  // The step's scalars (U, counted from the sources in the header):
  // check_grads' isnan and isinf, each with an .item(); get_grad_norm_fp32's
  // two zeros, the l2norm's zeroed output and cleanup kernel, the square
  // and the square root; the clip coefficient's add, division and clamp
  // and its zeroed overflow flag.
  constexpr int64_t kScalarLaunches = 14;
  std::vector<int64_t> all, decayed, not_decayed;
  for (const TensorSpec& t : tensors) {
    all.push_back(t.elements());
    (t.weight_decay() ? decayed : not_decayed).push_back(t.elements());
  }
  double n = 0;
  for (const int64_t e : all) n += static_cast<double>(e);
  const int64_t b = kFp32Bytes;
  KernelPlan plan;
  plan.push_back(Pass("DDP check_grads: norm of main_grad", s, n * b, 2 * kElementFlops * n));
  plan.push_back(MultiTensorPass("clip_grad_norm: multi_tensor_l2norm", all, 1, b, s));
  if (step_once) {
    plan.push_back(Pass("grad norm, NaN/Inf checks (.item()) and clip coefficient (small)", s,
                        kScalarLaunches * 2.0 * b, 0, kScalarLaunches));
  }
  plan.push_back(MultiTensorPass("clip_grad_norm: multi_tensor_scale_tensor", all, 2, 2 * b, s));
  for (const std::vector<int64_t>* group : {&decayed, &not_decayed}) {
    if (group->empty()) continue;
    plan.push_back(MultiTensorPass(
        group == &decayed ? "FusedAdam multi_tensor_adam (weight decay)"
                          : "FusedAdam multi_tensor_adam (no weight decay)",
        *group, 4, 7 * b, s));
  }
  plan.push_back(
      MultiTensorPass("copy main params to BF16 params (multi_tensor_scale)", all, 2, b + s.c, s));
  plan.push_back(Pass("zero_grad_buffer: main_grad.zero_()", s, n * b));
  return plan;
}

}  // namespace

absl::StatusOr<KernelPlan> MegatronPlan(const ModelSpec& model, const ComputeOp& op,
                                        DType compute_dtype) {
  if (absl::Status status = CheckGptBlocks(model, kProfile); !status.ok()) return status;
  if (compute_dtype != BF16) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the compute dtype is %s; %s trains BF16 (--bf16: precision BF16_FP32_GRADS)",
        DType_Name(compute_dtype), kProfile));
  }
  const GptShape s = GptShapeOf(model, op, compute_dtype);
  if (IsTokenOp(op.kind())) return PlanTokenOp(model, op, s, kTokenOpPlans);
  if (op.kind() == GRAD_ACCUMULATE) return KernelPlan{AccumulateGradientShard(s, op)};
  if (op.kind() != OPTIMIZER_STEP) {
    return absl::InvalidArgumentError(
        absl::StrFormat("compute kind %s is a ZO kind: %s runs TRAIN_EMBED to OPTIMIZER_STEP",
                        ComputeKind_Name(op.kind()), kProfile));
  }
  if (!op.has_master()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "OPTIMIZER_STEP op without master weights: PyTorch AMP's recipe (AMP_FP32_MASTER, "
        "profile pytorch_first_order), not %s's BF16 one with FP32 main parameters",
        kProfile));
  }
  absl::StatusOr<std::vector<TensorSpec>> tensors = OptimizerStepTensors(model, op);
  if (!tensors.ok()) return tensors.status();
  return OptimizerStep(*tensors, op.params().part() == HEAD_PART, s);
}

}  // namespace zosched
