// The GEMM kernels behind runtime/nn/gemm.h, one per instruction set, each
// compiled in a file of its own with that set's flags and with Eigen under
// a namespace name of its own (gemm_eigen.inc says why). For gemm.cc's
// dispatch and for tests that hold each kernel to the GEMM's contract.
#pragma once

#include <cstdint>

#include "runtime/nn/gemm.h"

namespace zosched {

using GemmKernel = void (*)(RhsLayout layout, int64_t m, int64_t n, int64_t k, const float* a,
                            int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);

// Built with the build's Eigen flags (NN_EIGEN_COPTS): runs wherever the
// build runs.
GemmKernel BaseGemmKernel();

// Built with AVX-512; nullptr when this build has none (not x86-64). Runs
// only on a CPU with AVX512F and AVX512DQ (Avx512Supported).
GemmKernel Avx512GemmKernel();
bool Avx512Supported();

}  // namespace zosched
