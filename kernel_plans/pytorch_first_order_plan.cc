#include "kernel_plans/pytorch_first_order_plan.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "models/model_tensors.h"
#include "kernel_plans/op_shape.h"

namespace zosched {
namespace {

constexpr int64_t kFp32Bytes = 4;   // parameters, gradients, moments, autocast's FP32 outputs
constexpr int64_t kIndexBytes = 8;  // token ids, positions, targets: int64
constexpr int64_t kMaskBytes = 1;   // the causal mask: bool

// FLOPs per element of the non-GEMM kernels, from the formulas they
// evaluate (informative: these kernels are costed by their bytes).
constexpr double kElementFlops = 1;     // adds, scales, fills, casts
constexpr double kLayerNormFlops = 8;   // mean, variance, (x - mean)·rstd·w + b
constexpr double kActivationFlops = 8;  // tanh-GELU 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
constexpr double kSoftmaxFlops = 5;     // max, subtract, exp, sum, divide

// embedding_dense_backward_cuda (Embedding.cu): up to this many indices a
// zero-filled table and one kernel, more the sorted path.
constexpr int64_t kEmbeddingDirectIndices = 3072;
// The sorted path's launches (U: counted from Embedding.cu and
// EmbeddingBackwardKernel.cu, CUB's internals assumed): arange, then CUB's
// radix sort of the 64-bit indices (histogram, exclusive sum, 8 one-sweep
// passes of 8 bits); then the table's zero fill, unique-by-key (2),
// partials per segment, an exclusive scan (2), partial segment offsets,
// the number of partial segments, compute_grad_weight and sum_and_scatter.
constexpr int64_t kEmbeddingSortLaunches = 11;
constexpr int64_t kEmbeddingSortPasses = 8;
constexpr int64_t kEmbeddingSegmentLaunches = 9;

// multi_tensor_apply (MultiTensorApply.cuh, 32 KB kernel arguments).
constexpr int64_t kMultiTensorChunk = 65536;
constexpr int64_t kMultiTensorMaxBlocks = 2240;
// The depth's tensor limit: [depth - 1], for lists with one scalar, and
// with a scalar per tensor.
constexpr int64_t kMultiTensorMaxTensors[5] = {770, 448, 336, 252, 210};
constexpr int64_t kMultiTensorMaxTensorsScalarList[5] = {672, 448, 336, 252, 210};

// The dimensions of one op, in elements; c = bytes per element of the
// compute dtype.
struct Dims : OpShape {
  bool autocast = false;  // FP16 or BF16 under torch.autocast; FP32: off
  int64_t d = 0;                              // head width
  int64_t vocab = 0, positions = 0;           // rows of wte and wpe
  bool tied = false;                          // lm_head is wte
  bool relu = false;                          // nn.ReLU, else tanh-GELU
  double Th() const { return static_cast<double>(tokens) * h; }
  double Tf() const { return static_cast<double>(tokens) * f; }
  // Elements of the attention scores of the op's examples.
  double Scores() const { return static_cast<double>(examples) * heads * seq * seq; }
};

Dims DimsOf(const ModelSpec& model, const ComputeOp& op, DType dtype) {
  Dims s;
  static_cast<OpShape&>(s) = ShapeOf(model, op, dtype);
  s.autocast = dtype != FP32;
  s.d = s.h / s.heads;
  s.vocab = model.vocab_size();
  s.positions = (EmbeddingParams(model) - s.vocab * s.h) / s.h;
  s.tied = model.tied_lm_head();
  s.relu = model.activation() == RELU;
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

// The fused kernel SDPA runs: FlashAttention-2 for FP16/BF16 (PyTorch's
// flash_fwd_launch_template.h and flash_bwd_launch_template.h on sm80+:
// forward 128 query rows by 128 keys up to width 64, by 64 above;
// backward 128 by 128 up to width 64, 64 by 128 above), the
// memory-efficient kernel for FP32 (U: its forward 64 by 64 up to width 64,
// 64 by 128 above, its backward 64 by 64). Its MMAs run at the head width
// rounded up to a multiple of 32 (FA2's hdim32/64/96/128 kernels).
struct AttentionTiles {
  int64_t rows = 0, keys = 0;
};

int64_t Width(const Dims& s) { return (s.d + 31) / 32 * 32; }

AttentionTiles ForwardTiles(const Dims& s) {
  if (s.dtype == FP32) return {64, s.d <= 64 ? 64 : 128};
  return {128, Width(s) <= 64 ? 128 : 64};
}

AttentionTiles BackwardTiles(const Dims& s) {
  if (s.dtype == FP32) return {64, 64};
  return Width(s) <= 64 ? AttentionTiles{128, 128} : AttentionTiles{64, 128};
}

// The fused kernel's tile arithmetic as one GEMM per (example, head):
// query tile i (rows i·R .. (i + 1)·R - 1) visits key tiles up to
// ⌈min(seq, (i + 1)·R) / K⌉, the tiles above the diagonal skipped; m = R,
// n = K · (the key tiles all its query tiles visit), k = `products` ·
// width (the forward's Q·Kᵀ and P·V: 2; the backward's Q·Kᵀ again, dO·Vᵀ,
// Pᵀ·dO, dS·K and dSᵀ·Q: 5). Bytes are the caller's.
Kernel FusedAttentionTiles(std::string name, AttentionTiles t, int64_t products, const Dims& s) {
  const int64_t query_tiles = (s.seq + t.rows - 1) / t.rows;
  int64_t visited = 0;
  for (int64_t i = 0; i < query_tiles; ++i) {
    visited += (std::min(s.seq, (i + 1) * t.rows) + t.keys - 1) / t.keys;
  }
  return Gemm(std::move(name), s.dtype, s.c, t.rows, t.keys * visited, products * Width(s),
              s.examples * s.heads);
}

const char* FusedName(const Dims& s) {
  return s.dtype == FP32 ? "SDPA memory-efficient attention" : "SDPA FlashAttention-2";
}

// Forward: one kernel; reads q, k, v, writes the context and the FP32
// log-sum-exp of each (example, head, row).
void AppendFusedAttentionForward(const Dims& s, KernelPlan* plan) {
  Kernel k = FusedAttentionTiles(absl::StrCat(FusedName(s), " forward (causal)"),
                                 ForwardTiles(s), 2, s);
  k.bytes = 4 * s.Th() * s.c + static_cast<double>(s.tokens) * s.heads * kFp32Bytes;
  plan->push_back(k);
}

// Backward: rowsum(dO·O) into D (FA2's dot_do_o also clears the FP32 dQ
// accumulator), the dQ/dK/dV kernel (reads q, k, v, dO, the log-sum-exp
// and D; writes dK, dV; accumulates dQ in FP32), and FA2's conversion of
// dQ to the compute dtype (the FP32 kernel writes dQ directly).
void AppendFusedAttentionBackward(const Dims& s, KernelPlan* plan) {
  const double rows = static_cast<double>(s.tokens) * s.heads * kFp32Bytes;
  const double accumulator = s.dtype == FP32 ? 0 : s.Th() * kFp32Bytes;
  plan->push_back(Pass(absl::StrCat(FusedName(s), " backward: rowsum(dO·O)"), s,
                       2 * s.Th() * s.c + rows + accumulator, 2 * kElementFlops * s.Th()));
  Kernel k = FusedAttentionTiles(absl::StrCat(FusedName(s), " backward: dQ, dK, dV (causal)"),
                                 BackwardTiles(s), 5, s);
  k.bytes = 6 * s.Th() * s.c + 2 * rows + (s.dtype == FP32 ? s.Th() * s.c : 2 * accumulator);
  plan->push_back(k);
  if (s.dtype != FP32) plan->push_back(Cast("dQ accumulator", s.Th(), kFp32Bytes, s.c, s));
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
    AppendFusedAttentionForward(s, plan);
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
    AppendFusedAttentionBackward(s, plan);
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
// `rows` (FP32): the table zero-filled, then one kernel (up to 3,072
// indices) or the sorted path.
void AppendEmbeddingBackward(const std::string& table, int64_t indices, int64_t rows,
                             const Dims& s, KernelPlan* plan) {
  const double gradient_rows = static_cast<double>(indices) * s.h * kFp32Bytes;
  plan->push_back(Pass(table + " gradient zero fill", s, static_cast<double>(rows) * s.h * kFp32Bytes));
  if (indices <= kEmbeddingDirectIndices) {
    plan->push_back(Pass(table + " embedding backward (feature kernel)", s,
                         indices * kIndexBytes + 2 * gradient_rows,
                         kElementFlops * indices * s.h));
    return;
  }
  plan->push_back(Pass(table + " indices sort (arange, CUB radix sort)", s,
                       (1 + 2 * kEmbeddingSortPasses) * 2.0 * indices * kIndexBytes, 0,
                       kEmbeddingSortLaunches));
  plan->push_back(Pass(table + " embedding backward (segment sums, scatter)", s,
                       2 * gradient_rows + 2.0 * indices * kIndexBytes,
                       kElementFlops * indices * s.h, kEmbeddingSegmentLaunches));
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

// Launches of one foreach op of `depth` tensor lists over tensors of
// `elements` (multi_tensor_apply's chunking).
int64_t MultiTensorLaunches(const std::vector<int64_t>& elements, int64_t max_tensors) {
  int64_t launches = 0, blocks = 0, listed = 0;
  for (const int64_t n : elements) {
    if (n == 0) continue;
    ++listed;
    const int64_t chunks = (n + kMultiTensorChunk - 1) / kMultiTensorChunk;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      ++blocks;
      const bool last_chunk = chunk == chunks - 1;
      if ((listed == max_tensors && last_chunk) || blocks == kMultiTensorMaxBlocks) {
        ++launches;
        blocks = 0;
        listed = last_chunk ? 0 : 1;
      }
    }
  }
  return launches + (blocks > 0 ? 1 : 0);
}

// One foreach op over the tensors: `depth` lists, `scalar_list` (a scalar
// per tensor), `bytes` per element (each list read or written once).
Kernel Foreach(const std::string& name, const std::vector<int64_t>& tensors, int depth,
               bool scalar_list, int64_t bytes, const Dims& s) {
  double elements = 0;
  for (const int64_t n : tensors) elements += static_cast<double>(n);
  const int64_t max_tensors = (scalar_list ? kMultiTensorMaxTensorsScalarList
                                           : kMultiTensorMaxTensors)[depth - 1];
  return Pass(name, s, elements * bytes, kElementFlops * elements,
              MultiTensorLaunches(tensors, max_tensors));
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

std::vector<int64_t> TensorElements(const std::vector<TensorSpec>& tensors) {
  std::vector<int64_t> elements;
  for (const TensorSpec& t : tensors) elements.push_back(t.elements());
  return elements;
}

// The tensors torch.optim steps for an OPTIMIZER_STEP: the part's parameter
// tensors when the range is the whole part, else one flat shard.
absl::StatusOr<std::vector<int64_t>> OptimizerTensors(const ModelSpec& model,
                                                      const ComputeOp& op) {
  std::vector<int64_t> part;
  switch (op.params().part()) {
    case EMBEDDING_PART:
      part = TensorElements(EmbeddingTensors(model));
      break;
    case DECODER_BLOCK:
      part = TensorElements(BlockTensors(model, 0));
      break;
    case HEAD_PART:
      part = TensorElements(FinalNormTensors(model));
      for (const int64_t n : TensorElements(HeadTensors(model))) part.push_back(n);
      break;
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "OPTIMIZER_STEP op: params.part %s is not a part", Part_Name(op.params().part())));
  }
  int64_t whole = 0;
  for (const int64_t n : part) whole += n;
  const int64_t first = op.params().first_element(), elements = op.params().elements();
  if (first < 0 || elements < 1 || first + elements > whole) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "OPTIMIZER_STEP op: elements [%d, +%d) outside %s's %d", first, elements,
        Part_Name(op.params().part()), whole));
  }
  if (elements == whole) return part;
  return std::vector<int64_t>{elements};
}

absl::Status CheckModel(const ModelSpec& model) {
  auto refuse = [&model](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "model '%s' (%s) %s; the PyTorch first-order profile runs GPT-2 blocks (pre-norm "
        "LayerNorm, biased projections, GELU or ReLU, learned positions) at GPT-2's and OPT's "
        "sizes",
        model.name(), Family_Name(model.family()), what));
  };
  if (model.family() != GPT2 && model.family() != OPT) return refuse("is of another family");
  if (model.norm() != LAYER_NORM || model.norm_placement() != PRE_NORM || !model.final_norm()) {
    return refuse("is not pre-norm LayerNorm with a final norm");
  }
  if (!model.linear_bias()) return refuse("has projections without biases");
  if (model.activation() != GELU && model.activation() != RELU) {
    return refuse(absl::StrCat("has activation ", Activation_Name(model.activation())));
  }
  if (model.positional() != LEARNED && model.positional() != LEARNED_OPT_OFFSET) {
    return refuse("has no learned position table");
  }
  if (model.word_embed_proj_dim() != 0 && model.word_embed_proj_dim() != model.hidden_size()) {
    return refuse("projects its embeddings (project_in, project_out)");
  }
  if (model.num_heads() < 1 || model.hidden_size() % model.num_heads() != 0 ||
      (model.num_kv_heads() != 0 && model.num_kv_heads() != model.num_heads()) ||
      (model.head_dim() != 0 && model.head_dim() != model.hidden_size() / model.num_heads())) {
    return refuse("has heads other than hidden_size / num_heads wide, one key and value each");
  }
  if (model.hidden_size() / model.num_heads() > 128) {
    return refuse("has heads over 128 wide (the attention kernels' tiles are known up to 128)");
  }
  return absl::OkStatus();
}

absl::Status CheckTokens(const ModelSpec& model, const ComputeOp& op) {
  if (op.examples() < 1 || op.seq_len() < 1 || op.seq_len() > model.max_positions()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s op: examples %d must be >= 1 and seq_len %d in [1, %d] (the position table)",
        ComputeKind_Name(op.kind()), op.examples(), op.seq_len(), model.max_positions()));
  }
  return absl::OkStatus();
}

// Which attention the lowering's flash_attention chose, read off the bytes
// it sized the op's saved range with (BlockSavedBytes,
// schedule/first_order_model.h, for the blocks CheckModel admits): 18sbh +
// 4sbf kept by every block, 5·a·s²·b more for the scores without
// flash_attention, 2sbh under recompute. A recomputing backward's workspace
// holds the full amount.
absl::StatusOr<bool> FusedAttention(const ModelSpec& model, const ComputeOp& op) {
  const int64_t sb = static_cast<int64_t>(op.seq_len()) * op.examples();
  const int64_t kept = sb * (18 * model.hidden_size() + 4 * model.ffn_size());
  const int64_t scores = 5 * model.num_heads() * op.seq_len() * sb;
  const bool recompute = op.kind() == BLOCK_BACKWARD && op.recompute();
  const int64_t bytes = recompute ? op.workspace().size_bytes() : op.saved().size_bytes();
  if (bytes == kept) return true;
  if (bytes == kept + scores) return false;
  if (!recompute && bytes == 2 * sb * model.hidden_size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s op of a recomputing schedule: its saved range (%d bytes, the block's input) does "
        "not say whether the attention is fused",
        ComputeKind_Name(op.kind()), bytes));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s op: its %s range is %d bytes, neither a fused attention's %d nor one keeping its "
      "scores %d",
      ComputeKind_Name(op.kind()), recompute ? "workspace" : "saved", bytes, kept,
      kept + scores));
}

}  // namespace

absl::StatusOr<KernelPlan> PyTorchFirstOrderPlan(const ModelSpec& model, const ComputeOp& op,
                                                 DType compute_dtype) {
  if (absl::Status status = CheckModel(model); !status.ok()) return status;
  if (compute_dtype != FP32 && compute_dtype != FP16 && compute_dtype != BF16) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the compute dtype is %s; PyTorch trains in FP32, or FP16 and BF16 "
                        "under autocast",
                        DType_Name(compute_dtype)));
  }
  const Dims s = DimsOf(model, op, compute_dtype);
  switch (op.kind()) {
    case TRAIN_EMBED:
    case TRAIN_BLOCK_FORWARD:
    case TRAIN_HEAD_LOSS:
    case HEAD_BACKWARD:
    case BLOCK_BACKWARD:
    case EMBED_BACKWARD: {
      if (absl::Status status = CheckTokens(model, op); !status.ok()) return status;
      if (op.kind() == TRAIN_EMBED) return EmbedForward(s);
      if (op.kind() == TRAIN_HEAD_LOSS) return HeadForward(s);
      if (op.kind() == HEAD_BACKWARD) return HeadBackward(s);
      if (op.kind() == EMBED_BACKWARD) return EmbedBackward(s);
      absl::StatusOr<bool> fused = FusedAttention(model, op);
      if (!fused.ok()) return fused.status();
      KernelPlan plan;
      if (op.kind() == TRAIN_BLOCK_FORWARD) {
        AppendBlockForward(s, *fused, &plan);
      } else {
        AppendBlockBackward(s, *fused, op.recompute(), &plan);
      }
      return plan;
    }
    case GRAD_ACCUMULATE: {
      // FSDP's accumulated_grad += sharded_grad: reads both, writes one.
      const double n = static_cast<double>(op.params().elements());
      return KernelPlan{Elementwise("accumulate gradient shard (+=)", n, 2 * kFp32Bytes,
                                    kFp32Bytes, s)};
    }
    case OPTIMIZER_STEP: {
      if (op.has_master()) {
        return absl::InvalidArgumentError(
            "OPTIMIZER_STEP op with master weights: Megatron's BF16 recipe, not torch.optim "
            "over FP32 parameters");
      }
      absl::StatusOr<std::vector<int64_t>> tensors = OptimizerTensors(model, op);
      if (!tensors.ok()) return tensors.status();
      return OptimizerStep(*tensors, op.params().part() == HEAD_PART, s);
    }
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "compute kind %s is a ZO kind: the PyTorch first-order profile runs TRAIN_EMBED to "
          "OPTIMIZER_STEP",
          ComputeKind_Name(op.kind())));
  }
}

}  // namespace zosched
