// Per-element math of the decoder forward of every family, shared by the
// CUDA kernels of this package (nvcc, `__host__ __device__`) and the CPU
// tests that check it against runtime/nn (g++): the pointwise activations
// after a bias, the element of a normed row (LayerNorm or RMSNorm), the
// per-head QK-norm and rotary step, the causal mask of attention's scores
// (with a prefix), and the label-word cross-entropy.
// RMSNorm, GELU, SwiGLU and the rotation themselves are
// runtime/nn/element_math.h's, which the CPU forward runs too.
//
// The expressions are written operation by operation as runtime/nn
// evaluates them (hd.h primitives: no contraction into FMAs), so given the
// same inputs (row mean, rstd, a rotary angle's cos and sin, logits) they
// give the CPU's bits. The reductions that produce those inputs differ
// between backends (summation order), so whole rows agree to rounding only.
#pragma once

#include <math.h>
#include <stdint.h>

#include "base/hd.h"
#include "runtime/nn/element_math.h"

namespace zosched {

// The elementwise function after a bias add (bias_activation.h). Named
// apart from the ModelSpec proto's `Activation` enum.
enum class PointwiseActivation : int { kNone = 0, kRelu = 1, kGeluTanh = 2 };

// A row norm as the kernels take it (the ModelSpec proto's `Norm`, which
// nvcc code cannot name, or none).
enum class NormKind : int { kNone = 0, kLayerNorm = 1, kRmsNorm = 2 };

// max(x, 0), as the CPU's std::max(x, 0.0f) (NaN stays NaN, -0 gives -0).
ZS_HD inline float Relu(float x) { return x < 0.0f ? 0.0f : x; }

ZS_HD inline float Activate(PointwiseActivation activation, float x) {
  switch (activation) {
    case PointwiseActivation::kRelu: return Relu(x);
    case PointwiseActivation::kGeluTanh: return GeluTanh(x);
    case PointwiseActivation::kNone: break;
  }
  return x;
}

// 1 / sqrt(var + eps) of a row's biased variance `var` (LayerNorm; eps
// NormEps, 1e-5 for OPT and GPT-2).
ZS_HD inline float LayerNormRstd(float var, float eps) {
  return hd::DivRn(1.0f, hd::SqrtRn(hd::AddRn(var, eps)));
}

// One element of a LayerNorm row: (x - mean) · rstd · w + b, rounded after
// each operation in that order (runtime/nn's LayerNormRow).
ZS_HD inline float LayerNormElement(float x, float mean, float rstd, float w, float b) {
  return hd::AddRn(hd::MulRn(hd::MulRn(hd::SubRn(x, mean), rstd), w), b);
}

// One element of a normed row of `kind`, given the row's statistics:
//   kLayerNorm: LayerNormElement(x, mean, rstd, w, b), rstd = LayerNormRstd
//   kRmsNorm:   RmsNormElement(x, rstd, w) (mean and b unused), rstd =
//               RmsNormRstd of the row's mean square
//   kNone:      x
ZS_HD inline float NormElement(NormKind kind, float x, float mean, float rstd, float w, float b) {
  switch (kind) {
    case NormKind::kLayerNorm: return LayerNormElement(x, mean, rstd, w, b);
    case NormKind::kRmsNorm: return RmsNormElement(x, rstd, w);
    case NormKind::kNone: break;
  }
  return x;
}

// One rotary pair (x1 at index i, x2 at i + d/2) of a query or key head as
// runtime/nn prepares it for attention: Qwen3's per-head RMSNorm first
// (when `norm`: weights w1, w2 and the head's rstd), then the rotation by
// the angle with cosine c and sine s (when `rotate`), all in fp32 — the
// bits of RmsNormRow then RotateHead (runtime/nn/row_kernels.h) for the
// same rstd.
ZS_HD inline void NormRotatePair(float x1, float x2, bool norm, float rstd, float w1, float w2,
                                 bool rotate, float c, float s, float* y1, float* y2) {
  if (norm) {
    x1 = RmsNormElement(x1, rstd, w1);
    x2 = RmsNormElement(x2, rstd, w2);
  }
  if (rotate) {
    RotatePair(x1, x2, c, s, y1, y2);
  } else {
    *y1 = x1;
    *y2 = x2;
  }
}

// How many leading scores row i of a causal score matrix admits
// (causal_softmax.h): the matrix's columns are `prefix` keys every query
// sees (prefix tuning; 0 without), then an example's keys at positions 0
// .. seq - 1; row i >= prefix is the query at position t = i - prefix,
// which sees the prefix and the keys j <= t. Returns
//   -1      when `length` (the example's real tokens) is outside [1, seq]:
//           every row of the example is NaN;
//   0       for a row that is no query: a prefix key's own row (i <
//           prefix) or padding (t >= length);
//   i + 1   otherwise: prefix + t + 1 keys, as runtime/nn's causal
//           softmax over a prefix.
ZS_HD inline int64_t CausalVisibleKeys(int64_t i, int64_t prefix, int64_t length, int64_t seq) {
  if (length < 1 || length > seq) return -1;
  if (i < prefix || i - prefix >= length) return 0;
  return i + 1;
}

// The cross-entropy (nats) of logits[0 .. n) with target `label` in [0, n):
//   logsumexp(logits) - logits[label]
// with the max subtracted in fp32 and the exponentials summed in double, in
// index order, as runtime/nn's HeadLossFromRows: the same logits give the
// same bits on the CPU (and, up to exp/log's last bit, on the GPU).
ZS_HD inline float CrossEntropyFromLogits(const float* logits, int n, int label) {
  float max = logits[0];
  for (int l = 1; l < n; ++l) max = max < logits[l] ? logits[l] : max;
  double sum = 0.0;
  for (int l = 0; l < n; ++l) sum = hd::AddRnD(sum, ::exp(double{logits[l]} - max));
  return static_cast<float>(::log(sum) + max - logits[label]);
}

}  // namespace zosched
