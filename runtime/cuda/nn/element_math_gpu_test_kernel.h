// The per-element math of the forward kernels (runtime/nn/element_math.h,
// row_math.h) evaluated on the GPU, for element_math_gpu_test.cc.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace zosched {

// The inputs of one element of every function under test.
struct ElementMathInputs {
  float x1, x2;    // two features (a rotary pair; x1 alone elsewhere)
  float w1, w2;    // their norm weights
  float b;         // a LayerNorm bias
  float mean;      // a LayerNorm row mean
  float stat;      // a row's mean square or variance (>= 0)
  float c, s;      // a rotary angle's cosine and sine
};

// What ElementMathOnGpuForTest computes for each input, in this order.
enum ElementMathOutput : int {
  kRmsRstd,      // RmsNormRstd(stat, 1e-6)
  kLayerRstd,    // LayerNormRstd(stat, 1e-5)
  kRmsElement,   // NormElement(kRmsNorm, x1, mean, rstd, w1, b), rstd = RmsNormRstd(stat, 1e-6)
  kLayerElement, // NormElement(kLayerNorm, x1, mean, rstd, w1, b), rstd = LayerNormRstd(stat, 1e-5)
  kPair1,        // NormRotatePair(x1, x2, true, rstd, w1, w2, true, c, s) (rstd as kRmsElement)
  kPair2,
  kSwiGlu,       // SwiGlu(x1, x2)
  kGelu,         // GeluTanh(x1)
  kElementMathOutputs,
};

// The host twin of the kernel: outputs [kElementMathOutputs] for one input.
void ElementMathOnHost(const ElementMathInputs& in, float* out);

// out[i · kElementMathOutputs + k] = output k of in[i], for i < n, on the
// GPU (host arrays; copies in, runs, copies out, synchronously).
cudaError_t ElementMathOnGpuForTest(const ElementMathInputs* in, int64_t n, float* out);

}  // namespace zosched
