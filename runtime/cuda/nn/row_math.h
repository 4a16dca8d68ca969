// Per-element math of the OPT forward pass, shared by the CUDA kernels of
// this package (nvcc, `__host__ __device__`) and the CPU tests that check it
// against runtime/nn/decoder_forward (g++): activations, the LayerNorm of one
// element, and the label-word cross-entropy.
//
// The LayerNorm and cross-entropy expressions are written operation by
// operation as runtime/nn/decoder_forward.cc evaluates them (hd.h primitives: no
// contraction into FMAs), so given the same inputs (row mean, rstd, logits)
// they give the CPU's bits. The reductions that produce those inputs differ
// between backends (summation order), so whole rows agree to rounding only.
// GeluTanh (runtime/nn/element_math.h) calls tanhf, whose last bit may
// differ between host and device.
#pragma once

#include <math.h>

#include "base/hd.h"
#include "runtime/nn/element_math.h"

namespace zosched {

// OPT's LayerNorm epsilon (torch.nn.LayerNorm default).
constexpr float kLayerNormEps = 1e-5f;

// The elementwise function after a bias add (bias_activation.h). Named
// apart from the ModelSpec proto's `Activation` enum.
enum class PointwiseActivation : int { kNone = 0, kRelu = 1, kGeluTanh = 2 };

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

// 1 / sqrt(var + eps) of a row's biased variance `var`.
ZS_HD inline float LayerNormRstd(float var) {
  return hd::DivRn(1.0f, hd::SqrtRn(hd::AddRn(var, kLayerNormEps)));
}

// One element of a LayerNorm row: (x - mean) · rstd · w + b, rounded after
// each operation in that order (runtime/nn's LayerNormRow).
ZS_HD inline float LayerNormElement(float x, float mean, float rstd, float w, float b) {
  return hd::AddRn(hd::MulRn(hd::MulRn(hd::SubRn(x, mean), rstd), w), b);
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
