// The rotary position embedding's angles for a sequence length: cos and sin
// of position p times each inverse frequency of a head, computed once on the
// host (in double, rounded to fp32) and read by both backends' kernels, so
// the CPU and the GPU rotate with the same values.
//
// inv_freq[i] = rope_theta^(-2i / d), i in [0, d/2), d = HeadDim, rescaled
// by Llama-3.1's rope_scaling when the model has one (models/model.proto
// RopeScaling); angle(p, i) = p · inv_freq[i]. Hugging Face computes the
// same in fp32, so its angles at long positions are less exact than these.
#pragma once

#include <cstdint>
#include <vector>

#include "models/model.pb.h"

namespace zosched {

// The inverse frequencies of `spec` (positional ROTARY), d/2 of them.
std::vector<double> RotaryInverseFrequencies(const ModelSpec& spec);

class RotaryTable {
 public:
  // The angles of positions [0, positions) of `spec` (positional ROTARY).
  RotaryTable(const ModelSpec& spec, int positions);

  int64_t half() const { return half_; }  // d / 2: angles per position
  int positions() const { return positions_; }
  // cos and sin of position p's angles: [half] floats each.
  const float* cos(int p) const { return values_.data() + 2 * p * half_; }
  const float* sin(int p) const { return values_.data() + (2 * p + 1) * half_; }
  // All of it, [positions][cos half | sin half]: what the GPU uploads.
  const std::vector<float>& values() const { return values_; }

 private:
  int64_t half_ = 0;
  int positions_ = 0;
  std::vector<float> values_;
};

}  // namespace zosched
