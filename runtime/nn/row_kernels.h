// The row-wise steps of the decoder blocks that the CUDA kernels share with
// the CPU forward: RMSNorm, the GELU and SwiGLU activations, the rotary
// rotation of one head. Each applies runtime/nn/element_math.h per element,
// in a translation unit built without FMA instructions (the default flags,
// not NN_EIGEN_COPTS), so that its bits are those of the same header on the
// GPU given the same inputs (a row's mean of squares may differ: the GPU
// reduces in another order).
#pragma once

#include <cstdint>

namespace zosched {

// y = x / sqrt(mean(x²) + eps) · w over one row of n values (Hugging Face's
// LlamaRMSNorm); the mean of squares summed in a fixed order (16 lanes,
// then a tree) whatever x's alignment. y may alias x.
void RmsNormRow(const float* x, int64_t n, const float* w, float eps, float* y);

// x[i] = GeluTanh(x[i]) for i in [0, n).
void GeluTanhRange(float* x, int64_t n);

// gate[i] = silu(gate[i]) · up[i] for i in [0, n).
void SwiGluRange(float* gate, const float* up, int64_t n);

// The rotary embedding of one head of d features in place: pairs (i,
// i + d/2) rotated by the angle whose cosine and sine are c[i] and s[i]
// (runtime/nn/rotary_table.h).
void RotateHead(float* x, int64_t d, const float* c, const float* s);

}  // namespace zosched
