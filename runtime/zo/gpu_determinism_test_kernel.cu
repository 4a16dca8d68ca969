#include "runtime/zo/gpu_determinism_test_kernel.h"
#include "runtime/zo/normal.h"
#include "runtime/zo/zo_math.h"

namespace zosched {
namespace {

#define ZS_RETURN_IF_CUDA_ERROR(expr)               \
  do {                                              \
    const cudaError_t zs_error_ = (expr);           \
    if (zs_error_ != cudaSuccess) return zs_error_; \
  } while (false)

// Device buffers freed on every return path.
struct DeviceBuffers {
  float* p[8] = {};
  int n = 0;
  ~DeviceBuffers() {
    for (int i = 0; i < n; ++i) cudaFree(p[i]);
  }
  cudaError_t Alloc(float** out, int64_t count) {
    cudaError_t e = cudaMalloc(reinterpret_cast<void**>(out), count * sizeof(float));
    if (e == cudaSuccess) p[n++] = *out;
    return e;
  }
};

constexpr int kThreads = 256;

int Blocks(int64_t count) { return static_cast<int>((count + kThreads - 1) / kThreads); }

}  // namespace

static __global__ void LogAndSinCosKernel(float* log_out, float* sin_out, float* cos_out) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= (1u << 24)) return;
  log_out[k] = LogF(static_cast<float>(k + 1) * 5.9604644775390625e-08f);
  SinCos2Pi(static_cast<float>(k) * 5.9604644775390625e-08f, &sin_out[k], &cos_out[k]);
}

static __global__ void ZoMathKernel(uint64_t seed, uint32_t stream, uint64_t first, int64_t count,
                                    const float* theta, float eps, float lr, float g,
                                    float weight_decay, float* z, float* plus, float* minus,
                                    float* updated) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float zi = StandardNormal(seed, stream, first + static_cast<uint64_t>(i));
  z[i] = zi;
  plus[i] = Perturbed(theta[i], zi, eps, +1);
  minus[i] = Perturbed(theta[i], zi, eps, -1);
  updated[i] = Updated(theta[i], zi, lr, g, weight_decay, (i & 1) != 0);
}

static __global__ void ProjectedGradientKernel(const float* loss_plus, const float* loss_minus,
                                               int batch, float eps, float* g_out) {
  *g_out = ProjectedGradient(loss_plus, loss_minus, batch, eps);
}

cudaError_t LogAndSinCosOnGpuForTest(float* log_out, float* sin_out, float* cos_out) {
  const int64_t n = int64_t{1} << 24;
  DeviceBuffers d;
  float *dl, *ds, *dc;
  ZS_RETURN_IF_CUDA_ERROR(d.Alloc(&dl, n));
  ZS_RETURN_IF_CUDA_ERROR(d.Alloc(&ds, n));
  ZS_RETURN_IF_CUDA_ERROR(d.Alloc(&dc, n));
  LogAndSinCosKernel<<<Blocks(n), kThreads>>>(dl, ds, dc);
  ZS_RETURN_IF_CUDA_ERROR(cudaGetLastError());
  ZS_RETURN_IF_CUDA_ERROR(cudaMemcpy(log_out, dl, n * sizeof(float), cudaMemcpyDeviceToHost));
  ZS_RETURN_IF_CUDA_ERROR(cudaMemcpy(sin_out, ds, n * sizeof(float), cudaMemcpyDeviceToHost));
  ZS_RETURN_IF_CUDA_ERROR(cudaMemcpy(cos_out, dc, n * sizeof(float), cudaMemcpyDeviceToHost));
  return cudaSuccess;
}

cudaError_t ZoMathOnGpuForTest(uint64_t seed, uint32_t stream, uint64_t first, int64_t count,
                               const float* theta, float eps, float lr, float g, float weight_decay,
                               float* z, float* plus, float* minus, float* updated) {
  if (count <= 0) return cudaSuccess;
  const size_t bytes = count * sizeof(float);
  DeviceBuffers d;
  float *dt, *dz, *dp, *dm, *du;
  ZS_RETURN_IF_CUDA_ERROR(d.Alloc(&dt, count));
  ZS_RETURN_IF_CUDA_ERROR(d.Alloc(&dz, count));
  ZS_RETURN_IF_CUDA_ERROR(d.Alloc(&dp, count));
  ZS_RETURN_IF_CUDA_ERROR(d.Alloc(&dm, count));
  ZS_RETURN_IF_CUDA_ERROR(d.Alloc(&du, count));
  ZS_RETURN_IF_CUDA_ERROR(cudaMemcpy(dt, theta, bytes, cudaMemcpyHostToDevice));
  ZoMathKernel<<<Blocks(count), kThreads>>>(seed, stream, first, count, dt, eps, lr, g,
                                            weight_decay, dz, dp, dm, du);
  ZS_RETURN_IF_CUDA_ERROR(cudaGetLastError());
  ZS_RETURN_IF_CUDA_ERROR(cudaMemcpy(z, dz, bytes, cudaMemcpyDeviceToHost));
  ZS_RETURN_IF_CUDA_ERROR(cudaMemcpy(plus, dp, bytes, cudaMemcpyDeviceToHost));
  ZS_RETURN_IF_CUDA_ERROR(cudaMemcpy(minus, dm, bytes, cudaMemcpyDeviceToHost));
  ZS_RETURN_IF_CUDA_ERROR(cudaMemcpy(updated, du, bytes, cudaMemcpyDeviceToHost));
  return cudaSuccess;
}

cudaError_t ProjectedGradientOnGpuForTest(const float* loss_plus, const float* loss_minus,
                                          int batch, float eps, float* g_out) {
  DeviceBuffers d;
  float *dp, *dm, *dg;
  ZS_RETURN_IF_CUDA_ERROR(d.Alloc(&dp, batch));
  ZS_RETURN_IF_CUDA_ERROR(d.Alloc(&dm, batch));
  ZS_RETURN_IF_CUDA_ERROR(d.Alloc(&dg, 1));
  ZS_RETURN_IF_CUDA_ERROR(cudaMemcpy(dp, loss_plus, batch * sizeof(float), cudaMemcpyHostToDevice));
  ZS_RETURN_IF_CUDA_ERROR(
      cudaMemcpy(dm, loss_minus, batch * sizeof(float), cudaMemcpyHostToDevice));
  ProjectedGradientKernel<<<1, 1>>>(dp, dm, batch, eps, dg);
  ZS_RETURN_IF_CUDA_ERROR(cudaGetLastError());
  ZS_RETURN_IF_CUDA_ERROR(cudaMemcpy(g_out, dg, sizeof(float), cudaMemcpyDeviceToHost));
  return cudaSuccess;
}

}  // namespace zosched
