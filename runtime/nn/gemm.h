// The CPU forward's matrix product: C[m x n] (row-major, row stride ldc)
// += A[m x k] (row-major, lda) · B[k x n], B stored row-major
// (kRhsRowMajor, element (k, j) at b[k*ldb + j]) or as the row-major
// [n x k] matrix Bᵀ (kRhsTransposed, element (k, j) at b[j*ldb + k]: an
// nn.Linear weight [out, in] gives y = x Wᵀ).
//
// Eigen's blocked GEMM, called directly (not through Eigen's expression
// dispatch, which switches to a coefficient-based product for small shapes
// and to GEMV for one row or column; those reduce in orders that depend on
// the shape and on the operands' addresses). It packs its operands, so its
// result depends only on the values, the shape, this machine's cache sizes
// (which set the depth blocking) and the kernel. It computes column-major
// Cᵀ = Bᵀ · Aᵀ, so the m rows of C (the tokens) are the kernel's columns,
// taken in panels of 4 (Eigen's nr for every instruction set) and the
// leftover columns one by one; the two paths accumulate the depth in
// different orders, which is why runtime/nn pads token counts to 4.
//
// The kernel is chosen once per process from what the CPU has: AVX-512
// (about 1.7x the GEMM throughput of AVX2 on the 2-core development
// machine) where the CPU has AVX512F and AVX512DQ, else the build's base
// kernel (AVX2 + FMA on x86-64, see eigen_copts.bzl). The two kernels block
// the depth differently, so a machine with AVX-512 and one without give
// different bits; every rank of a run on one machine uses the same kernel.
#pragma once

#include <cstdint>

namespace zosched {

enum RhsLayout { kRhsRowMajor, kRhsTransposed };

void GemmAcc(RhsLayout layout, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
             const float* b, int64_t ldb, float* c, int64_t ldc);

// The kernel GemmAcc runs on this machine: "avx512" or "base".
const char* GemmKernelName();

}  // namespace zosched
