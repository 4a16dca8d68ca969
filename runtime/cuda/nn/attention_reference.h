// Causal multi-head attention computed directly, in double: the contract of
// attention.h and attention_plan.h, for the tests of both.
#pragma once

#include <cstdint>
#include <vector>

namespace zosched {

// q, k, v: [examples · seq, heads · head_dim] row-major (the values the
// device holds, as floats); lengths: [examples]. Returns the context in the
// same layout: for i < lengths[e], Σ_{j<=i} softmax_j(q_scale · q[i]·k[j]) ·
// v[j] per head; 0 at padding rows; NaN for every row of an example whose
// length is outside [1, seq].
std::vector<double> ReferenceCausalAttention(const std::vector<float>& q,
                                             const std::vector<float>& k,
                                             const std::vector<float>& v,
                                             const std::vector<int32_t>& lengths, int64_t seq,
                                             int64_t heads, int64_t head_dim, float q_scale);

}  // namespace zosched
