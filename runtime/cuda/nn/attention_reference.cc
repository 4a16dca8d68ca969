#include "runtime/cuda/nn/attention_reference.h"

#include <cmath>

namespace zosched {

std::vector<double> ReferenceCausalAttention(const std::vector<float>& q,
                                             const std::vector<float>& k,
                                             const std::vector<float>& v,
                                             const std::vector<int32_t>& lengths, int64_t seq,
                                             int64_t heads, int64_t head_dim, float q_scale) {
  const int64_t width = heads * head_dim;
  const int64_t examples = static_cast<int64_t>(lengths.size());
  std::vector<double> context(examples * seq * width, 0.0);
  for (int64_t e = 0; e < examples; ++e) {
    const int32_t length = lengths[e];
    auto at = [&](int64_t row, int64_t head, int64_t c) {
      return (e * seq + row) * width + head * head_dim + c;
    };
    if (length < 1 || length > seq) {
      for (int64_t i = e * seq * width; i < (e + 1) * seq * width; ++i) context[i] = NAN;
      continue;
    }
    for (int64_t head = 0; head < heads; ++head) {
      for (int64_t i = 0; i < length; ++i) {
        std::vector<double> p(i + 1);
        double max = -INFINITY, sum = 0;
        for (int64_t j = 0; j <= i; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < head_dim; ++c) dot += double{q[at(i, head, c)]} * k[at(j, head, c)];
          p[j] = q_scale * dot;
          max = std::fmax(max, p[j]);
        }
        for (int64_t j = 0; j <= i; ++j) sum += (p[j] = std::exp(p[j] - max));
        for (int64_t j = 0; j <= i; ++j) {
          for (int64_t c = 0; c < head_dim; ++c) context[at(i, head, c)] += p[j] / sum * v[at(j, head, c)];
        }
      }
    }
  }
  return context;
}

}  // namespace zosched
