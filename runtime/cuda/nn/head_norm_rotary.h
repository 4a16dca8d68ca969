// The per-head step between the q/k projections and attention, on the GPU:
// Qwen3's RMSNorm of each query or key head, then the rotary position
// embedding (LLaMA, Qwen), as runtime/nn/decoder_forward.cc prepares each
// token's heads (the 1/sqrt(d) query scale is the attention's alpha).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/dtype/element.h"

namespace zosched {

// For each row r < rows (token r, at position first_position + r mod seq:
// a prefix's k positions come first, runtime/nn/block_prefix.h) and head
// j < heads of the row-major x (head j of row r: d elements from x + r ·
// ld + j · d), in place, in fp32 with one rounding to `type` per element:
//   norm_w != nullptr: x = x · rstd · norm_w, rstd = 1 / sqrt(mean(x²) +
//                      eps) over the head's d elements (Qwen3's q_norm /
//                      k_norm, [d] of `type`)
//   rotary != nullptr: pairs (i, i + d/2), i < d/2, rotated by the angle
//                      whose cosine and sine are rotary[p · d + i] and
//                      rotary[p · d + d/2 + i] at p = first_position + r
//                      mod seq (the RotaryTable's values(),
//                      runtime/nn/rotary_table.h: fp32, [positions][cos d/2
//                      | sin d/2], positions >= first_position + seq)
// per pair as row_math.h's NormRotatePair: the CPU's bits for the same rstd.
// One thread block per (row, head), the rstd reduced in a fixed order:
// deterministic; a head's result depends only on that head.
//   x: device, `type`; its heads must not overlap (ld >= heads · d)
// Nothing is enqueued when both norm_w and rotary are null. Enqueued on
// `stream`. Returns cudaErrorInvalidValue for rows < 0, heads < 1 or
// > 65535, d < 2 or odd, ld < heads · d, seq < 1, first_position < 0, or
// an unknown type; else the launch's error.
cudaError_t NormRotateHeads(ElementType type, void* x, int64_t rows, int64_t ld, int64_t heads,
                            int64_t d, const void* norm_w, float eps, const float* rotary,
                            int64_t seq, int64_t first_position, cudaStream_t stream);

}  // namespace zosched
