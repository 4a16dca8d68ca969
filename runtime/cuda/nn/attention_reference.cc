#include "runtime/cuda/nn/attention_reference.h"

#include <cmath>

namespace zosched {

std::vector<double> ReferenceCausalAttention(const AttentionShape& shape,
                                             const std::vector<float>& q,
                                             const std::vector<float>& k,
                                             const std::vector<float>& v,
                                             const std::vector<int32_t>& lengths) {
  const int64_t seq = shape.seq, d = shape.head_dim;
  const int64_t group = shape.heads / shape.kv_heads;
  const int64_t width = shape.heads * d;
  std::vector<double> out(q.begin(), q.end());
  for (int64_t e = 0; e < shape.examples; ++e) {
    const int32_t length = lengths[e];
    auto q_at = [&](int64_t row, int64_t head, int64_t c) {
      return (e * seq + row) * shape.q_ld + head * d + c;
    };
    auto kv_at = [&](int64_t row, int64_t kv_head, int64_t c) {
      return (e * seq + row) * shape.kv_ld + kv_head * d + c;
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
        std::vector<double> p(i + 1);
        double max = -INFINITY, sum = 0;
        for (int64_t j = 0; j <= i; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < d; ++c) dot += double{q[q_at(i, head, c)]} * k[kv_at(j, g, c)];
          p[j] = shape.q_scale * dot;
          max = std::fmax(max, p[j]);
        }
        for (int64_t j = 0; j <= i; ++j) sum += (p[j] = std::exp(p[j] - max));
        for (int64_t j = 0; j <= i; ++j) {
          for (int64_t c = 0; c < d; ++c) out[q_at(i, head, c)] += p[j] / sum * v[kv_at(j, g, c)];
        }
      }
    }
  }
  return out;
}

}  // namespace zosched
