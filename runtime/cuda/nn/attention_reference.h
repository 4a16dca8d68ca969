// Causal multi-head and grouped-query attention computed directly, in
// double: the contract of attention.h and attention_plan.h, for the tests
// of both.
#pragma once

#include <cstdint>
#include <vector>

#include "kernel_plans/attention_plan.h"

namespace zosched {

// Keys and values every query attends before its example's (prefix
// tuning): rows of kv_heads · head_dim, key/value head g at columns
// [g · head_dim, (g + 1) · head_dim).
struct ReferencePrefix {
  int64_t tokens = 0;         // k
  std::vector<float> keys;    // [k, kv_heads · head_dim]
  std::vector<float> values;  // [k, kv_heads · head_dim]
};

// q: [examples · seq, shape.q_ld], k and v: [examples · seq, shape.kv_ld],
// row-major (the values the device holds, as floats); lengths: [examples]
// (shape.examples of them). Returns what the query buffer holds after
// attention, [examples · seq, q_ld]: in query head h's columns, for i <
// lengths[e], Σ_{j<=i} softmax_j(q_scale · q_h[i]·k_g[j]) · v_g[j] with g =
// h / (heads / kv_heads) — with `prefix`, over its k keys and values of
// head g first, then the j <= i (k + i + 1 in all); 0 at padding rows; NaN
// for every row of an example whose length is outside [1, seq]; the other
// columns (past heads · head_dim) keep q's values. shape's element_bytes
// and scratch are unused.
std::vector<double> ReferenceCausalAttention(const AttentionShape& shape,
                                             const std::vector<float>& q,
                                             const std::vector<float>& k,
                                             const std::vector<float>& v,
                                             const std::vector<int32_t>& lengths,
                                             const ReferencePrefix& prefix = {});

}  // namespace zosched
