#include "runtime/cuda/nn/attention_plan.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace zosched {
namespace {

constexpr int64_t kScoreRowAlignment = 4;  // floats: 16 bytes

int64_t ScoreLd(int64_t keys) {
  return (keys + kScoreRowAlignment - 1) / kScoreRowAlignment * kScoreRowAlignment;
}

}  // namespace

absl::StatusOr<AttentionTiling> PlanAttentionTiling(const AttentionShape& shape) {
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  if (shape.examples < 1 || shape.seq < 1 || shape.heads < 1 || shape.head_dim < 1 ||
      shape.seq > kInt32Max || shape.heads * shape.head_dim > kInt32Max) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "causal attention: examples %d, seq %d, heads %d, head_dim %d: expected each >= 1, "
        "with seq and heads * head_dim at most %d (cuBLAS's int dimensions)",
        shape.examples, shape.seq, shape.heads, shape.head_dim, kInt32Max));
  }
  if (shape.element_bytes != 2 && shape.element_bytes != 4) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "causal attention: element_bytes %d: expected 4 (FP32) or 2 (FP16, BF16)",
        shape.element_bytes));
  }
  const int64_t row_floats = ScoreLd(shape.seq);
  const int64_t scratch_floats = shape.scratch_bytes / 4;
  if (scratch_floats < row_floats) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "causal attention: scratch of %d bytes holds no row of scores; seq %d needs at least "
        "%d bytes (one head's scores at once: %d)",
        shape.scratch_bytes, shape.seq, 4 * row_floats, 4 * row_floats * shape.seq));
  }
  AttentionTiling tiling;
  const int64_t head_floats = shape.seq * row_floats;
  if (scratch_floats >= head_floats) {
    tiling.heads_per_call = std::min(shape.heads, scratch_floats / head_floats);
    tiling.rows_per_chunk = shape.seq;
  } else {
    tiling.heads_per_call = 1;
    tiling.rows_per_chunk = scratch_floats / row_floats;
  }
  return tiling;
}

absl::Status ForEachAttentionStep(const AttentionShape& shape, AttentionSteps& steps) {
  ASSIGN_OR_RETURN(const AttentionTiling tiling, PlanAttentionTiling(shape));
  const int64_t width = shape.heads * shape.head_dim;  // row stride of Q, K, V
  const int64_t t_per_float = 4 / shape.element_bytes;
  // An operand of Q, K or V: the head_dim columns of head `head` from
  // position `row` of example `e` on, one head after another.
  auto rows_of = [&](AttentionBuffer buffer, int64_t e, int64_t row, int64_t head) {
    StridedOperand operand;
    operand.buffer = buffer;
    operand.bytes = ((e * shape.seq + row) * width + head * shape.head_dim) * shape.element_bytes;
    operand.ld = width;
    operand.stride = shape.head_dim;
    return operand;
  };
  for (int64_t e = 0; e < shape.examples; ++e) {
    for (int64_t h0 = 0; h0 < shape.heads; h0 += tiling.heads_per_call) {
      const int64_t heads = std::min(tiling.heads_per_call, shape.heads - h0);
      for (int64_t r0 = 0; r0 < shape.seq; r0 += tiling.rows_per_chunk) {
        const int64_t r1 = std::min(shape.seq, r0 + tiling.rows_per_chunk);
        const int64_t rows = r1 - r0, keys = r1, ld = ScoreLd(keys);
        // Column-major, the row-major scores [rows, keys] are Sᵀ [keys x rows]
        // = K[0:r1] · Q[r0:r1]ᵀ; the row-major K is Kᵀ (hence transpose_a)
        // and the row-major Q rows are Qᵀ.
        AttentionProduct scores;
        scores.transpose_a = true;
        scores.m = keys;
        scores.n = rows;
        scores.k = shape.head_dim;
        scores.alpha = shape.q_scale;
        scores.a = rows_of(AttentionBuffer::kKey, e, 0, h0);
        scores.b = rows_of(AttentionBuffer::kQuery, e, r0, h0);
        scores.c = {AttentionBuffer::kScratch, 0, ld, rows * ld};
        scores.c_fp32 = true;
        scores.batch = heads;
        RETURN_IF_ERROR(steps.Product(scores));

        SoftmaxPass softmax;
        softmax.example = e;
        softmax.first_row = r0;
        softmax.rows = rows;
        softmax.keys = keys;
        softmax.ld = ld;
        softmax.heads = heads;
        softmax.head_stride = rows * ld;
        softmax.bytes = 0;
        RETURN_IF_ERROR(steps.Softmax(softmax));

        // Column-major, the context rows are Cᵀ [head_dim x rows] =
        // V[0:r1]ᵀ [head_dim x keys] · Pᵀ [keys x rows]: the row-major V and
        // P as they lie. P's rows are the scores' rows, in elements of T.
        AttentionProduct context;
        context.m = shape.head_dim;
        context.n = rows;
        context.k = keys;
        context.a = rows_of(AttentionBuffer::kValue, e, 0, h0);
        context.b = {AttentionBuffer::kScratch, 0, ld * t_per_float, rows * ld * t_per_float};
        context.c = rows_of(AttentionBuffer::kQuery, e, r0, h0);
        context.batch = heads;
        RETURN_IF_ERROR(steps.Product(context));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace zosched
