#include "runtime/cuda/nn/opt_forward_gpu.h"

#include <cmath>

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
#include "runtime/nn/opt_forward.h"
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

absl::Status OptBlockForwardGpu(Gemm& gemm, ElementType type, const OptGpuModel& m,
                                const void* block_part, const int32_t* lengths, int examples,
                                int seq, void* hidden, void* workspace) {
  RETURN_IF_ERROR(CheckBatch("OptBlockForwardGpu", examples, seq));
  const cudaStream_t stream = gemm.stream();
  const int64_t T = static_cast<int64_t>(examples) * seq;
  const int64_t h = m.h, f = m.f;
  auto w = [&](int64_t offset) { return At(block_part, offset, type); };

  // Workspace (elements of `type`), attention phase:
  void* a = workspace;           // [T, h]  LN1(x), then attention context
  void* q = At(a, T * h, type);  // [T, h]  queries, then out_proj output
  void* k = At(q, T * h, type);  // [T, h]
  void* v = At(k, T * h, type);  // [T, h]
  // FFN phase (reuses the same memory):
  void* inner = q;  // [T, f]  relu(fc1(LN2(x)));  a: LN2(x), then fc2 output

  // ---- attention: x += out_proj(attn(LN1(x))) ----
  GPU_RETURN_IF_ERROR(LayerNormRows(type, hidden, w(m.ln1_w), w(m.ln1_b), T, h, a, stream));
  RETURN_IF_ERROR(gemm.Linear(type, a, T, h, w(m.q_w), h, q));
  GPU_RETURN_IF_ERROR(BiasActivation(type, q, w(m.q_b), T, h, PointwiseActivation::kNone, stream));
  RETURN_IF_ERROR(gemm.Linear(type, a, T, h, w(m.k_w), h, k));
  GPU_RETURN_IF_ERROR(BiasActivation(type, k, w(m.k_b), T, h, PointwiseActivation::kNone, stream));
  RETURN_IF_ERROR(gemm.Linear(type, a, T, h, w(m.v_w), h, v));
  GPU_RETURN_IF_ERROR(BiasActivation(type, v, w(m.v_b), T, h, PointwiseActivation::kNone, stream));
  // OPT scales the query after its bias, by 1/sqrt(d) computed as the CPU's.
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(m.head_dim));
  GPU_RETURN_IF_ERROR(CausalAttention(type, q, k, v, lengths, examples, seq, m.heads, m.head_dim,
                                      q_scale, a, stream));
  RETURN_IF_ERROR(gemm.Linear(type, a, T, h, w(m.o_w), h, q));
  GPU_RETURN_IF_ERROR(BiasActivation(type, q, w(m.o_b), T, h, PointwiseActivation::kNone, stream));
  GPU_RETURN_IF_ERROR(ResidualAdd(type, hidden, q, T * h, stream));

  // ---- FFN: x += fc2(relu(fc1(LN2(x)))) (OPT's FFN is ReLU: CheckRuntimeSupports) ----
  GPU_RETURN_IF_ERROR(LayerNormRows(type, hidden, w(m.ln2_w), w(m.ln2_b), T, h, a, stream));
  RETURN_IF_ERROR(gemm.Linear(type, a, T, h, w(m.fc1_w), f, inner));
  GPU_RETURN_IF_ERROR(
      BiasActivation(type, inner, w(m.fc1_b), T, f, PointwiseActivation::kRelu, stream));
  RETURN_IF_ERROR(gemm.Linear(type, inner, T, f, w(m.fc2_w), h, a));
  GPU_RETURN_IF_ERROR(
      BiasActivation(type, a, w(m.fc2_b), T, h, PointwiseActivation::kNone, stream));
  GPU_RETURN_IF_ERROR(ResidualAdd(type, hidden, a, T * h, stream));
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
