#include "kernel_plans/attention_plan.h"

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
  if (shape.examples < 1 || shape.seq < 1 || shape.heads < 1 || shape.kv_heads < 1 ||
      shape.head_dim < 1 || shape.seq > kInt32Max || shape.q_ld > kInt32Max ||
      shape.kv_ld > kInt32Max) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "causal attention: examples %d, seq %d, heads %d, kv_heads %d, head_dim %d, row strides "
        "%d and %d: expected each >= 1, with seq and the row strides at most %d (cuBLAS's int "
        "dimensions)",
        shape.examples, shape.seq, shape.heads, shape.kv_heads, shape.head_dim, shape.q_ld,
        shape.kv_ld, kInt32Max));
  }
  if (shape.heads % shape.kv_heads != 0 || shape.q_ld < shape.heads * shape.head_dim ||
      shape.kv_ld < shape.kv_heads * shape.head_dim) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "causal attention: %d query heads and %d key/value heads of %d, rows of %d and %d "
        "elements: expected kv_heads to divide heads, query rows of at least %d and key/value "
        "rows of at least %d elements",
        shape.heads, shape.kv_heads, shape.head_dim, shape.q_ld, shape.kv_ld,
        shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim));
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
    tiling.heads_per_call = std::min(shape.kv_heads, scratch_floats / head_floats);
    tiling.rows_per_chunk = shape.seq;
  } else {
    tiling.heads_per_call = 1;
    tiling.rows_per_chunk = scratch_floats / row_floats;
  }
  return tiling;
}

absl::Status ForEachAttentionStep(const AttentionShape& shape, AttentionSteps& steps) {
  ASSIGN_OR_RETURN(const AttentionTiling tiling, PlanAttentionTiling(shape));
  const int64_t group = shape.heads / shape.kv_heads;  // query heads per key/value head
  const int64_t d = shape.head_dim;
  const int64_t t_per_float = 4 / shape.element_bytes;
  // An operand of Q, K or V: the head_dim columns of head `head` from
  // position `row` of example `e` on, the batch's next matrix `head_stride`
  // heads further.
  auto rows_of = [&](AttentionBuffer buffer, int64_t e, int64_t row, int64_t head,
                     int64_t head_stride) {
    const int64_t ld = buffer == AttentionBuffer::kQuery ? shape.q_ld : shape.kv_ld;
    StridedOperand operand;
    operand.buffer = buffer;
    operand.bytes = ((e * shape.seq + row) * ld + head * d) * shape.element_bytes;
    operand.ld = ld;
    operand.stride = head_stride * d;
    return operand;
  };
  for (int64_t e = 0; e < shape.examples; ++e) {
    for (int64_t j = 0; j < group; ++j) {
      for (int64_t g0 = 0; g0 < shape.kv_heads; g0 += tiling.heads_per_call) {
        // Query heads j + g · group for key/value heads g in [g0, g0 + heads).
        const int64_t heads = std::min(tiling.heads_per_call, shape.kv_heads - g0);
        const int64_t h0 = j + g0 * group;
        for (int64_t r0 = 0; r0 < shape.seq; r0 += tiling.rows_per_chunk) {
          const int64_t r1 = std::min(shape.seq, r0 + tiling.rows_per_chunk);
          const int64_t rows = r1 - r0, keys = r1, ld = ScoreLd(keys);
          // Column-major, the row-major scores [rows, keys] are Sᵀ [keys x
          // rows] = K[0:r1] · Q[r0:r1]ᵀ; the row-major K is Kᵀ (hence
          // transpose_a) and the row-major Q rows are Qᵀ.
          AttentionProduct scores;
          scores.transpose_a = true;
          scores.m = keys;
          scores.n = rows;
          scores.k = d;
          scores.alpha = shape.q_scale;
          scores.a = rows_of(AttentionBuffer::kKey, e, 0, g0, 1);
          scores.b = rows_of(AttentionBuffer::kQuery, e, r0, h0, group);
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
          // V[0:r1]ᵀ [head_dim x keys] · Pᵀ [keys x rows]: the row-major V
          // and P as they lie. P's rows are the scores' rows, in elements of T.
          AttentionProduct context;
          context.m = d;
          context.n = rows;
          context.k = keys;
          context.a = rows_of(AttentionBuffer::kValue, e, 0, g0, 1);
          context.b = {AttentionBuffer::kScratch, 0, ld * t_per_float, rows * ld * t_per_float};
          context.c = rows_of(AttentionBuffer::kQuery, e, r0, h0, group);
          context.batch = heads;
          RETURN_IF_ERROR(steps.Product(context));
        }
      }
    }
  }
  return absl::OkStatus();
}

AttentionShape PrefixJoinedShape(const AttentionShape& shape, int64_t tokens) {
  AttentionShape joined = shape;
  joined.examples = 1;
  joined.seq = tokens + shape.seq;
  joined.q_ld = shape.heads * shape.head_dim;
  joined.kv_ld = shape.kv_heads * shape.head_dim;
  return joined;
}

}  // namespace zosched
