// The AVX-512 GEMM kernel: Eigen built with AVX-512 (this file's copts), or
// none when the build targets no x86-64 CPU.
#include "runtime/nn/gemm_kernels.h"

#ifdef __AVX512F__
#define Eigen zosched_nn_eigen_avx512
#include <Eigen/Core>
#undef Eigen

namespace zosched {
namespace {

namespace eigen = ::zosched_nn_eigen_avx512;
#include "runtime/nn/gemm_eigen.inc"

}  // namespace

GemmKernel Avx512GemmKernel() { return &EigenGemm; }

bool Avx512Supported() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}

}  // namespace zosched
#else
namespace zosched {

GemmKernel Avx512GemmKernel() { return nullptr; }
bool Avx512Supported() { return false; }

}  // namespace zosched
#endif
