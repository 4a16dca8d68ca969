#include "kernel_plans/fused_attention_plan.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"

namespace zosched {
namespace {

constexpr int64_t kFp32Bytes = 4;  // the log-sum-exp, D, the dQ accumulator

struct AttentionTiles {
  int64_t rows = 0, keys = 0;
};

int64_t Width(const GptShape& s) { return (s.d + 31) / 32 * 32; }

AttentionTiles ForwardTiles(const GptShape& s) {
  if (s.dtype == FP32) return {64, s.d <= 64 ? 64 : 128};
  return {128, Width(s) <= 64 ? 128 : 64};
}

AttentionTiles BackwardTiles(const GptShape& s) {
  if (s.dtype == FP32) return {64, 64};
  return Width(s) <= 64 ? AttentionTiles{128, 128} : AttentionTiles{64, 128};
}

// The tile arithmetic of `products` products a tile pair (the header's
// GEMM per (example, head)); bytes are the caller's.
Kernel FusedAttentionTiles(std::string name, AttentionTiles t, int64_t products,
                           const GptShape& s) {
  const int64_t query_tiles = (s.seq + t.rows - 1) / t.rows;
  int64_t visited = 0;
  for (int64_t i = 0; i < query_tiles; ++i) {
    visited += (std::min(s.seq, (i + 1) * t.rows) + t.keys - 1) / t.keys;
  }
  return Gemm(std::move(name), s.dtype, s.c, t.rows, t.keys * visited, products * Width(s),
              s.examples * s.heads);
}

}  // namespace

Kernel FusedAttentionForward(const std::string& name, const GptShape& s) {
  Kernel k = FusedAttentionTiles(absl::StrCat(name, " forward (causal)"), ForwardTiles(s), 2, s);
  k.bytes = 4 * s.Th() * s.c + static_cast<double>(s.tokens) * s.heads * kFp32Bytes;
  return k;
}

void AppendFusedAttentionBackward(const std::string& name, const GptShape& s, KernelPlan* plan) {
  const double rows = static_cast<double>(s.tokens) * s.heads * kFp32Bytes;
  const double accumulator = s.dtype == FP32 ? 0 : s.Th() * kFp32Bytes;
  plan->push_back(MemoryPass(absl::StrCat(name, " backward: rowsum(dO·O)"), s.dtype,
                             2 * s.Th() * s.c + rows + accumulator, 2 * kElementFlops * s.Th()));
  Kernel k = FusedAttentionTiles(absl::StrCat(name, " backward: dQ, dK, dV (causal)"),
                                 BackwardTiles(s), 5, s);
  k.bytes = 6 * s.Th() * s.c + 2 * rows + (s.dtype == FP32 ? s.Th() * s.c : 2 * accumulator);
  plan->push_back(k);
  if (s.dtype != FP32) {
    plan->push_back(MemoryPass("cast dQ accumulator", s.dtype, s.Th() * (kFp32Bytes + s.c),
                               kElementFlops * s.Th()));
  }
}

}  // namespace zosched
