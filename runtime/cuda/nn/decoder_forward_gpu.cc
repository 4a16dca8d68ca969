#include "runtime/cuda/nn/decoder_forward_gpu.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "base/gpu_check.h"
#include "base/status_macros.h"
#include "models/model_spec.h"
#include "runtime/cuda/nn/attention.h"
#include "runtime/cuda/nn/bias_activation.h"
#include "runtime/cuda/nn/embed_add.h"
#include "runtime/cuda/nn/head_loss.h"
#include "runtime/cuda/nn/head_norm_rotary.h"
#include "runtime/cuda/nn/residual_add.h"
#include "runtime/cuda/nn/row_norm.h"
#include "runtime/cuda/nn/scale.h"
#include "runtime/cuda/nn/swiglu.h"
#include "runtime/nn/decoder_forward.h"
#include "runtime/nn/param_layout.h"

namespace zosched {
namespace {

// The element `offset` elements of `type` past `base`.
const void* At(const void* base, int64_t offset, ElementType type) {
  return static_cast<const char*>(base) + offset * ElementBytes(type);
}
void* At(void* base, int64_t offset, ElementType type) {
  return static_cast<char*>(base) + offset * ElementBytes(type);
}

absl::Status CheckBatch(const char* what, int examples, int seq) {
  if (examples < 1 || seq < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: examples %d and seq %d must be >= 1", what, examples, seq));
  }
  return absl::OkStatus();
}

// Every tensor of `layout` at its slot's index.
std::vector<GpuTensor> BySlot(const PartLayout& layout) {
  std::vector<GpuTensor> tensors;
  for (const TensorSlice& t : layout.tensors) {
    const size_t slot = static_cast<size_t>(t.slot);
    if (tensors.size() <= slot) tensors.resize(slot + 1);
    tensors[slot].offset = t.offset;
    tensors[slot].elements = t.elements();
  }
  return tensors;
}

// The input and output widths of the projection whose weight is in
// `slot`; false for a slot that is not a projection of `m`.
bool ProjectionWidths(const DecoderGpuModel& m, TensorSlot slot, int64_t* in, int64_t* out) {
  if (!m.Block(slot).present()) return false;
  switch (slot) {
    case TensorSlot::kQkvWeight: *in = m.h, *out = m.q_width + 2 * m.kv_width; return true;
    case TensorSlot::kQWeight: *in = m.h, *out = m.q_width; return true;
    case TensorSlot::kKWeight:
    case TensorSlot::kVWeight: *in = m.h, *out = m.kv_width; return true;
    case TensorSlot::kOWeight: *in = m.q_width, *out = m.h; return true;
    case TensorSlot::kGateWeight:
    case TensorSlot::kUpWeight: *in = m.h, *out = m.f; return true;
    case TensorSlot::kDownWeight: *in = m.f, *out = m.h; return true;
    default: return false;
  }
}

// `lora` against the model (GpuBlockLora's contract), before anything is
// enqueued.
absl::Status CheckLora(const DecoderGpuModel& m, const GpuBlockLora& lora, const void* u) {
  if (lora.rank < 1 || u == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "BlockForwardGpu: LoRA rank %d with scratch %p: expected a rank >= 1 and scratch for "
        "u = x Aᵀ",
        lora.rank, u));
  }
  for (const GpuLoraAdapter& a : lora.adapters) {
    int64_t in = 0, out = 0;
    if (!ProjectionWidths(m, a.base, &in, &out)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "BlockForwardGpu: a LoRA adapter adapts tensor slot %d, which is not a projection of "
          "model '%s'",
          static_cast<int>(a.base), m.spec.name()));
    }
    if (a.in != in || a.out != out || a.a == nullptr || a.b == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "BlockForwardGpu: the LoRA adapter of tensor slot %d maps %d -> %d (A %p, B %p); "
          "model '%s' projects %d -> %d there and both matrices must be given",
          static_cast<int>(a.base), a.in, a.out, a.a, a.b, m.spec.name(), in, out));
    }
  }
  return absl::OkStatus();
}

// `prefix` against the model and batch (GpuBlockPrefix's contract), before
// anything is enqueued.
absl::Status CheckPrefix(const DecoderGpuModel& m, const GpuBlockPrefix& prefix, int seq) {
  if (prefix.tokens < 1 || prefix.keys == nullptr || prefix.values == nullptr ||
      prefix.scratch == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "BlockForwardGpu: a prefix of %d tokens with keys %p, values %p and scratch %p: "
        "expected tokens >= 1 and all three",
        prefix.tokens, prefix.keys, prefix.values, prefix.scratch));
  }
  if (prefix.tokens + seq > m.spec.max_positions()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "BlockForwardGpu: a prefix of %d tokens before seq %d needs %d positions; model '%s' "
        "has max_positions %d",
        prefix.tokens, seq, prefix.tokens + seq, m.spec.name(), m.spec.max_positions()));
  }
  return absl::OkStatus();
}

// The attention's shape for a block of `m` over `examples` sequences of
// `seq` tokens, the keys and values `kv_ld` elements apart (queries `q_ld`),
// with `scratch_bytes` of score scratch.
AttentionShape BlockAttentionShape(ElementType type, const DecoderGpuModel& m, int examples,
                                   int seq, int64_t q_ld, int64_t kv_ld, int64_t scratch_bytes) {
  AttentionShape shape;
  shape.examples = examples;
  shape.seq = seq;
  shape.heads = m.heads;
  shape.kv_heads = m.kv_heads;
  shape.head_dim = m.head_dim;
  shape.q_ld = q_ld;
  shape.kv_ld = kv_ld;
  shape.element_bytes = ElementBytes(type);
  shape.q_scale = 1.0f / std::sqrt(static_cast<float>(m.head_dim));
  shape.scratch_bytes = scratch_bytes;
  return shape;
}

}  // namespace

int64_t BlockPrefixScratchBytes(ElementType type, const DecoderGpuModel& m, int64_t tokens,
                                int seq) {
  return PrefixJoinedBytes(
      BlockAttentionShape(type, m, /*examples=*/1, seq, m.q_width, m.kv_width, 0), tokens);
}

const GpuLoraAdapter* GpuBlockLora::Find(TensorSlot base) const {
  for (const GpuLoraAdapter& a : adapters) {
    if (a.base == base) return &a;
  }
  return nullptr;
}

const GpuTensor& DecoderGpuModel::Find(const std::vector<GpuTensor>& tensors, TensorSlot slot) {
  static const GpuTensor kAbsent;
  const size_t index = static_cast<size_t>(slot);
  return index < tensors.size() ? tensors[index] : kAbsent;
}

absl::StatusOr<DecoderGpuModel> DecoderGpuModel::From(const ModelSpec& spec) {
  RETURN_IF_ERROR(CheckRuntimeSupports(spec));
  DecoderGpuModel m;
  m.spec = spec;
  m.h = spec.hidden_size();
  m.f = spec.ffn_size();
  m.e = EmbedDim(spec);
  m.heads = spec.num_heads();
  m.kv_heads = KvHeads(spec);
  m.head_dim = HeadDim(spec);
  m.q_width = QueryWidth(spec);
  m.kv_width = KvWidth(spec);
  m.norm = spec.norm() == RMS_NORM ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  m.norm_eps = NormEps(spec);
  m.swiglu = spec.activation() == SWIGLU;
  m.activation =
      spec.activation() == GELU ? PointwiseActivation::kGeluTanh : PointwiseActivation::kRelu;
  m.weights_in_out = WeightsInOut(spec);
  m.rotary = spec.positional() == ROTARY;
  m.has_positions = EmbeddingPartLayout(spec).Find(TensorSlot::kPositionTable) != nullptr;
  m.block_ = BySlot(BlockPartLayout(spec));
  m.head_ = BySlot(HeadPartLayout(spec));
  m.fused_qkv = m.Block(TensorSlot::kQkvWeight).present();
  return m;
}

absl::Status EmbedRowsGpu(Gemm& gemm, ElementType type, const DecoderGpuModel& m,
                          const void* token_rows, const void* position_rows,
                          const void* project_in, int examples, int seq, void* workspace,
                          void* hidden) {
  RETURN_IF_ERROR(CheckBatch("EmbedRowsGpu", examples, seq));
  if ((project_in != nullptr) != (m.e != m.h)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "EmbedRowsGpu: project_in must be given iff the embedding width %d differs from "
        "hidden_size %d",
        m.e, m.h));
  }
  if ((position_rows != nullptr) != m.has_positions) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "EmbedRowsGpu: position rows must be given iff model '%s' has a position table (%s)",
        m.spec.name(), m.has_positions ? "it has" : "it has none"));
  }
  const int64_t tokens = static_cast<int64_t>(examples) * seq;
  const void* word = token_rows;  // [tokens, h]
  if (project_in != nullptr) {
    // Without positions the projection is the embedding itself.
    void* projected = position_rows != nullptr ? workspace : hidden;
    RETURN_IF_ERROR(gemm.Linear(type, token_rows, tokens, m.e, project_in, m.h, projected));
    word = projected;
  }
  if (position_rows != nullptr) {
    GPU_RETURN_IF_ERROR(
        EmbedAdd(type, word, position_rows, examples, seq, m.h, hidden, gemm.stream()));
  } else if (word != hidden) {
    GPU_RETURN_IF_ERROR(cudaMemcpyAsync(hidden, word, tokens * m.h * ElementBytes(type),
                                        cudaMemcpyDeviceToDevice, gemm.stream()));
  }
  return absl::OkStatus();
}

namespace {

// The weights of a flat block part, in place.
class GpuPartWeights : public GpuBlockWeightSource {
 public:
  GpuPartWeights(const void* part, ElementType type) : part_(part), type_(type) {}
  absl::StatusOr<const void*> Get(int64_t offset, int64_t) override {
    return At(part_, offset, type_);
  }

 private:
  const void* part_;
  ElementType type_;
};

}  // namespace

absl::Status BlockForwardGpu(Gemm& gemm, ElementType type, const DecoderGpuModel& m,
                             const void* block_part, const int32_t* lengths, int examples,
                             int seq, void* hidden, void* workspace, const GpuRotary& rotary,
                             const GpuBlockLora* lora, void* lora_u,
                             const GpuBlockPrefix* prefix) {
  GpuPartWeights weights(block_part, type);
  return BlockForwardGpu(gemm, type, m, weights, lengths, examples, seq, hidden, workspace,
                         rotary, lora, lora_u, prefix);
}

absl::Status BlockForwardGpu(Gemm& gemm, ElementType type, const DecoderGpuModel& m,
                             GpuBlockWeightSource& weights, const int32_t* lengths, int examples,
                             int seq, void* hidden, void* workspace, const GpuRotary& rotary,
                             const GpuBlockLora* lora, void* lora_u,
                             const GpuBlockPrefix* prefix) {
  RETURN_IF_ERROR(CheckBatch("BlockForwardGpu", examples, seq));
  if (prefix != nullptr) RETURN_IF_ERROR(CheckPrefix(m, *prefix, seq));
  // The real tokens' positions: k .. k + seq - 1 behind a prefix of k.
  const int64_t first_position = prefix == nullptr ? 0 : prefix->tokens;
  if (m.rotary && (rotary.values == nullptr || rotary.positions < first_position + seq)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "BlockForwardGpu: model '%s' is rotary and needs the angles of %d positions; got a "
        "table of %d",
        m.spec.name(), first_position + seq, rotary.values == nullptr ? 0 : rotary.positions));
  }
  if (lora != nullptr) RETURN_IF_ERROR(CheckLora(m, *lora, lora_u));
  const cudaStream_t stream = gemm.stream();
  const int64_t T = static_cast<int64_t>(examples) * seq;
  const int64_t h = m.h, f = m.f, qw = m.q_width, kvw = m.kv_width, d = m.head_dim;
  const int64_t qkv = qw + 2 * kvw;
  const int64_t workspace_elements = BlockWorkspaceFloats(m.spec, examples, seq);

  // Workspace (elements of `type`), attention phase: q | k | v, either
  // [T, q] | [T, kv] | [T, kv] or GPT-2's fused rows [T, q + 2kv].
  void* q = workspace;
  void* k = m.fused_qkv ? At(q, qw, type) : At(q, T * qw, type);
  void* v = m.fused_qkv ? At(k, kvw, type) : At(k, T * kvw, type);
  const int64_t ldq = m.fused_qkv ? qkv : qw;    // elements between query rows
  const int64_t ldkv = m.fused_qkv ? qkv : kvw;  // between key (and value) rows
  void* a = At(workspace, T * qkv, type);  // [T, h]  norm1(x), then o_proj's output
  // From a to the workspace's end (BlockForwardWorkspaceElements: at least
  // T · max(h, q) + seq² elements) is the attention's scratch once the
  // projections have read norm1(x); it starts 16-byte aligned.
  const int64_t skip = (16 - reinterpret_cast<uintptr_t>(a) % 16) % 16;
  void* scratch = static_cast<char*>(a) + skip;
  const int64_t scratch_bytes = (workspace_elements - T * qkv) * ElementBytes(type) - skip;
  // FFN phase (reuses the same memory):
  void* normed = workspace;             // [T, h]  norm2(x), then down's output
  void* inner = At(normed, T * h, type);  // [T, f]  act(up(x')), or gate then silu(gate) · up
  void* up = At(inner, T * f, type);      // [T, f]  SwiGLU's up(x')

  // Each weight is asked for right before its kernel (matrices one at a
  // time); a slot the model does not have is nullptr.
  auto get = [&](TensorSlot slot) -> absl::StatusOr<const void*> {
    const GpuTensor& t = m.Block(slot);
    if (!t.present()) return static_cast<const void*>(nullptr);
    return weights.Get(t.offset, t.elements);
  };
  // A projection: out [T, out_width] = in · W (+ its LoRA adapter's term,
  // + b, then act), `in` rows in_ld elements apart (0: in_width).
  auto linear = [&](const void* in, int64_t in_width, int64_t in_ld, TensorSlot weight,
                    TensorSlot bias, int64_t out_width, void* out,
                    PointwiseActivation act) -> absl::Status {
    ASSIGN_OR_RETURN(const void* w, get(weight));
    LinearLayout layout;
    layout.weight_in_out = m.weights_in_out;
    layout.x_ld = in_ld;
    RETURN_IF_ERROR(gemm.Linear(type, in, T, in_width, w, out_width, out, layout));
    if (const GpuLoraAdapter* adapter = lora == nullptr ? nullptr : lora->Find(weight)) {
      // u = s · x Aᵀ, then out += u Bᵀ (A and B are nn.Linear [out, in]
      // whatever the base weight's layout).
      LinearLayout x_rows;
      x_rows.x_ld = in_ld;
      RETURN_IF_ERROR(gemm.Linear(type, in, T, in_width, adapter->a, lora->rank, lora_u, x_rows));
      GPU_RETURN_IF_ERROR(ScaleInPlace(type, lora_u, lora->scaling, T * lora->rank, stream));
      LinearLayout accumulate;
      accumulate.accumulate = true;
      RETURN_IF_ERROR(
          gemm.Linear(type, lora_u, T, lora->rank, adapter->b, out_width, out, accumulate));
    }
    ASSIGN_OR_RETURN(const void* b, get(bias));
    if (b != nullptr || act != PointwiseActivation::kNone) {
      GPU_RETURN_IF_ERROR(BiasActivation(type, out, b, T, out_width, act, stream));
    }
    return absl::OkStatus();
  };
  auto norm = [&](TensorSlot weight, TensorSlot bias, void* out) -> absl::Status {
    ASSIGN_OR_RETURN(const void* w, get(weight));
    ASSIGN_OR_RETURN(const void* b, get(bias));
    GPU_RETURN_IF_ERROR(NormRows(type, m.norm, hidden, w, b, m.norm_eps, T, h, out, stream));
    return absl::OkStatus();
  };
  constexpr PointwiseActivation kNone = PointwiseActivation::kNone;

  // ---- attention: x += o_proj(attention(norm1(x))) ----
  RETURN_IF_ERROR(norm(TensorSlot::kAttnNormWeight, TensorSlot::kAttnNormBias, a));
  if (m.fused_qkv) {
    RETURN_IF_ERROR(
        linear(a, h, 0, TensorSlot::kQkvWeight, TensorSlot::kQkvBias, qkv, q, kNone));
  } else {
    RETURN_IF_ERROR(linear(a, h, 0, TensorSlot::kQWeight, TensorSlot::kQBias, qw, q, kNone));
    RETURN_IF_ERROR(linear(a, h, 0, TensorSlot::kKWeight, TensorSlot::kKBias, kvw, k, kNone));
    RETURN_IF_ERROR(linear(a, h, 0, TensorSlot::kVWeight, TensorSlot::kVBias, kvw, v, kNone));
  }
  // Per token and head: QK-norm (Qwen3), then the rotary embedding at the
  // token's position (LLaMA, Qwen; behind a prefix, k + t). The 1/sqrt(d)
  // query scale, computed as the CPU's, is the scores' alpha.
  const float* angles = m.rotary ? rotary.values : nullptr;
  ASSIGN_OR_RETURN(const void* q_norm, get(TensorSlot::kQNorm));  // Qwen3's [d]
  GPU_RETURN_IF_ERROR(NormRotateHeads(type, q, T, ldq, m.heads, d, q_norm, m.norm_eps, angles,
                                      seq, first_position, stream));
  ASSIGN_OR_RETURN(const void* k_norm, get(TensorSlot::kKNorm));
  GPU_RETURN_IF_ERROR(NormRotateHeads(type, k, T, ldkv, m.kv_heads, d, k_norm, m.norm_eps,
                                      angles, seq, first_position, stream));
  const AttentionShape shape =
      BlockAttentionShape(type, m, examples, seq, ldq, ldkv, scratch_bytes);
  AttentionPrefix attention_prefix;
  if (prefix != nullptr) {
    attention_prefix.tokens = prefix->tokens;
    attention_prefix.keys = prefix->keys;
    attention_prefix.values = prefix->values;
    attention_prefix.joined = prefix->scratch;
  }
  RETURN_IF_ERROR(CausalAttention(gemm, type, shape, q, k, v, lengths, scratch,
                                  prefix == nullptr ? nullptr : &attention_prefix));
  // o_proj reads the context from the queries' rows.
  RETURN_IF_ERROR(linear(q, qw, ldq, TensorSlot::kOWeight, TensorSlot::kOBias, h, a, kNone));
  GPU_RETURN_IF_ERROR(ResidualAdd(type, hidden, a, T * h, stream));

  // ---- FFN: x += down(act(up(x'))), or down(silu(gate(x')) · up(x')), x' = norm2(x) ----
  RETURN_IF_ERROR(norm(TensorSlot::kFfnNormWeight, TensorSlot::kFfnNormBias, normed));
  if (m.swiglu) {
    RETURN_IF_ERROR(
        linear(normed, h, 0, TensorSlot::kGateWeight, TensorSlot::kGateBias, f, inner, kNone));
    RETURN_IF_ERROR(
        linear(normed, h, 0, TensorSlot::kUpWeight, TensorSlot::kUpBias, f, up, kNone));
    GPU_RETURN_IF_ERROR(SwiGluInPlace(type, inner, up, T * f, stream));
  } else {
    RETURN_IF_ERROR(linear(normed, h, 0, TensorSlot::kUpWeight, TensorSlot::kUpBias, f, inner,
                           m.activation));
  }
  RETURN_IF_ERROR(
      linear(inner, f, 0, TensorSlot::kDownWeight, TensorSlot::kDownBias, h, normed, kNone));
  GPU_RETURN_IF_ERROR(ResidualAdd(type, hidden, normed, T * h, stream));
  return absl::OkStatus();
}

absl::Status HeadLossFromRowsGpu(cudaStream_t stream, ElementType type, const DecoderGpuModel& m,
                                 const void* head_part, const void* label_rows,
                                 const void* hidden, const int32_t* lengths, int examples,
                                 int seq, int n_labels, const int32_t* labels, float* losses) {
  RETURN_IF_ERROR(CheckBatch("HeadLossFromRowsGpu", examples, seq));
  if (n_labels < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("HeadLossFromRowsGpu: n_labels %d must be >= 1", n_labels));
  }
  auto tensor = [&](TensorSlot slot) -> const void* {
    const GpuTensor& t = m.Head(slot);
    return t.present() ? At(head_part, t.offset, type) : nullptr;
  };
  HeadNorm norm;
  norm.w = tensor(TensorSlot::kFinalNormWeight);
  norm.b = tensor(TensorSlot::kFinalNormBias);
  norm.kind = norm.w != nullptr ? m.norm : NormKind::kNone;
  norm.eps = m.norm_eps;
  GPU_RETURN_IF_ERROR(LabelHeadLoss(type, hidden, lengths, labels, norm,
                                    tensor(TensorSlot::kProjectOut), label_rows, examples, seq,
                                    m.h, m.e, n_labels, losses, stream));
  return absl::OkStatus();
}

}  // namespace zosched
