#include "runtime/cuda/nn/attention_reference.h"

#include <cmath>

namespace zosched {

std::vector<double> ReferenceCausalAttention(const AttentionShape& shape,
                                             const std::vector<float>& q,
                                             const std::vector<float>& k,
                                             const std::vector<float>& v,
                                             const std::vector<int32_t>& lengths,
                                             const ReferencePrefix& prefix) {
  const int64_t seq = shape.seq, d = shape.head_dim, P = prefix.tokens;
  const int64_t group = shape.heads / shape.kv_heads;
  const int64_t width = shape.heads * d;
  const int64_t prefix_ld = shape.kv_heads * d;
  std::vector<double> out(q.begin(), q.end());
  for (int64_t e = 0; e < shape.examples; ++e) {
    const int32_t length = lengths[e];
    auto q_at = [&](int64_t row, int64_t head, int64_t c) {
      return (e * seq + row) * shape.q_ld + head * d + c;
    };
    // Key (and value) j of head g: the prefix's j < P, then the example's
    // position j - P.
    auto key = [&](const std::vector<float>& real, const std::vector<float>& prefixed, int64_t j,
                   int64_t g, int64_t c) -> double {
      if (j < P) return prefixed[j * prefix_ld + g * d + c];
      return real[(e * seq + j - P) * shape.kv_ld + g * d + c];
    };
    for (int64_t row = 0; row < seq; ++row) {
      for (int64_t c = 0; c < width; ++c) {
        out[q_at(row, 0, c)] = length < 1 || length > seq ? NAN : 0.0;
      }
    }
    if (length < 1 || length > seq) continue;
    for (int64_t head = 0; head < shape.heads; ++head) {
      const int64_t g = head / group;
      for (int64_t i = 0; i < length; ++i) {
        const int64_t keys = P + i + 1;
        std::vector<double> p(keys);
        double max = -INFINITY, sum = 0;
        for (int64_t j = 0; j < keys; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < d; ++c) {
            dot += double{q[q_at(i, head, c)]} * key(k, prefix.keys, j, g, c);
          }
          p[j] = shape.q_scale * dot;
          max = std::fmax(max, p[j]);
        }
        for (int64_t j = 0; j < keys; ++j) sum += (p[j] = std::exp(p[j] - max));
        for (int64_t j = 0; j < keys; ++j) {
          for (int64_t c = 0; c < d; ++c) {
            out[q_at(i, head, c)] += p[j] / sum * key(v, prefix.values, j, g, c);
          }
        }
      }
    }
  }
  return out;
}

}  // namespace zosched
