// LaunchProjectedGradient (projected_gradient.h).
#include "runtime/cuda/zo/projected_gradient.h"

#include "base/hd.h"
#include "runtime/zo/zo_math.h"
#include "runtime/zo/zo_state.h"

namespace zosched {

// Single thread: the reductions are sequential in (direction, example)
// order by contract (docs/ARCHITECTURE.md, 'Determinism contract'), and
// q · batch is small (tens to thousands of losses).
//
// Each g_i repeats zo_math.h ProjectedGradient's operations one for one over
// direction i's losses, reading them through the index lists instead of
// from two gathered arrays (zo_kernels_gpu_test checks the bits against
// ProjectedGradient). Every double operation is an hd.h correctly rounded
// primitive, so nvcc cannot contract the mean loss's 0.5 * (a + b) + sum
// into an FMA, which the CPU (built with -ffp-contract=off) does not do
// either.
static __global__ void ProjectedGradientKernel(const float* losses, const int32_t* plus_index,
                                               const int32_t* minus_index, int batch,
                                               int directions, float eps, uint64_t seed,
                                               float learning_rate, ZoState* state,
                                               double* mean_loss) {
  const double denom =
      hd::MulRnD(static_cast<double>(batch), hd::MulRnD(2.0, static_cast<double>(eps)));
  double loss_sum = 0.0;  // sum_{i,e} 0.5 (L+_ie + L-_ie), i outer
  for (int d = 0; d < directions; ++d) {
    const int32_t* plus_d = plus_index + static_cast<int64_t>(d) * batch;
    const int32_t* minus_d = minus_index + static_cast<int64_t>(d) * batch;
    double g_sum = 0.0;  // sum_e (L+_de - L-_de)
    for (int e = 0; e < batch; ++e) {
      const double plus = static_cast<double>(losses[plus_d[e]]);
      const double minus = static_cast<double>(losses[minus_d[e]]);
      g_sum = hd::AddRnD(g_sum, hd::SubRnD(plus, minus));
      loss_sum = hd::AddRnD(loss_sum, hd::MulRnD(0.5, hd::AddRnD(plus, minus)));
    }
    ZoState out;
    out.seed = DirectionSeed(seed, d);
    out.g = static_cast<float>(hd::DivRnD(g_sum, denom));  // round to nearest float
    out.learning_rate = learning_rate;
    state[d] = out;
  }
  // double(q · batch): the CPU's double(q) * batch, both exact (q · batch < 2^31).
  *mean_loss = hd::DivRnD(loss_sum, static_cast<double>(static_cast<int64_t>(directions) * batch));
}

cudaError_t LaunchProjectedGradient(const float* losses, const int32_t* plus_index,
                                    const int32_t* minus_index, int batch, int directions,
                                    float eps, uint64_t seed, float learning_rate, ZoState* state,
                                    double* mean_loss, cudaStream_t stream) {
  if (batch < 1 || directions < 1 ||
      static_cast<int64_t>(directions) * batch > int64_t{0x7fffffff}) {
    return cudaErrorInvalidValue;
  }
  ProjectedGradientKernel<<<1, 1, 0, stream>>>(losses, plus_index, minus_index, batch, directions,
                                               eps, seed, learning_rate, state, mean_loss);
  return cudaGetLastError();
}

}  // namespace zosched
