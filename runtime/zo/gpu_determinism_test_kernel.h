// Test-only launchers for gpu_determinism_test: run the per-element ZO math
// of hd.h / normal.h / zo_math.h on the GPU, compiled by nvcc exactly as the
// CUDA backend will compile it, so the test can compare with the CPU bitwise.
// Every pointer argument is host memory; the launchers copy to and from the
// device, synchronize, and return the first CUDA error (cudaSuccess if none).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace zosched {

// For k in [0, 2^24): log_out[k] = LogF((k + 1) * 2^-24), and sin_out[k],
// cos_out[k] = SinCos2Pi(k * 2^-24): the whole Box-Muller argument domain.
// Each output holds 2^24 floats.
cudaError_t LogAndSinCosOnGpuForTest(float* log_out, float* sin_out, float* cos_out);

// For i in [0, count): z[i] = StandardNormal(seed, stream, first + i),
// plus[i] / minus[i] = Perturbed(theta[i], z[i], eps, +1 / -1),
// updated[i] = Updated(theta[i], z[i], lr, g, weight_decay, decays = i odd).
cudaError_t ZoMathOnGpuForTest(uint64_t seed, uint32_t stream, uint64_t first, int64_t count,
                               const float* theta, float eps, float lr, float g, float weight_decay,
                               float* z, float* plus, float* minus, float* updated);

// *g_out = ProjectedGradient(loss_plus, loss_minus, batch, eps), one thread.
cudaError_t ProjectedGradientOnGpuForTest(const float* loss_plus, const float* loss_minus,
                                          int batch, float eps, float* g_out);

}  // namespace zosched
