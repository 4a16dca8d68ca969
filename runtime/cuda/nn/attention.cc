#include "runtime/cuda/nn/attention.h"

#include <cuda_runtime.h>

#include "absl/strings/str_format.h"
#include "base/gpu_check.h"
#include "base/status_macros.h"
#include "kernel_plans/attention_plan.h"
#include "runtime/cuda/nn/causal_softmax.h"

namespace zosched {
namespace {

// Runs the plan's steps on the GPU: products through the Gemm, softmax
// passes through their kernel.
class GpuAttentionSteps : public AttentionSteps {
 public:
  GpuAttentionSteps(Gemm& gemm, ElementType type, void* q, const void* k, const void* v,
                    const int32_t* lengths, int64_t seq, void* scratch)
      : gemm_(gemm), type_(type), q_(q), k_(k), v_(v), lengths_(lengths), seq_(seq),
        scratch_(scratch) {}

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
    GPU_RETURN_IF_ERROR(CausalSoftmaxRows(type_, scores, lengths_, s.example, seq_, s.first_row,
                                          s.rows, s.keys, s.ld, s.heads, s.head_stride,
                                          gemm_.stream()));
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
  void* scratch_;
};

}  // namespace

absl::Status CausalAttention(Gemm& gemm, ElementType type, const AttentionShape& shape,
                             void* q_then_context, const void* k, const void* v,
                             const int32_t* lengths, void* scratch) {
  if (shape.element_bytes != ElementBytes(type)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "causal attention: element_bytes %d for an element type of %d bytes",
        shape.element_bytes, ElementBytes(type)));
  }
  RETURN_IF_ERROR(PlanAttentionTiling(shape).status());  // nothing enqueued on a bad shape
  GpuAttentionSteps steps(gemm, type, q_then_context, k, v, lengths, shape.seq, scratch);
  return ForEachAttentionStep(shape, steps);
}

}  // namespace zosched
