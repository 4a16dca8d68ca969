// LaunchProjectedGradient (projected_gradient.h).
#include "runtime/cuda/zo/projected_gradient.h"

#include "base/hd.h"
#include "runtime/zo/zo_state.h"

namespace zosched {

// Single thread: the reductions are sequential in example order by contract
// (docs/ARCHITECTURE.md, 'Determinism contract'), and batch is small (tens
// of examples).
//
// g repeats zo_math.h ProjectedGradient's operations one for one, reading
// the losses through the index lists instead of from two gathered arrays
// (zo_kernels_gpu_test checks the bits against ProjectedGradient). Every
// double operation is an hd.h correctly rounded primitive, so nvcc cannot
// contract the mean loss's 0.5 * (a + b) + sum into an FMA, which the CPU
// (built with -ffp-contract=off) does not do either.
static __global__ void ProjectedGradientKernel(const float* losses, const int32_t* plus_index,
                                               const int32_t* minus_index, int batch, float eps,
                                               uint64_t seed, float learning_rate, ZoState* state,
                                               double* mean_loss) {
  double g_sum = 0.0;     // sum_e (L+_e - L-_e)
  double loss_sum = 0.0;  // sum_e 0.5 (L+_e + L-_e)
  for (int e = 0; e < batch; ++e) {
    const double plus = static_cast<double>(losses[plus_index[e]]);
    const double minus = static_cast<double>(losses[minus_index[e]]);
    g_sum = hd::AddRnD(g_sum, hd::SubRnD(plus, minus));
    loss_sum = hd::AddRnD(loss_sum, hd::MulRnD(0.5, hd::AddRnD(plus, minus)));
  }
  const double denom =
      hd::MulRnD(static_cast<double>(batch), hd::MulRnD(2.0, static_cast<double>(eps)));
  ZoState out;
  out.seed = seed;
  out.g = static_cast<float>(hd::DivRnD(g_sum, denom));  // round to nearest float
  out.learning_rate = learning_rate;
  *state = out;
  *mean_loss = hd::DivRnD(loss_sum, static_cast<double>(batch));
}

cudaError_t LaunchProjectedGradient(const float* losses, const int32_t* plus_index,
                                    const int32_t* minus_index, int batch, float eps, uint64_t seed,
                                    float learning_rate, ZoState* state, double* mean_loss,
                                    cudaStream_t stream) {
  if (batch < 1) return cudaErrorInvalidValue;
  ProjectedGradientKernel<<<1, 1, 0, stream>>>(losses, plus_index, minus_index, batch, eps, seed,
                                               learning_rate, state, mean_loss);
  return cudaGetLastError();
}

}  // namespace zosched
