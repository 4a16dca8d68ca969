#include "kernel_plans/pytorch_zo_plan.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "schedule/compute_op_model.h"
#include "kernel_plans/op_shape.h"

namespace zosched {
namespace {

// ZO2's nanoGPT vocabulary: GPTConfig.vocab_size, which every config keeps
// (model.py:21): the rows of wte and of lm_head.
constexpr int64_t kVocab = 50304;

constexpr int64_t kIndexBytes = 8;  // token ids, positions, targets: int64
constexpr int64_t kStatBytes = 4;   // LayerNorm mean and rstd, log-sum-exp: fp32

// FLOPs per element of the elementwise and row-wise kernels, from the
// formulas they evaluate.
constexpr double kElementFlops = 1;     // s·z, ·ε, g·z, add_, sub_, the adds
constexpr double kLayerNormFlops = 8;   // mean: +; variance: -, ·, +; (x - mean)·rstd·w + b
constexpr double kGeluErfFlops = 5;     // 0.5·x·(1 + erf(x/√2)), erf as one
constexpr double kLogSoftmaxFlops = 4;  // per logit: max, subtract, exp, sum

// The dimensions of one op, in elements; c = bytes per element of the
// compute dtype.
struct Dims : OpShape {
  int64_t d = 0;                              // n_embd / n_head
  int64_t positions = 0;                      // block_size: wpe's rows
};

Dims DimsOf(const ModelSpec& model, const ComputeOp& op, DType dtype) {
  Dims s;
  static_cast<OpShape&>(s) = ShapeOf(model, op, dtype);
  s.d = s.h / s.heads;
  s.positions = model.max_positions();
  return s;
}

// A parameter tensor as ZO2's passes see it: one torch op per pass each.
struct ParamTensor {
  std::string name;
  int64_t elements = 0;
  // zo_update's form (zo.py:80-88): θ -= lr·(g·z + wd·θ), else θ -= (lr·g)·z.
  bool decayed = false;
};

// zo_update's rule (zo.py:84): a tensor whose name holds one of these is
// not decayed.
ParamTensor Named(std::string name, int64_t elements) {
  bool decayed = true;
  for (const char* word : {"bias", "layer_norm", "layernorm", "ln"}) {
    if (absl::StrContains(name, word)) decayed = false;
  }
  return ParamTensor{std::move(name), elements, decayed};
}

// A block's tensors in named_parameters order (model.py:119-126, :54-66,
// :103-110), named relative to the block as ZO2's module_dual_forward sees
// them (MeZO's "transformer.h.<i>." prefix changes no decay).
std::vector<ParamTensor> BlockParamTensors(const Dims& s) {
  const int64_t h = s.h;
  return {Named("ln_1.weight", h),
          Named("ln_1.bias", h),
          Named("attn.c_attn.weight", 3 * h * h),
          Named("attn.c_attn.bias", 3 * h),
          Named("attn.c_proj.weight", h * h),
          Named("attn.c_proj.bias", h),
          Named("ln_2.weight", h),
          Named("ln_2.bias", h),
          Named("mlp.c_fc.weight", 4 * h * h),
          Named("mlp.c_fc.bias", 4 * h),
          Named("mlp.c_proj.weight", 4 * h * h),
          Named("mlp.c_proj.bias", h)};
}

std::vector<ParamTensor> EmbeddingParamTensors(const Dims& s) {
  return {Named("transformer.wte.weight", kVocab * s.h),
          Named("transformer.wpe.weight", s.positions * s.h)};
}

// ln_f and the untied lm_head. MeZO's names leave ln_f undecayed; ZO2
// passes weight_decay=0. for it (nanogpt/mezo_sgd/zo2.py:96-100), which
// takes the decayed form (zo.py:80-82).
std::vector<ParamTensor> HeadParamTensors(const Dims& s, PyTorchZoVariant variant) {
  std::vector<ParamTensor> tensors = {Named("transformer.ln_f.weight", s.h),
                                      Named("transformer.ln_f.bias", s.h),
                                      Named("lm_head.weight", kVocab * s.h)};
  if (variant == PyTorchZoVariant::kZo2Offloaded) tensors[0].decayed = tensors[1].decayed = true;
  return tensors;
}

// An elementwise torch op over `elements`: reads `inputs` tensors, writes
// one.
Kernel Elementwise(std::string name, int inputs, double elements, const Dims& s) {
  return MemoryPass(std::move(name), s.dtype, (inputs + 1) * elements * s.c,
                    kElementFlops * elements);
}

// torch.normal(0, 1, shape, dtype of the parameter) (zo.py:61, :79):
// writes z.
Kernel TorchNormal(const ParamTensor& t, const Dims& s) {
  Kernel k = MemoryPass(absl::StrCat("torch.normal z: ", t.name), s.dtype,
                        static_cast<double>(t.elements) * s.c);
  k.normal_elements = static_cast<double>(t.elements);
  k.generator = NormalGenerator::kTorch;
  return k;
}

// zo_perturb_parameters (zo.py:55-62) by scale·ε·z: per tensor
// param.add_(scale * z * eps), evaluated left to right.
void AppendPerturbPass(const std::vector<ParamTensor>& tensors, int scale, const Dims& s,
                       KernelPlan* plan) {
  for (const ParamTensor& t : tensors) {
    const double n = static_cast<double>(t.elements);
    plan->push_back(TorchNormal(t, s));
    plan->push_back(Elementwise(absl::StrFormat("%+d · z: %s", scale, t.name), 1, n, s));
    plan->push_back(Elementwise(absl::StrCat("· eps: ", t.name), 1, n, s));
    plan->push_back(Elementwise(absl::StrCat("add_: ", t.name), 2, n, s));
  }
}

// zo_update (zo.py:73-88): per tensor z regenerated, then
// param.sub_(lr * (g * z + wd * param)) or param.sub_(lr * g * z).
void AppendUpdatePass(const std::vector<ParamTensor>& tensors, const Dims& s, KernelPlan* plan) {
  for (const ParamTensor& t : tensors) {
    const double n = static_cast<double>(t.elements);
    plan->push_back(TorchNormal(t, s));
    if (t.decayed) {
      plan->push_back(Elementwise(absl::StrCat("g · z: ", t.name), 1, n, s));
      plan->push_back(Elementwise(absl::StrCat("wd · θ: ", t.name), 1, n, s));
      plan->push_back(Elementwise(absl::StrCat("g·z + wd·θ: ", t.name), 2, n, s));
      plan->push_back(Elementwise(absl::StrCat("lr · (g·z + wd·θ): ", t.name), 1, n, s));
    } else {
      plan->push_back(Elementwise(absl::StrCat("(lr·g) · z: ", t.name), 1, n, s));
    }
    plan->push_back(Elementwise(absl::StrCat("sub_: ", t.name), 2, n, s));
  }
}

// F.layer_norm (model.py:52): one kernel over T rows of h; reads x, weight
// and bias, writes y and each row's fp32 mean and rstd.
Kernel LayerNorm(const std::string& name, const Dims& s) {
  const double n = static_cast<double>(s.tokens) * s.h;
  return MemoryPass(absl::StrCat(name, " layer_norm"), s.dtype,
                    (2 * n + 2.0 * s.h) * s.c + 2.0 * s.tokens * kStatBytes, kLayerNormFlops * n);
}

// nn.Linear(in, out) over T tokens: one cuBLAS(Lt) GEMM, the bias (read
// once) in its epilogue.
Kernel Linear(const std::string& name, int64_t in, int64_t out, bool bias, const Dims& s) {
  Kernel g = Gemm(absl::StrCat(name, bias ? " linear + bias" : " linear"), s.dtype, s.c, out,
                  s.tokens, in);
  if (bias) g.bytes += static_cast<double>(out) * s.c;
  return g;
}

// The fused causal attention kernel SDPA runs (model.py:89): its name, the
// query rows and key columns of one tile, and the head width its MMAs run
// at.
struct AttentionKernel {
  std::string name;
  int64_t tile_rows = 0, tile_keys = 0, width = 0;
};

// The head width is at most 128 (CheckModel).
AttentionKernel AttentionKernelFor(const Dims& s) {
  if (s.dtype == FP32) {
    // The memory-efficient kernel (CUTLASS, sm80 build): the first of
    // fmha_cutlassF_f32_aligned_64x64 (head width <= 64) and _64x128 (<=
    // 128) that fits; U: its MMAs taken to run at that width.
    if (s.d <= 64) return AttentionKernel{"causal attention (SDPA memory-efficient)", 64, 64, 64};
    return AttentionKernel{"causal attention (SDPA memory-efficient)", 64, 128, 128};
  }
  // FlashAttention-2 (PyTorch's flash_fwd_launch_template.h, run_mha_fwd_
  // hdim32/64/96/128 on a GPU other than sm86/89, no dropout): the head
  // width rounded up to a multiple of 32, 128 query rows by 128 keys up to
  // width 64, by 64 keys above.
  const int64_t width = (s.d + 31) / 32 * 32;
  return AttentionKernel{"causal attention (SDPA FlashAttention-2)", 128, width <= 64 ? 128 : 64,
                         width};
}

// One launch over every (example, head). Query tile i (rows i·R ..
// (i + 1)·R - 1) visits key tiles up to ⌈min(T, (i + 1)·R) / K⌉ (FA2's
// n_block_max, the memory-efficient kernel's num_keys): the tiles above the
// diagonal are skipped, the diagonal ones computed whole and masked. For
// the cost model it is one GEMM per (example, head): m = R, a query tile's
// rows; n = K · (the key tiles all its query tiles visit), those tiles laid
// side by side; k = 2·width, the scores Q·Kᵀ and the context P·V each of
// depth width. So 2·m·n·k is the kernel's tile arithmetic. Reads q, k and
// v, writes the context and the fp32 log-sum-exp of each (example, head,
// row).
Kernel Attention(const Dims& s) {
  const AttentionKernel a = AttentionKernelFor(s);
  const int64_t query_tiles = (s.seq + a.tile_rows - 1) / a.tile_rows;
  int64_t key_tiles = 0;
  for (int64_t i = 0; i < query_tiles; ++i) {
    const int64_t keys = std::min(s.seq, (i + 1) * a.tile_rows);
    key_tiles += (keys + a.tile_keys - 1) / a.tile_keys;
  }
  Kernel k = Gemm(a.name, s.dtype, s.c, a.tile_rows, a.tile_keys * key_tiles, 2 * a.width,
                  s.examples * s.heads);
  k.bytes = 4.0 * s.tokens * s.h * s.c + static_cast<double>(s.tokens) * s.heads * kStatBytes;
  return k;
}

// Block.forward (model.py:128-131, CausalSelfAttention.forward :77-101,
// MLP.forward :112-117).
KernelPlan BlockForward(const Dims& s, int scale) {
  KernelPlan plan;
  AppendPerturbPass(BlockParamTensors(s), scale, s, &plan);
  const double n = static_cast<double>(s.tokens) * s.h;
  plan.push_back(LayerNorm("ln_1", s));
  plan.push_back(Linear("attn.c_attn", s.h, 3 * s.h, true, s));
  plan.push_back(Attention(s));
  plan.push_back(Linear("attn.c_proj", s.h, s.h, true, s));
  plan.push_back(Elementwise("residual add (attention)", 2, n, s));
  plan.push_back(LayerNorm("ln_2", s));
  plan.push_back(Linear("mlp.c_fc", s.h, 4 * s.h, true, s));
  plan.push_back(MemoryPass("gelu", s.dtype, 2 * 4 * n * s.c, kGeluErfFlops * 4 * n));
  plan.push_back(Linear("mlp.c_proj", 4 * s.h, s.h, true, s));
  plan.push_back(Elementwise("residual add (mlp)", 2, n, s));
  return plan;
}

// tok_emb = wte(idx); pos_emb = wpe(pos); x = tok_emb + pos_emb
// (nanogpt/mezo_sgd/zo.py:30-32, zo2.py:51-63): two gathers (each reads
// its int64 indices and rows, writes the rows; pos is [1, T]) and a
// broadcast add.
KernelPlan Embed(const Dims& s, int scale) {
  KernelPlan plan;
  AppendPerturbPass(EmbeddingParamTensors(s), scale, s, &plan);
  const double n = static_cast<double>(s.tokens) * s.h;
  const double position_rows = static_cast<double>(s.seq) * s.h;
  plan.push_back(
      MemoryPass("transformer.wte embedding", s.dtype, s.tokens * kIndexBytes + 2 * n * s.c));
  plan.push_back(MemoryPass("transformer.wpe embedding", s.dtype,
                            s.seq * kIndexBytes + 2 * position_rows * s.c));
  plan.push_back(MemoryPass("add token and position embeddings", s.dtype,
                            (2 * n + position_rows) * s.c, kElementFlops * n));
  return plan;
}

// ln_f, lm_head over every position, F.cross_entropy over every position
// (nanogpt/mezo_sgd/zo.py:35-40, zo2.py:96-110): log_softmax writes the
// [T, V] log-probabilities; nll_loss reads each row's target and its
// log-probability, writes the mean and its weight.
KernelPlan HeadLoss(const Dims& s, int scale, PyTorchZoVariant variant) {
  KernelPlan plan;
  AppendPerturbPass(HeadParamTensors(s, variant), scale, s, &plan);
  const double logits = static_cast<double>(s.tokens) * kVocab;
  plan.push_back(LayerNorm("transformer.ln_f", s));
  plan.push_back(Gemm("lm_head linear (every position)", s.dtype, s.c, kVocab, s.tokens, s.h));
  plan.push_back(MemoryPass("log_softmax (cross_entropy)", s.dtype, 2 * logits * s.c,
                            kLogSoftmaxFlops * logits));
  plan.push_back(MemoryPass("nll_loss (cross_entropy)", s.dtype,
                            s.tokens * (kIndexBytes + s.c) + 2.0 * s.c, kElementFlops * s.tokens));
  return plan;
}

absl::Status CheckModel(const ModelSpec& model) {
  if (model.family() != OPT && model.family() != GPT2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "model '%s' is family %s; ZO2's nanoGPT path runs GPT-2 blocks at OPT's and GPT-2's "
        "sizes, so the PyTorch ZO profiles take OPT and GPT2 models only",
        model.name(), Family_Name(model.family())));
  }
  if (model.ffn_size() != 4 * model.hidden_size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "model '%s' has ffn_size %d; ZO2's nanoGPT MLP is 4 · hidden_size = %d wide", model.name(),
        model.ffn_size(), 4 * model.hidden_size()));
  }
  if (model.num_heads() < 1 || model.hidden_size() % model.num_heads() != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("model '%s': hidden_size %d is not a multiple of num_heads %d",
                        model.name(), model.hidden_size(), model.num_heads()));
  }
  if (model.hidden_size() / model.num_heads() > 128) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "model '%s' has heads %d wide (hidden %d / %d heads): the plan knows the attention "
        "kernels' tiles up to 128",
        model.name(), model.hidden_size() / model.num_heads(), model.hidden_size(),
        model.num_heads()));
  }
  return absl::OkStatus();
}

// The sign's perturbation scale: +1 for PLUS, -2 for MINUS (the shifts
// [1, -2, 1] of zo.py:90-97); checks the batch fits wpe.
absl::StatusOr<int> ForwardScale(const ModelSpec& model, const ComputeOp& op) {
  const std::string kind = ComputeKind_Name(op.kind());
  if (op.sign() != PLUS && op.sign() != MINUS) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s op: sign %s is neither PLUS nor MINUS", kind, Sign_Name(op.sign())));
  }
  if (op.examples() < 1 || op.seq_len() < 1 || op.seq_len() > model.max_positions()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s op: examples %d must be >= 1 and seq_len %d in [1, %d] (wpe's rows)",
                        kind, op.examples(), op.seq_len(), model.max_positions()));
  }
  return op.sign() == PLUS ? 1 : -2;
}

// An UPDATE's tensors: ZO2 updates whole modules, so the op's range must
// be its whole part.
absl::StatusOr<std::vector<ParamTensor>> UpdateTensors(const ModelSpec& model, const ComputeOp& op,
                                                       const Dims& s, PyTorchZoVariant variant) {
  const Part part = op.params().part();
  int64_t whole = 0;
  std::vector<ParamTensor> tensors;
  if (part == EMBEDDING_PART) {
    whole = EmbeddingParams(model);
    tensors = EmbeddingParamTensors(s);
  } else if (part == DECODER_BLOCK) {
    whole = BlockParams(model);
    tensors = BlockParamTensors(s);
  } else if (part == HEAD_PART) {
    whole = FinalNormParams(model) + HeadParams(model);
    tensors = HeadParamTensors(s, variant);
  } else {
    return absl::InvalidArgumentError(
        absl::StrFormat("UPDATE op: params.part %s is not a part", Part_Name(part)));
  }
  if (op.params().first_element() != 0 || op.params().elements() != whole) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "UPDATE op: elements [%d, +%d) of %s, not the whole part (%d elements): ZO2 updates "
        "whole modules",
        op.params().first_element(), op.params().elements(), Part_Name(part), whole));
  }
  return tensors;
}

}  // namespace

absl::StatusOr<KernelPlan> PyTorchZoPlan(const ModelSpec& model, const ComputeOp& op,
                                         DType compute_dtype, PyTorchZoVariant variant) {
  if (absl::Status status = CheckModel(model); !status.ok()) return status;
  if (compute_dtype != FP32 && compute_dtype != FP16 && compute_dtype != BF16) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the compute dtype is %s; ZO2 runs FP32, FP16 and BF16 models", DType_Name(compute_dtype)));
  }
  if (op.direction() > 0 || op.zo_state().size_bytes() > kZoStateBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s op: the schedule takes several perturbation directions a step; ZO2's and MeZO's "
        "PyTorch code takes one (profile it as zosched_cuda, or lower it with --directions=1)",
        ComputeKind_Name(op.kind())));
  }
  const Dims s = DimsOf(model, op, compute_dtype);
  switch (op.kind()) {
    case EMBED:
    case BLOCK_FORWARD:
    case HEAD_LOSS: {
      absl::StatusOr<int> scale = ForwardScale(model, op);
      if (!scale.ok()) return scale.status();
      if (op.kind() == EMBED) return Embed(s, *scale);
      if (op.kind() == BLOCK_FORWARD) return BlockForward(s, *scale);
      return HeadLoss(s, *scale, variant);
    }
    case UPDATE: {
      absl::StatusOr<std::vector<ParamTensor>> tensors = UpdateTensors(model, op, s, variant);
      if (!tensors.ok()) return tensors.status();
      KernelPlan plan;
      AppendPerturbPass(*tensors, 1, s, &plan);  // the restore
      AppendUpdatePass(*tensors, s, &plan);
      return plan;
    }
    case PROJECTED_GRADIENT:
      // compute_grad (zo.py:99-100): ((L+ - L-) / (2ε)).item(), scalars of
      // the model's dtype; .item() copies g to the host and waits for it
      // (a cudaMemcpy, no device traffic to speak of).
      return KernelPlan{Elementwise("L+ - L-", 2, 1, s), Elementwise("/ 2eps", 1, 1, s),
                        MemoryPass("g to host (.item())", s.dtype, static_cast<double>(s.c))};
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "compute kind %s has no counterpart in ZO2's step", ComputeKind_Name(op.kind())));
  }
}

}  // namespace zosched
