#include "runtime/cuda/nn/element_math_gpu_test_kernel.h"

#include "runtime/cuda/nn/row_math.h"
#include "runtime/nn/element_math.h"

namespace zosched {
namespace {

// One input's outputs: the same code on the host and on the device.
ZS_HD inline void ElementMath(const ElementMathInputs& in, float* out) {
  const float rms_rstd = RmsNormRstd(in.stat, 1e-6f);
  const float layer_rstd = LayerNormRstd(in.stat, 1e-5f);
  out[kRmsRstd] = rms_rstd;
  out[kLayerRstd] = layer_rstd;
  out[kRmsElement] = NormElement(NormKind::kRmsNorm, in.x1, in.mean, rms_rstd, in.w1, in.b);
  out[kLayerElement] = NormElement(NormKind::kLayerNorm, in.x1, in.mean, layer_rstd, in.w1, in.b);
  NormRotatePair(in.x1, in.x2, true, rms_rstd, in.w1, in.w2, true, in.c, in.s, &out[kPair1],
                 &out[kPair2]);
  out[kSwiGlu] = SwiGlu(in.x1, in.x2);
  out[kGelu] = GeluTanh(in.x1);
}

}  // namespace

static __global__ void ElementMathKernel(const ElementMathInputs* in, int64_t n, float* out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) ElementMath(in[i], out + i * kElementMathOutputs);
}

void ElementMathOnHost(const ElementMathInputs& in, float* out) { ElementMath(in, out); }

cudaError_t ElementMathOnGpuForTest(const ElementMathInputs* in, int64_t n, float* out) {
  ElementMathInputs* d_in = nullptr;
  float* d_out = nullptr;
  const size_t in_bytes = n * sizeof(ElementMathInputs);
  const size_t out_bytes = n * kElementMathOutputs * sizeof(float);
  cudaError_t e = cudaMalloc(&d_in, in_bytes);
  if (e == cudaSuccess) e = cudaMalloc(&d_out, out_bytes);
  if (e == cudaSuccess) e = cudaMemcpy(d_in, in, in_bytes, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) {
    ElementMathKernel<<<static_cast<unsigned int>((n + 255) / 256), 256>>>(d_in, n, d_out);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaMemcpy(out, d_out, out_bytes, cudaMemcpyDeviceToHost);
  cudaFree(d_in);
  cudaFree(d_out);
  return e;
}

}  // namespace zosched
