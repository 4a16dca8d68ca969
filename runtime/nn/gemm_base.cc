// The base GEMM kernel: Eigen with the build's flags (NN_EIGEN_COPTS).
#define Eigen zosched_nn_eigen_base
#include <Eigen/Core>
#undef Eigen

#include "runtime/nn/gemm_kernels.h"

namespace zosched {
namespace {

namespace eigen = ::zosched_nn_eigen_base;
#include "runtime/nn/gemm_eigen.inc"

}  // namespace

GemmKernel BaseGemmKernel() { return &EigenGemm; }

}  // namespace zosched
