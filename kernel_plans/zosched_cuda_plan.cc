#include "kernel_plans/zosched_cuda_plan.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernel_plans/attention_plan.h"
#include "kernel_plans/op_shape.h"
#include "models/accounting.h"
#include "models/adapters.h"
#include "models/model_spec.h"
#include "models/model_tensors.h"
#include "schedule/compute_op_model.h"

namespace zosched {
namespace {

// FLOPs per element of the elementwise and row-wise kernels, from the
// formulas they evaluate (runtime/zo/zo_math.h, runtime/nn/element_math.h
// and runtime/cuda/nn/row_math.h).
constexpr double kPerturbFlops = 2;  // θ + (±ε)·z
// θ - η·(g·z + λθ): g·z, +, η·, -; the λ·θ of the decaying elements is not
// counted.
constexpr double kUpdateFlops = 4;
constexpr double kLayerNormFlops = 8;  // mean: +; variance: -, ·, +; (x - mean)·rstd·w + b
constexpr double kRmsNormFlops = 4;    // mean square: ·, +; x·rstd·w
constexpr double kAddFlops = 1;        // residual add, bias add, position add
constexpr double kReluFlops = 1;
constexpr double kGeluTanhFlops = 8;  // 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))), tanh as one
constexpr double kSwiGluFlops = 5;    // silu(g)·u = g / (1 + exp(-g)) · u
constexpr double kRotaryFlops = 3;    // per element: a pair takes 4 multiplies and 2 adds
constexpr double kSoftmaxFlops = 5;   // per visible score: max, subtract, exp, sum, scale
constexpr double kGradientFlops = 5;  // per example: L+ - L-, its sum, L+ + L-, 0.5·, its sum

constexpr int64_t kScoreBytes = 4;  // attention scores, losses: fp32
constexpr int64_t kIndexBytes = 4;  // token ids, lengths, labels, loss indices: int32

// The dimensions of one op of a model, in elements; c = bytes per element of
// the compute dtype.
struct Dims : OpShape {
  int64_t e = 0;                              // EmbedDim
  int64_t kv_heads = 0, d = 0;                // key/value heads, HeadDim
  int64_t qw = 0, kvw = 0;                    // QueryWidth, KvWidth
  bool layer_norm = false;                    // LayerNorm, else RMSNorm
  // LoRA or a prefix: the op's params are frozen (copied where a
  // full-parameter op perturbs them), and a block's adapter_params
  // (AdapterParams) are perturbed instead. LoRA's adapters run beside
  // their projections; a prefix's k keys and values come before the real
  // ones in attention.
  bool frozen = false;
  int64_t adapter_params = 0;
  int64_t lora_rank = 0;
  std::vector<LoraAdapter> adapters;
  int64_t prefix = 0;  // k (PrefixTokens)
};

Dims DimsOf(const ModelSpec& model, const ComputeOp& op, DType dtype, const Peft& peft) {
  Dims s;
  s.frozen = TrainsAdapters(peft);
  if (s.frozen) {
    s.adapter_params = AdapterParams(model, peft);
    s.lora_rank = peft.lora_rank();
    s.adapters = BlockAdapters(model, peft, 0);
    s.prefix = PrefixTokens(peft);
  }
  static_cast<OpShape&>(s) = ShapeOf(model, op, dtype);
  s.e = EmbedDim(model);
  s.kv_heads = KvHeads(model);
  s.d = HeadDim(model);
  s.qw = QueryWidth(model);
  s.kvw = KvWidth(model);
  s.layer_norm = model.norm() == LAYER_NORM;
  return s;
}

// q, the directions of the step an UPDATE or PROJECTED_GRADIENT op works
// for: its ZO_STATE holds one entry per direction.
int64_t DirectionsOfOp(const ComputeOp& op) {
  return std::max<int64_t>(1, op.zo_state().size_bytes() / kZoStateBytes);
}

absl::Status CheckBatch(const ComputeOp& op) {
  if (op.examples() < 1 || op.seq_len() < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s op: examples %d and seq_len %d must be >= 1",
                        ComputeKind_Name(op.kind()), op.examples(), op.seq_len()));
  }
  return absl::OkStatus();
}

// A pass that regenerates z for each of its `elements` (perturb.cu,
// update.cu). Each thread draws a whole Philox group of four z, so a range
// not aligned to 4 draws up to 3 more at each end: not counted.
Kernel ZPass(const std::string& name, double bytes, double flops, int64_t elements, const Dims& s) {
  Kernel k = MemoryPass(name, s.dtype, bytes, flops);
  k.normal_elements = static_cast<double>(elements);
  return k;
}

// LaunchPerturb (perturb.cu) of `elements` parameters: reads θ, writes
// θ ± εz; under LoRA or a prefix (frozen params) a copy of θ.
Kernel Perturb(const std::string& what, int64_t elements, const Dims& s) {
  if (s.frozen) return MemoryPass(absl::StrCat("copy ", what), s.dtype, 2.0 * elements * s.c);
  return ZPass(absl::StrCat("perturb ", what), 2.0 * elements * s.c, kPerturbFlops * elements,
               elements, s);
}

// LaunchPerturbRows (perturb.cu) of `rows` gathered rows of `width`
// elements: reads the row indices (int32) and the rows, writes their
// perturbed copies (under LoRA or a prefix, plain copies).
Kernel PerturbRows(const std::string& what, int64_t rows, int64_t width, const Dims& s) {
  const double bytes = rows * kIndexBytes + 2.0 * rows * width * s.c;
  if (s.frozen) return MemoryPass(absl::StrCat("gather ", what), s.dtype, bytes);
  return ZPass(absl::StrCat("perturb ", what), bytes, kPerturbFlops * rows * width, rows * width,
               s);
}

// The adapter term of a projection under LoRA (runtime/nn/block_lora.h,
// runtime/cuda/nn/decoder_forward_gpu.cc): u[T, r] = x Aᵀ (m r, n T, k
// in), u scaled by α / r in place, then y += u Bᵀ (m out, n T, k r; y read
// and written).
void AppendLora(const LoraAdapter& a, const std::string& name, const Dims& s, KernelPlan* plan) {
  const double u = static_cast<double>(s.tokens) * s.lora_rank;
  plan->push_back(Gemm(absl::StrCat(name, " lora_A"), s.dtype, s.c, s.lora_rank, s.tokens, a.in));
  plan->push_back(MemoryPass(absl::StrCat(name, " lora scaling"), s.dtype, 2.0 * u * s.c, u));
  Kernel b = Gemm(absl::StrCat(name, " lora_B"), s.dtype, s.c, a.out, s.tokens, s.lora_rank);
  b.bytes += static_cast<double>(s.tokens) * a.out * s.c;  // y read to accumulate
  plan->push_back(std::move(b));
}

// NormRows (row_norm.cu) over the op's T rows of h: reads x, the weight (and a
// LayerNorm's bias), writes y. The LayerNorm reads a row twice (mean, then
// variance) but from its block's cache: counted once.
Kernel NormRows(const std::string& name, const Dims& s) {
  const int64_t params = s.layer_norm ? 2 * s.h : s.h;
  return MemoryPass(name, s.dtype, (2.0 * s.tokens * s.h + params) * s.c,
                    (s.layer_norm ? kLayerNormFlops : kRmsNormFlops) * s.tokens * s.h);
}

// ResidualAdd (residual_add.cu): x += y over n elements: reads x and y,
// writes x.
Kernel ResidualAdd(const std::string& name, int64_t n, const Dims& s) {
  return MemoryPass(name, s.dtype, 3.0 * n * s.c, kAddFlops * n);
}

// The pointwise activation after a projection (BiasActivation's), or none.
enum class Activation { kNone, kRelu, kGeluTanh };

// The block's tensor in `slot` (layer 0's: every block has the same
// shapes), or nullptr when the model has none there.
const TensorSpec* Find(const std::vector<TensorSpec>& block, TensorSlot slot) {
  for (const TensorSpec& t : block) {
    if (t.slot == slot) return &t;
  }
  return nullptr;
}

// A block tensor's checkpoint name without its layer's prefix: BlockTensors
// names layer 0's tensors "<prefix>.0.<suffix>" ("model.decoder.layers.0.
// fc1.weight", "h.0.attn.c_attn.weight") and no prefix holds ".0.".
std::string BlockSuffix(const TensorSpec& t) {
  const size_t at = t.name.find(".0.");
  return at == std::string::npos ? t.name : t.name.substr(at + 3);
}

// BlockForwardGpu's `linear` (decoder_forward_gpu.cc): the weight perturbed
// into the scratch's room (PerturbedBlockWeights::Get of a matrix), the
// GEMM out[T, n_out] = in[T, n_in] · W (Gemm::Linear: reads in and W once,
// writes out), then, with a bias or an activation, BiasActivation in place
// (reads out and the bias, writes out). The bias, a vector, was perturbed
// with the others up front.
// Every GEMM's m, n, k are those of the cuBLAS call (column-major, the
// shape its kernel selection and tiling see): a projection computes outᵀ
// [n_out x T] = W [n_out x n_in] · inᵀ, so m = n_out, n = T, k = n_in.
void AppendLinear(const std::vector<TensorSpec>& block, TensorSlot weight, TensorSlot bias,
                  const std::string& name, int64_t n_in, int64_t n_out, Activation act,
                  const Dims& s, KernelPlan* plan) {
  const TensorSpec* w = Find(block, weight);
  if (!s.frozen) plan->push_back(Perturb(BlockSuffix(*w), w->elements(), s));
  plan->push_back(Gemm(absl::StrCat(name, " projection"), s.dtype, s.c, n_out, s.tokens, n_in));
  for (const LoraAdapter& a : s.adapters) {
    if (a.base == weight) AppendLora(a, name, s, plan);
  }
  const bool has_bias = Find(block, bias) != nullptr;
  if (!has_bias && act == Activation::kNone) return;
  const double n = static_cast<double>(s.tokens) * n_out;
  double flops = has_bias ? kAddFlops * n : 0;
  std::string what = has_bias ? absl::StrCat(name, " bias") : name;
  if (act == Activation::kRelu) {
    flops += kReluFlops * n;
    absl::StrAppend(&what, has_bias ? " + relu" : " relu");
  } else if (act == Activation::kGeluTanh) {
    flops += kGeluTanhFlops * n;
    absl::StrAppend(&what, has_bias ? " + gelu" : " gelu");
  }
  plan->push_back(MemoryPass(what, s.dtype, (2.0 * n + (has_bias ? n_out : 0)) * s.c, flops));
}

// NormRotateHeads (head_norm_rotary.cu) of the q or k heads (`heads` of
// them per token), in place: reads and writes the heads, reads the QK-norm
// weight [d] and the rotary table's seq positions of [cos d/2 | sin d/2]
// fp32. Launched only when the model has a QK-norm or rotary positions.
void AppendNormRotate(const std::string& which, int64_t heads, bool qk_norm, bool rotary,
                      const Dims& s, KernelPlan* plan) {
  if (!qk_norm && !rotary) return;
  const double n = static_cast<double>(s.tokens) * heads * s.d;
  const double bytes =
      2.0 * n * s.c + (qk_norm ? s.d * s.c : 0) + (rotary ? s.seq * s.d * kScoreBytes : 0);
  const double flops = (qk_norm ? kRmsNormFlops * n : 0) + (rotary ? kRotaryFlops * n : 0);
  const std::string name = qk_norm && rotary ? absl::StrCat(which, "-norm + rotary")
                           : qk_norm         ? absl::StrCat(which, "-norm")
                                             : absl::StrCat("rotary ", which);
  plan->push_back(MemoryPass(name, s.dtype, bytes, flops));
}

// CausalAttention's steps, as ForEachAttentionStep (attention_plan.h) hands
// them to the backend: for each example, each of the heads / kv_heads query
// heads that share a key/value head, each run of key/value heads and each
// chunk of query rows [r0, r1) (keys 0 .. r1 - 1):
//   scores:  a strided batch of Sᵀ [keys x rows] = K · Qᵀ (m keys = r1, n
//            rows, k d); reads Q and K at c, writes S in fp32 (cuBLAS
//            computes every score of the rectangle, the causal mask's
//            zeros included)
//   softmax: CausalSoftmaxRows, one thread block per (row, head): reads the
//            example's length and the scores a query row can see (row_math.h
//            CausalVisibleKeys: i + 1 for row i >= prefix, none for the
//            prefix's rows i < prefix, which it fills with 0), writes the
//            row's keys probabilities at c over the scores
//   context: a strided batch of Cᵀ [d x rows] = Vᵀ · Pᵀ (m d, n rows, k
//            keys); reads P and V, writes C over the queries
// Each distinct kernel added is listed once, in first-seen order, with
// launches = the times it repeats over the batch.
class AttentionKernels : public AttentionSteps {
 public:
  // `prefix`: the rows in front of each example's, k under prefix tuning
  // (the softmax's prefix count; 0 without).
  AttentionKernels(const Dims& s, int64_t prefix, KernelPlan* plan)
      : s_(s), prefix_(prefix), plan_(plan) {}

  absl::Status Product(const AttentionProduct& p) override {
    Kernel k = Gemm(p.c_fp32 ? "attention scores" : "attention context", s_.dtype, s_.c, p.m,
                    p.n, p.k, p.batch);
    k.bytes = static_cast<double>(p.batch) *
              ((p.m * p.k + p.k * p.n) * s_.c +
               static_cast<double>(p.m) * p.n * (p.c_fp32 ? kScoreBytes : s_.c));
    Add(std::move(k));
    return absl::OkStatus();
  }

  absl::Status Softmax(const SoftmaxPass& pass) override {
    // Σ_{i = max(r0, prefix)}^{r1 - 1} (i + 1): the scores the queries see.
    const int64_t r0 = std::max(pass.first_row, prefix_), r1 = pass.first_row + pass.rows;
    const double visible =
        r1 > r0 ? (static_cast<double>(r1) * (r1 + 1) - static_cast<double>(r0) * (r0 + 1)) / 2
                : 0;
    Add(MemoryPass("causal softmax", s_.dtype,
                   pass.heads * (visible * kScoreBytes +
                                 static_cast<double>(pass.rows) * pass.keys * s_.c) +
                       kIndexBytes,
                   pass.heads * kSoftmaxFlops * visible));
    return absl::OkStatus();
  }

  // A kernel seen before (same name and shape) counts one more launch.
  void Add(Kernel k) {
    for (size_t i = first_; i < plan_->size(); ++i) {
      Kernel& seen = (*plan_)[i];
      if (seen.name == k.name && seen.m == k.m && seen.n == k.n && seen.k == k.k &&
          seen.batch == k.batch && seen.bytes == k.bytes && seen.flops == k.flops) {
        ++seen.launches;
        return;
      }
    }
    plan_->push_back(std::move(k));
  }

 private:
  const Dims& s_;
  const int64_t prefix_;
  KernelPlan* plan_;
  const size_t first_ = plan_->size();  // the attention's first kernel in the plan
};

// CausalAttention (attention.cc) on the workspace's q | k | v with
// `scratch_bytes` of score scratch. Without a prefix, the batch's steps.
// With a prefix of k (its PrefixAttention), example by example:
//   join:      JoinPrefixRows (prefix_join.cu), one launch: the example's
//              queries behind k zero rows, its keys and values behind the
//              prefix's, into the stream's scratch, rows of q | kv | kv
//              dense; reads seq · (q + 2kv) + 2k · kv elements, writes
//              (k + seq) · (q + 2kv)
//   steps:     those of PrefixJoinedShape (one example, seq k + seq, the
//              same scratch), the k zero query rows included
//   copy back: cudaMemcpy2DAsync of the joined queries' rows k .. k + seq
//              (the context) over the example's query rows: reads and
//              writes seq · q elements
absl::Status AppendAttention(const Dims& s, int64_t scratch_bytes, KernelPlan* plan) {
  AttentionShape shape;
  shape.examples = s.examples;
  shape.seq = s.seq;
  shape.heads = s.heads;
  shape.kv_heads = s.kv_heads;
  shape.head_dim = s.d;
  shape.q_ld = s.qw;
  shape.kv_ld = s.kvw;
  shape.element_bytes = static_cast<int>(s.c);
  shape.scratch_bytes = scratch_bytes;
  // An error of the steps' shape, naming the op (and a prefix's rows).
  const std::string rows =
      s.prefix > 0
          ? absl::StrFormat(" (the keys of a prefix of %d tokens, then seq %d)", s.prefix, s.seq)
          : "";
  auto failed = [&](const absl::Status& status) {
    return absl::Status(status.code(), absl::StrCat("BLOCK_FORWARD op: ", status.message(), rows));
  };
  AttentionKernels kernels(s, s.prefix, plan);
  if (s.prefix == 0) {
    const absl::Status status = ForEachAttentionStep(shape, kernels);
    return status.ok() ? status : failed(status);
  }
  const AttentionShape joined = PrefixJoinedShape(shape, s.prefix);
  const double row = joined.q_ld + 2.0 * joined.kv_ld;  // a joined row's q | kv | kv elements
  const Kernel join =
      MemoryPass("join prefix and example rows", s.dtype,
                 (s.seq * row + 2.0 * s.prefix * joined.kv_ld + joined.seq * row) * s.c);
  const Kernel copy_back =
      MemoryPass("copy context rows back", s.dtype, 2.0 * s.seq * joined.q_ld * s.c);
  for (int64_t e = 0; e < s.examples; ++e) {
    kernels.Add(join);
    if (absl::Status status = ForEachAttentionStep(joined, kernels); !status.ok()) {
      return failed(status);
    }
    kernels.Add(copy_back);
  }
  return absl::OkStatus();
}

// CudaBackend::EnqueueCompute's BLOCK_FORWARD: PerturbedBlockWeights
// perturbs the block's vectors (its 1-D tensors: norms, biases, QK-norm
// weights), one launch each in block order, then BlockForwardGpu
// (decoder_forward_gpu.cc) runs, asking for each matrix just before its
// GEMM.
absl::StatusOr<KernelPlan> BlockForwardKernels(const ModelSpec& model, const ComputeOp& op,
                                               const Dims& s) {
  const std::vector<TensorSpec> block = BlockTensors(model, 0);
  KernelPlan plan;
  if (s.frozen) {
    // LoRA or a prefix: the block read as stored; its ADAPTER_PART
    // perturbed in one launch.
    plan.push_back(ZPass("perturb adapters", 2.0 * s.adapter_params * s.c,
                         kPerturbFlops * s.adapter_params, s.adapter_params, s));
  } else {
    for (const TensorSpec& t : block) {
      if (t.shape.size() == 1) plan.push_back(Perturb(BlockSuffix(t), t.elements(), s));
    }
  }
  const bool fused_qkv = Find(block, TensorSlot::kQkvWeight) != nullptr;

  // Attention: x += o_proj(attention(norm1(x))).
  plan.push_back(NormRows("attention norm", s));
  if (fused_qkv) {
    AppendLinear(block, TensorSlot::kQkvWeight, TensorSlot::kQkvBias, "qkv", s.h, s.qw + 2 * s.kvw,
                 Activation::kNone, s, &plan);
  } else {
    AppendLinear(block, TensorSlot::kQWeight, TensorSlot::kQBias, "q", s.h, s.qw, Activation::kNone,
                 s, &plan);
    AppendLinear(block, TensorSlot::kKWeight, TensorSlot::kKBias, "k", s.h, s.kvw,
                 Activation::kNone, s, &plan);
    AppendLinear(block, TensorSlot::kVWeight, TensorSlot::kVBias, "v", s.h, s.kvw,
                 Activation::kNone, s, &plan);
  }
  const bool rotary = model.positional() == ROTARY;
  AppendNormRotate("q", s.heads, Find(block, TensorSlot::kQNorm) != nullptr, rotary, s, &plan);
  AppendNormRotate("k", s.kv_heads, Find(block, TensorSlot::kKNorm) != nullptr, rotary, s, &plan);
  // The scratch (BlockForwardGpu): the workspace past q | k | v, whose size
  // the backend takes from the model (BlockWorkspaceFloats, equal to
  // BlockForwardWorkspaceElements), not from the op's range, less the skip
  // to a 16-byte boundary of its start's address. A prefix's joined rows
  // are in a scratch of the stream's, not here.
  const int64_t workspace = BlockForwardWorkspaceElements(model, s.examples, s.seq);
  const int64_t qkv_elements = s.tokens * (s.qw + 2 * s.kvw);
  const int64_t skip = (16 - (op.workspace().offset_bytes() + qkv_elements * s.c) % 16) % 16;
  RETURN_IF_ERROR(AppendAttention(s, (workspace - qkv_elements) * s.c - skip, &plan));
  AppendLinear(block, TensorSlot::kOWeight, TensorSlot::kOBias, "o", s.qw, s.h, Activation::kNone,
               s, &plan);
  plan.push_back(ResidualAdd("attention residual add", s.tokens * s.h, s));

  // FFN: x += down(act(up(x'))), or down(silu(gate(x')) · up(x')); x' = norm2(x).
  plan.push_back(NormRows("ffn norm", s));
  if (model.activation() == SWIGLU) {
    AppendLinear(block, TensorSlot::kGateWeight, TensorSlot::kGateBias, "gate", s.h, s.f,
                 Activation::kNone, s, &plan);
    AppendLinear(block, TensorSlot::kUpWeight, TensorSlot::kUpBias, "up", s.h, s.f,
                 Activation::kNone, s, &plan);
    // SwiGluInPlace (swiglu.cu): reads gate and up, writes gate.
    const double n = static_cast<double>(s.tokens) * s.f;
    plan.push_back(MemoryPass("swiglu", s.dtype, 3.0 * n * s.c, kSwiGluFlops * n));
  } else {
    AppendLinear(block, TensorSlot::kUpWeight, TensorSlot::kUpBias, "up", s.h, s.f,
                 model.activation() == GELU ? Activation::kGeluTanh : Activation::kRelu, s, &plan);
  }
  AppendLinear(block, TensorSlot::kDownWeight, TensorSlot::kDownBias, "down", s.f, s.h,
               Activation::kNone, s, &plan);
  plan.push_back(ResidualAdd("ffn residual add", s.tokens * s.h, s));
  return plan;
}

// CudaBackend::EnqueueCompute's EMBED with PlanEmbed (runtime/ops/
// embed_plan.cc), then EmbedRowsGpu (decoder_forward_gpu.cc).
KernelPlan EmbedKernels(const ModelSpec& model, const Dims& s) {
  const bool positions = model.positional() != ROTARY;  // a learned table
  const bool project_in = s.e != s.h;
  KernelPlan plan;
  if (positions) plan.push_back(Perturb("position rows", s.seq * s.h, s));
  if (project_in) plan.push_back(Perturb("project_in", s.h * s.e, s));
  plan.push_back(PerturbRows("token rows", s.tokens, s.e, s));
  // EmbedTokenRows rounds the rows up to a multiple of 4 when e != h (the
  // CPU's GEMM panel); the backend zeroes the padding rows
  // (cudaMemsetAsync: writes them), though the GPU's GEMM reads T rows.
  const int64_t rows = project_in ? (s.tokens + 3) / 4 * 4 : s.tokens;
  if (rows > s.tokens) {
    plan.push_back(MemoryPass("zero padding token rows", s.dtype,
                              static_cast<double>(rows - s.tokens) * s.e * s.c));
  }
  if (project_in) {
    plan.push_back(Gemm("project_in", s.dtype, s.c, s.h, s.tokens, s.e));  // as a projection
  }
  const double n = static_cast<double>(s.tokens) * s.h;
  if (positions) {
    // EmbedAdd (embed_add.cu): reads the word rows and the seq position
    // rows, writes the activations.
    plan.push_back(
        MemoryPass("embed add positions", s.dtype, (2.0 * n + s.seq * s.h) * s.c, kAddFlops * n));
  } else if (!project_in) {
    // No positions, no projection: the perturbed token rows are copied
    // into the activations (cudaMemcpyAsync device to device).
    plan.push_back(MemoryPass("copy token rows to activations", s.dtype, 2.0 * n * s.c));
  }
  return plan;
}

// CudaBackend::EnqueueCompute's HEAD_LOSS with PlanHeadLoss (runtime/ops/
// head_loss_plan.cc), then HeadLossFromRowsGpu (decoder_forward_gpu.cc).
absl::StatusOr<KernelPlan> HeadLossKernels(const ModelSpec& model, const ComputeOp& op,
                                           const Dims& s) {
  // The head part but an untied lm_head: the final norm and project_out,
  // perturbed in one launch (none when the model has neither).
  const int64_t final_norm = CountElements(FinalNormTensors(model));
  const int64_t project_out = s.e != s.h ? s.h * s.e : 0;
  const int64_t head = final_norm + project_out;
  // The perturbed operand (PerturbedBytes, schedule/compute_op_model.h):
  // those, then one row of e per label word.
  const int64_t perturbed = op.perturbed().size_bytes() / s.c;
  if (op.perturbed().size_bytes() % s.c != 0 || perturbed <= head ||
      (perturbed - head) % s.e != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "HEAD_LOSS op: a perturbed range of %d bytes is not the head's %d elements then whole "
        "label rows of %d elements of %d bytes",
        op.perturbed().size_bytes(), head, s.e, s.c));
  }
  const int64_t labels = (perturbed - head) / s.e;
  KernelPlan plan;
  if (head > 0) plan.push_back(Perturb("head (final norm, project_out)", head, s));
  plan.push_back(PerturbRows("label rows", labels, s.e, s));
  // LabelHeadLoss (head_loss.cu), one thread block per example: reads the
  // example's last hidden row, its length and label, the final norm,
  // project_out and the label rows (each once, shared by the blocks),
  // writes one fp32 loss; norm, projection, logits and the loss in fp32.
  const double norm_flops = final_norm > 0 ? (s.layer_norm ? kLayerNormFlops : kRmsNormFlops) : 0;
  const double bytes = (static_cast<double>(s.examples) * s.h + head + labels * s.e) * s.c +
                       s.examples * (2 * kIndexBytes + kScoreBytes);
  const double flops = s.examples * (norm_flops * s.h + 2.0 * project_out + 2.0 * labels * s.e);
  plan.push_back(MemoryPass("label head loss", s.dtype, bytes, flops));
  return plan;
}

}  // namespace

absl::StatusOr<KernelPlan> ZoschedCudaPlan(const ModelSpec& model, const ComputeOp& op,
                                           DType compute_dtype, const Peft& peft) {
  if (compute_dtype != FP32 && compute_dtype != FP16 && compute_dtype != BF16) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the compute dtype is %s; the CUDA backend runs FP32, FP16 and BF16",
                        DType_Name(compute_dtype)));
  }
  const Dims s = DimsOf(model, op, compute_dtype, peft);
  const int64_t n = op.params().elements();
  switch (op.kind()) {
    case UPDATE: {
      // LaunchUpdate (update.cu), in place: reads θ and the pending ZoState
      // of each of the q directions, writes θ; a z per element and
      // direction, and a multiply-add for each direction after the first.
      const int64_t q = DirectionsOfOp(op);
      Kernel update = ZPass(absl::StrCat("zo update ", Part_Name(op.params().part())),
                            2.0 * n * s.c + op.zo_state().size_bytes(),
                            (kUpdateFlops + 2.0 * (q - 1)) * n, q * n, s);
      return KernelPlan{update};
    }
    case EMBED:
      if (absl::Status status = CheckBatch(op); !status.ok()) return status;
      return EmbedKernels(model, s);
    case BLOCK_FORWARD:
      if (absl::Status status = CheckBatch(op); !status.ok()) return status;
      return BlockForwardKernels(model, op, s);
    case HEAD_LOSS:
      if (absl::Status status = CheckBatch(op); !status.ok()) return status;
      return HeadLossKernels(model, op, s);
    case PROJECTED_GRADIENT: {
      if (op.examples() < 1) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "PROJECTED_GRADIENT op: examples (the batch) %d must be >= 1", op.examples()));
      }
      // LaunchProjectedGradient (projected_gradient.cu), one thread: reads
      // each example's L+ and L- of each direction through the plus and
      // minus index lists, writes the ZoStates and the mean loss (a
      // double). Then
      // EnqueueCompute copies both to pinned host memory (two
      // cudaMemcpyAsync across the host link: a launch each, no device
      // traffic to speak of).
      const double batch = static_cast<double>(op.examples()) * DirectionsOfOp(op);  // per sign
      constexpr double kMeanLossBytes = sizeof(double);
      const double state = op.zo_state().size_bytes();
      return KernelPlan{
          MemoryPass("projected gradient", s.dtype,
                     op.losses().size_bytes() + 2 * batch * kIndexBytes + state + kMeanLossBytes,
                     kGradientFlops * batch),
          MemoryPass("copy zo state to host", s.dtype, state),
          MemoryPass("copy mean loss to host", s.dtype, kMeanLossBytes)};
    }
    case CAST: {
      // LaunchCast (cast.cu): reads one side, writes the other (the wire
      // side's element size from its range). Between equal dtypes it is a
      // cudaMemcpyAsync moving the same bytes.
      const bool widen = op.cast_direction() == WIRE_TO_COMPUTE;
      return KernelPlan{MemoryPass(widen ? "cast wire to compute" : "cast compute to wire", s.dtype,
                                   op.wire().size_bytes() + static_cast<double>(n) * s.c)};
    }
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "compute kind %s is not run by the CUDA backend", ComputeKind_Name(op.kind())));
  }
}

}  // namespace zosched
