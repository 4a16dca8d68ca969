#include "runtime/nn/rotary_table.h"

#include <cmath>

#include "base/check.h"
#include "models/model_spec.h"

namespace zosched {

std::vector<double> RotaryInverseFrequencies(const ModelSpec& spec) {
  CHECK(spec.positional() == ROTARY) << "model '" << spec.name() << "' has no rotary positions";
  const int64_t d = HeadDim(spec);
  std::vector<double> inv_freq(d / 2);
  for (int64_t i = 0; i < d / 2; ++i) {
    inv_freq[i] = std::pow(spec.rope_theta(), -2.0 * static_cast<double>(i) / d);
  }
  if (!spec.has_rope_scaling()) return inv_freq;
  // Llama-3.1 (transformers' _compute_llama3_parameters): short wavelengths
  // kept, long ones divided by `factor`, the band between blended.
  const RopeScaling& r = spec.rope_scaling();
  const double original = static_cast<double>(r.original_max_positions());
  const double low_freq_wavelen = original / r.low_freq_factor();
  const double high_freq_wavelen = original / r.high_freq_factor();
  constexpr double kTwoPi = 6.283185307179586;
  for (double& f : inv_freq) {
    const double wavelen = kTwoPi / f;
    if (wavelen < high_freq_wavelen) continue;
    if (wavelen > low_freq_wavelen) {
      f /= r.factor();
      continue;
    }
    const double smooth = (original / wavelen - r.low_freq_factor()) /
                          (r.high_freq_factor() - r.low_freq_factor());
    f = (1.0 - smooth) * f / r.factor() + smooth * f;
  }
  return inv_freq;
}

RotaryTable::RotaryTable(const ModelSpec& spec, int positions)
    : half_(HeadDim(spec) / 2), positions_(positions) {
  const std::vector<double> inv_freq = RotaryInverseFrequencies(spec);
  values_.resize(2 * static_cast<size_t>(positions) * half_);
  for (int p = 0; p < positions; ++p) {
    float* c = values_.data() + 2 * p * half_;
    float* s = c + half_;
    for (int64_t i = 0; i < half_; ++i) {
      const double angle = p * inv_freq[i];
      c[i] = static_cast<float>(std::cos(angle));
      s[i] = static_cast<float>(std::sin(angle));
    }
  }
}

}  // namespace zosched
