// Per-element math of the decoder blocks of every family, shared by the CPU
// forward (runtime/nn/decoder_forward.cc, g++) and the CUDA kernels
// (runtime/cuda/nn, nvcc: `__host__ __device__`): RMSNorm's scaling, the
// GELU and SwiGLU activations, the rotary rotation of one pair of features.
//
// Each expression is written operation by operation with base/hd.h's
// correctly rounded primitives (no contraction into FMAs), so given the same
// inputs (a row's rstd, a rotary angle's cos and sin) the CPU and the GPU
// give the same bits; e^x is base/hd_exp.h's, for the same reason. Only the
// reductions (a row's sum of squares) differ between host and device.
#pragma once

#include "base/hd.h"
#include "base/hd_exp.h"

namespace zosched {

// 1 / sqrt(mean_square + eps) of a row whose mean of squares is
// `mean_square` (RMSNorm; Hugging Face's LlamaRMSNorm adds eps to the
// variance, an fp32 mean of x², and takes rsqrt).
ZS_HD inline float RmsNormRstd(float mean_square, float eps) {
  return hd::DivRn(1.0f, hd::SqrtRn(hd::AddRn(mean_square, eps)));
}

// One element of an RMSNorm row: (x · rstd) · w, in that order (LlamaRMSNorm
// normalises, then scales by the weight).
ZS_HD inline float RmsNormElement(float x, float rstd, float w) {
  return hd::MulRn(hd::MulRn(x, rstd), w);
}

// GELU, tanh approximation (GPT-2's "gelu_new"):
//   0.5 · x · (1 + tanh(u)),  u = sqrt(2/π) · (x + 0.044715 · x³),
// evaluated as x · σ(2u) = x / (1 + e^(-2u)), the same function without
// tanh's cancellation near -1.
ZS_HD inline float GeluTanh(float x) {
  const float kTwoSqrt2OverPi = 1.5957691216057308f;
  const float two_u = hd::MulRn(kTwoSqrt2OverPi,
                                hd::AddRn(x, hd::MulRn(0.044715f, hd::MulRn(x, hd::MulRn(x, x)))));
  return hd::DivRn(x, hd::AddRn(1.0f, hd::ExpF(-two_u)));
}

// SiLU (swish): x / (1 + exp(-x)).
ZS_HD inline float Silu(float x) { return hd::DivRn(x, hd::AddRn(1.0f, hd::ExpF(-x))); }

// One element of SwiGLU's inner activation: silu(gate) · up.
ZS_HD inline float SwiGlu(float gate, float up) { return hd::MulRn(Silu(gate), up); }

// The rotary embedding of one pair of features (x1 at index i, x2 at
// i + head_dim / 2 of a head, Hugging Face's rotate_half convention) at an
// angle with cosine `c` and sine `s`:
//   *y1 = x1 · c - x2 · s,   *y2 = x2 · c + x1 · s
ZS_HD inline void RotatePair(float x1, float x2, float c, float s, float* y1, float* y2) {
  *y1 = hd::SubRn(hd::MulRn(x1, c), hd::MulRn(x2, s));
  *y2 = hd::AddRn(hd::MulRn(x2, c), hd::MulRn(x1, s));
}

}  // namespace zosched
