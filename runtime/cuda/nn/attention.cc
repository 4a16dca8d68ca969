#include "runtime/cuda/nn/attention.h"

#include <cuda_runtime.h>

#include "absl/strings/str_format.h"
#include "base/gpu_check.h"
#include "base/status_macros.h"
#include "kernel_plans/attention_plan.h"
#include "runtime/cuda/nn/causal_softmax.h"
#include "runtime/cuda/nn/prefix_join.h"

namespace zosched {
namespace {

int64_t AlignUp16(int64_t bytes) { return (bytes + 15) / 16 * 16; }

// Runs the plan's steps on the GPU: products through the Gemm, softmax
// passes through their kernel. The plan's score columns are `prefix` keys
// (0 without a prefix), then those of examples of `seq` positions whose
// lengths are at `lengths` (device).
class GpuAttentionSteps : public AttentionSteps {
 public:
  GpuAttentionSteps(Gemm& gemm, ElementType type, void* q, const void* k, const void* v,
                    const int32_t* lengths, int64_t seq, int64_t prefix, void* scratch)
      : gemm_(gemm), type_(type), q_(q), k_(k), v_(v), lengths_(lengths), seq_(seq),
        prefix_(prefix), scratch_(scratch) {}

  absl::Status Product(const AttentionProduct& p) override {
    if (p.c.buffer != AttentionBuffer::kQuery && p.c.buffer != AttentionBuffer::kScratch) {
      return absl::InternalError("causal attention: a product would write the keys or values");
    }
    const Gemm::MatrixBatch a{Input(p.a), p.a.ld, p.a.stride};
    const Gemm::MatrixBatch b{Input(p.b), p.b.ld, p.b.stride};
    void* c = static_cast<char*>(p.c.buffer == AttentionBuffer::kQuery ? q_ : scratch_) + p.c.bytes;
    return gemm_.StridedBatched(type_, p.c_fp32 ? ElementType::kF32 : type_, p.transpose_a, p.m,
                                p.n, p.k, p.alpha, a, b, c, p.c.ld, p.c.stride, p.batch);
  }

  absl::Status Softmax(const SoftmaxPass& s) override {
    float* scores = reinterpret_cast<float*>(static_cast<char*>(scratch_) + s.bytes);
    GPU_RETURN_IF_ERROR(CausalSoftmaxRows(type_, scores, lengths_, s.example, seq_, prefix_,
                                          s.first_row, s.rows, s.keys, s.ld, s.heads,
                                          s.head_stride, gemm_.stream()));
    return absl::OkStatus();
  }

 private:
  const void* Input(const StridedOperand& o) const {
    const void* base = scratch_;
    switch (o.buffer) {
      case AttentionBuffer::kQuery: base = q_; break;
      case AttentionBuffer::kKey: base = k_; break;
      case AttentionBuffer::kValue: base = v_; break;
      case AttentionBuffer::kScratch: break;
    }
    return static_cast<const char*>(base) + o.bytes;
  }

  Gemm& gemm_;
  ElementType type_;
  void* q_;
  const void* k_;
  const void* v_;
  const int32_t* lengths_;
  int64_t seq_;
  int64_t prefix_;
  void* scratch_;
};

// Attention over `prefix` (CausalAttention's contract), example by example:
// join its rows behind the prefix's, run its plan, copy its context back.
absl::Status PrefixAttention(Gemm& gemm, ElementType type, const AttentionShape& shape,
                             char* q, const char* k, const char* v, const int32_t* lengths,
                             void* scratch, const AttentionPrefix& prefix) {
  const int64_t tokens = prefix.tokens;
  if (tokens < 1 || prefix.keys == nullptr || prefix.values == nullptr ||
      prefix.joined == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "causal attention: a prefix of %d tokens with keys %p, values %p and scratch %p: "
        "expected tokens >= 1 and all three",
        tokens, prefix.keys, prefix.values, prefix.joined));
  }
  const AttentionShape joined = PrefixJoinedShape(shape, tokens);
  if (absl::Status s = PlanAttentionTiling(joined).status(); !s.ok()) {
    return absl::Status(s.code(), absl::StrFormat("%s (the keys of a prefix of %d tokens, then "
                                                  "seq %d)",
                                                  s.message(), tokens, shape.seq));
  }
  const int64_t bytes = shape.element_bytes;
  const int64_t qw = joined.q_ld, kvw = joined.kv_ld;
  // prefix.joined: queries [k + seq, qw] | keys [k + seq, kvw] | values [k + seq, kvw].
  char* jq = static_cast<char*>(prefix.joined);
  char* jk = jq + AlignUp16(joined.seq * qw * bytes);
  char* jv = jk + AlignUp16(joined.seq * kvw * bytes);
  const cudaStream_t stream = gemm.stream();
  for (int64_t e = 0; e < shape.examples; ++e) {
    char* qe = q + e * shape.seq * shape.q_ld * bytes;  // [seq, q_ld]
    const int64_t kv_at = e * shape.seq * shape.kv_ld * bytes;
    PrefixJoin joins[kMaxPrefixJoins];
    joins[0] = {nullptr, qe, shape.q_ld, qw, jq};  // the prefix's rows query nothing
    joins[1] = {prefix.keys, k + kv_at, shape.kv_ld, kvw, jk};
    joins[2] = {prefix.values, v + kv_at, shape.kv_ld, kvw, jv};
    GPU_RETURN_IF_ERROR(JoinPrefixRows(type, joins, kMaxPrefixJoins, tokens, shape.seq, stream));
    GpuAttentionSteps steps(gemm, type, jq, jk, jv, lengths + e, shape.seq, tokens, scratch);
    RETURN_IF_ERROR(ForEachAttentionStep(joined, steps));
    // The real queries' context: rows k .. k + seq of the joined queries.
    GPU_RETURN_IF_ERROR(cudaMemcpy2DAsync(qe, shape.q_ld * bytes, jq + tokens * qw * bytes,
                                          qw * bytes, qw * bytes, shape.seq,
                                          cudaMemcpyDeviceToDevice, stream));
  }
  return absl::OkStatus();
}

}  // namespace

int64_t PrefixJoinedBytes(const AttentionShape& shape, int64_t tokens) {
  const int64_t rows = tokens + shape.seq;
  return AlignUp16(rows * shape.heads * shape.head_dim * shape.element_bytes) +
         2 * AlignUp16(rows * shape.kv_heads * shape.head_dim * shape.element_bytes);
}

absl::Status CausalAttention(Gemm& gemm, ElementType type, const AttentionShape& shape,
                             void* q_then_context, const void* k, const void* v,
                             const int32_t* lengths, void* scratch,
                             const AttentionPrefix* prefix) {
  if (shape.element_bytes != ElementBytes(type)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "causal attention: element_bytes %d for an element type of %d bytes",
        shape.element_bytes, ElementBytes(type)));
  }
  RETURN_IF_ERROR(PlanAttentionTiling(shape).status());  // nothing enqueued on a bad shape
  if (prefix != nullptr) {
    return PrefixAttention(gemm, type, shape, static_cast<char*>(q_then_context),
                           static_cast<const char*>(k), static_cast<const char*>(v), lengths,
                           scratch, *prefix);
  }
  GpuAttentionSteps steps(gemm, type, q_then_context, k, v, lengths, shape.seq, /*prefix=*/0,
                          scratch);
  return ForEachAttentionStep(shape, steps);
}

}  // namespace zosched
