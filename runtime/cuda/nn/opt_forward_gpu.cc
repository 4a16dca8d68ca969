#include "runtime/cuda/nn/opt_forward_gpu.h"

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
#include "runtime/cuda/nn/layer_norm.h"
#include "runtime/cuda/nn/residual_add.h"
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

// The offset of `suffix` in `layout`, or -1 when it has no such tensor.
int64_t OffsetOrNone(const PartLayout& layout, const std::string& suffix) {
  const TensorSlice* slice = layout.Find(suffix);
  return slice == nullptr ? -1 : slice->offset;
}

}  // namespace

absl::StatusOr<OptGpuModel> OptGpuModel::From(const ModelSpec& spec) {
  RETURN_IF_ERROR(CheckRuntimeSupports(spec));
  OptGpuModel m;
  m.h = spec.hidden_size();
  m.f = spec.ffn_size();
  m.e = EmbedDim(spec);
  m.heads = spec.num_heads();
  m.head_dim = HeadDim(spec);
  m.vocab = spec.vocab_size();
  m.final_norm = spec.final_norm();
  // The suffixes MakeOptBlockView and MakeOptHeadView read.
  const PartLayout block = BlockPartLayout(spec);
  m.ln1_w = block.Get("self_attn_layer_norm.weight").offset;
  m.ln1_b = block.Get("self_attn_layer_norm.bias").offset;
  m.q_w = block.Get("self_attn.q_proj.weight").offset;
  m.q_b = block.Get("self_attn.q_proj.bias").offset;
  m.k_w = block.Get("self_attn.k_proj.weight").offset;
  m.k_b = block.Get("self_attn.k_proj.bias").offset;
  m.v_w = block.Get("self_attn.v_proj.weight").offset;
  m.v_b = block.Get("self_attn.v_proj.bias").offset;
  m.o_w = block.Get("self_attn.out_proj.weight").offset;
  m.o_b = block.Get("self_attn.out_proj.bias").offset;
  m.ln2_w = block.Get("final_layer_norm.weight").offset;
  m.ln2_b = block.Get("final_layer_norm.bias").offset;
  m.fc1_w = block.Get("fc1.weight").offset;
  m.fc1_b = block.Get("fc1.bias").offset;
  m.fc2_w = block.Get("fc2.weight").offset;
  m.fc2_b = block.Get("fc2.bias").offset;
  const PartLayout head = HeadPartLayout(spec);
  m.head_ln_w = OffsetOrNone(head, "final_layer_norm.weight");
  m.head_ln_b = OffsetOrNone(head, "final_layer_norm.bias");
  m.project_out = OffsetOrNone(head, "project_out.weight");
  return m;
}

absl::Status OptEmbedRowsGpu(Gemm& gemm, ElementType type, const OptGpuModel& m,
                             const void* token_rows, const void* position_rows,
                             const void* project_in, int examples, int seq, void* workspace,
                             void* hidden) {
  RETURN_IF_ERROR(CheckBatch("OptEmbedRowsGpu", examples, seq));
  if ((project_in != nullptr) != (m.e != m.h)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "OptEmbedRowsGpu: project_in must be given iff the embedding width %d differs from "
        "hidden_size %d",
        m.e, m.h));
  }
  const int64_t tokens = static_cast<int64_t>(examples) * seq;
  const void* word = token_rows;  // [tokens, h]
  if (project_in != nullptr) {
    RETURN_IF_ERROR(gemm.Linear(type, token_rows, tokens, m.e, project_in, m.h, workspace));
    word = workspace;
  }
  GPU_RETURN_IF_ERROR(
      EmbedAdd(type, word, position_rows, examples, seq, m.h, hidden, gemm.stream()));
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

absl::Status OptBlockForwardGpu(Gemm& gemm, ElementType type, const OptGpuModel& m,
                                const void* block_part, const int32_t* lengths, int examples,
                                int seq, void* hidden, void* workspace) {
  GpuPartWeights weights(block_part, type);
  return OptBlockForwardGpu(gemm, type, m, weights, lengths, examples, seq, hidden, workspace);
}

absl::Status OptBlockForwardGpu(Gemm& gemm, ElementType type, const OptGpuModel& m,
                                GpuBlockWeightSource& weights, const int32_t* lengths,
                                int examples, int seq, void* hidden, void* workspace) {
  RETURN_IF_ERROR(CheckBatch("OptBlockForwardGpu", examples, seq));
  const cudaStream_t stream = gemm.stream();
  const int64_t T = static_cast<int64_t>(examples) * seq;
  const int64_t h = m.h, f = m.f;

  // Workspace (elements of `type`), attention phase:
  void* q = workspace;           // [T, h]  queries, then the attention context
  void* k = At(q, T * h, type);  // [T, h]
  void* v = At(k, T * h, type);  // [T, h]
  void* a = At(v, T * h, type);  // [T, h]  LN1(x), then out_proj output
  // From a to the workspace's end, at least T · h + seq² elements
  // (BlockForwardWorkspaceElements), is the attention's scratch once the
  // projections have read LN1(x); it starts 16-byte aligned.
  const int64_t skip = (16 - reinterpret_cast<uintptr_t>(a) % 16) % 16;
  void* scratch = static_cast<char*>(a) + skip;
  const int64_t scratch_bytes = (T * h + int64_t{seq} * seq) * ElementBytes(type) - skip;
  // FFN phase (reuses the same memory):
  void* normed = workspace;                // [T, h]  LN2(x), then fc2 output
  void* inner = At(normed, T * h, type);  // [T, f]  relu(fc1(LN2(x)))

  // Each weight is asked for right before its kernel (matrices one at a time).
  // A projection: out = in · Wᵀ + b, W [out_width, in_width].
  auto linear = [&](const void* in, int64_t in_width, int64_t w_at, int64_t b_at,
                    int64_t out_width, void* out, PointwiseActivation act) -> absl::Status {
    ASSIGN_OR_RETURN(const void* w, weights.Get(w_at, out_width * in_width));
    RETURN_IF_ERROR(gemm.Linear(type, in, T, in_width, w, out_width, out));
    ASSIGN_OR_RETURN(const void* b, weights.Get(b_at, out_width));
    GPU_RETURN_IF_ERROR(BiasActivation(type, out, b, T, out_width, act, stream));
    return absl::OkStatus();
  };
  auto layer_norm = [&](int64_t w_at, int64_t b_at, void* out) -> absl::Status {
    ASSIGN_OR_RETURN(const void* w, weights.Get(w_at, h));
    ASSIGN_OR_RETURN(const void* b, weights.Get(b_at, h));
    GPU_RETURN_IF_ERROR(LayerNormRows(type, hidden, w, b, T, h, out, stream));
    return absl::OkStatus();
  };
  constexpr PointwiseActivation kNone = PointwiseActivation::kNone;

  // ---- attention: x += out_proj(attn(LN1(x))) ----
  RETURN_IF_ERROR(layer_norm(m.ln1_w, m.ln1_b, a));
  RETURN_IF_ERROR(linear(a, h, m.q_w, m.q_b, h, q, kNone));
  RETURN_IF_ERROR(linear(a, h, m.k_w, m.k_b, h, k, kNone));
  RETURN_IF_ERROR(linear(a, h, m.v_w, m.v_b, h, v, kNone));
  // OPT scales the query after its bias, by 1/sqrt(d) computed as the CPU's.
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(m.head_dim));
  RETURN_IF_ERROR(CausalAttention(gemm, type, q, k, v, lengths, examples, seq, m.heads,
                                  m.head_dim, q_scale, scratch, scratch_bytes));
  RETURN_IF_ERROR(linear(q, h, m.o_w, m.o_b, h, a, kNone));
  GPU_RETURN_IF_ERROR(ResidualAdd(type, hidden, a, T * h, stream));

  // ---- FFN: x += fc2(relu(fc1(LN2(x)))) (OPT's FFN is ReLU: CheckRuntimeSupports) ----
  RETURN_IF_ERROR(layer_norm(m.ln2_w, m.ln2_b, normed));
  RETURN_IF_ERROR(linear(normed, h, m.fc1_w, m.fc1_b, f, inner, PointwiseActivation::kRelu));
  RETURN_IF_ERROR(linear(inner, f, m.fc2_w, m.fc2_b, h, normed, kNone));
  GPU_RETURN_IF_ERROR(ResidualAdd(type, hidden, normed, T * h, stream));
  return absl::OkStatus();
}

absl::Status OptHeadLossGpu(cudaStream_t stream, ElementType type, const OptGpuModel& m,
                            const void* head_part, const void* label_rows, const void* hidden,
                            const int32_t* lengths, int examples, int seq, int n_labels,
                            const int32_t* labels, float* losses) {
  RETURN_IF_ERROR(CheckBatch("OptHeadLossGpu", examples, seq));
  if (n_labels < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("OptHeadLossGpu: n_labels %d must be >= 1", n_labels));
  }
  auto w = [&](int64_t offset) { return offset < 0 ? nullptr : At(head_part, offset, type); };
  GPU_RETURN_IF_ERROR(LabelHeadLoss(type, hidden, lengths, labels, w(m.head_ln_w), w(m.head_ln_b),
                                    w(m.project_out), label_rows, examples, seq, m.h, m.e, n_labels,
                                    losses, stream));
  return absl::OkStatus();
}

}  // namespace zosched
