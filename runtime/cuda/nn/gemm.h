// The projections (nn.Linear) of the CUDA backend: cuBLAS GEMMs on one
// stream, reproducible run to run.
//
// cuBLAS gives the same bits run to run only for the same toolkit,
// architecture and SM count, and, when several streams run GEMMs at once,
// only if each stream has its own handle and workspace (cuBLAS
// documentation, "Results reproducibility"; docs/ARCHITECTURE.md,
// 'Determinism contract'). So a Gemm is one handle bound to one stream with
// a workspace the caller gives it (carved from the device's one allocation;
// the GEMMs need no other memory).
// Which algorithm cuBLAS picks depends on the shape (and the operands'
// alignment), so a row's result depends on its own values and on the shape
// of the product, not on the other rows' values; it may change with the
// number of rows.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/dtype/element.h"

namespace zosched {

// Bytes of cuBLAS workspace each Gemm needs: 32 MiB, what cuBLAS
// recommends for Hopper (and more than enough for Ampere).
inline constexpr size_t kGemmWorkspaceBytes = size_t{32} << 20;

// How Gemm::Linear reads its operands besides their shapes.
struct LinearLayout {
  // w is [in, out] (GPT-2's Conv1D: y = x · w) instead of nn.Linear's
  // [out, in] (y = x · wᵀ).
  bool weight_in_out = false;
  // Elements between the starts of consecutive rows of x (>= in); 0: in
  // (x dense). Lets a projection read columns of a wider matrix, e.g. the
  // attention context inside GPT-2's fused q | k | v rows.
  int64_t x_ld = 0;
  // y += x · wᵀ (cuBLAS beta 1: y read in `type`, the sum formed in fp32
  // and rounded once) instead of overwriting y; a LoRA adapter's second
  // product adds onto its projection's output this way.
  bool accumulate = false;
};

class Gemm {
 public:
  // A cuBLAS handle that enqueues on `stream` and uses `workspace` (device
  // memory the caller owns and keeps alive while the Gemm lives, 256-byte
  // aligned, workspace_bytes >= kGemmWorkspaceBytes). `allow_tf32`: FP32
  // products may use TF32 tensor cores (faster; 10-bit mantissa inputs).
  // Errors: InvalidArgument for a null, misaligned or small workspace; the
  // cuBLAS error of creating or configuring the handle (e.g. no device).
  static absl::StatusOr<std::unique_ptr<Gemm>> Create(cudaStream_t stream, void* workspace,
                                                      size_t workspace_bytes, bool allow_tf32);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // y[rows x out] = x[rows x in] · wᵀ, w [out, in] (nn.Linear's weight; or
  // x · w with w [in, out] when layout.weight_in_out), all row-major device
  // arrays of `type` (x's rows layout.x_ld elements apart; y dense),
  // accumulated in fp32 (CUBLAS_COMPUTE_32F, or CUBLAS_COMPUTE_32F_FAST_TF32
  // for FP32 when allow_tf32; partial sums never rounded to a 16-bit type).
  // y is overwritten (no bias: see bias_activation.h), or added to with
  // layout.accumulate. Enqueued on stream().
  // Errors: InvalidArgument for rows < 0, in or out < 1, x_ld (when not 0)
  // < in, a dimension above INT32_MAX or an unknown type; the cuBLAS error
  // of the call.
  absl::Status Linear(ElementType type, const void* x, int64_t rows, int64_t in, const void* w,
                      int64_t out, void* y, const LinearLayout& layout = LinearLayout());

  // A strided batch of column-major matrices (cuBLAS's convention): matrix
  // g starts `stride` elements after matrix g - 1 and its columns are `ld`
  // elements apart.
  struct MatrixBatch {
    const void* data = nullptr;
    int64_t ld = 0;
    int64_t stride = 0;
  };

  // For g < batch, column-major: C_g [m x n] = alpha · op(A_g) · B_g, with
  // op(A_g) = A_gᵀ (A_g stored [k x m]) when transpose_a, else A_g [m x k];
  // B_g [k x n]. A and B hold `type`; C holds `c_type`, which is `type` or
  // kF32 (fp32 results of 16-bit operands); accumulated in fp32 as Linear.
  // C (`c`, columns ldc apart, matrices stride_c apart) is overwritten.
  // Enqueued on stream().
  // Errors: InvalidArgument for a dimension or batch < 1 or above
  // INT32_MAX, an ld shorter than its matrix's column, or a c_type that is
  // neither; the cuBLAS error of the call.
  absl::Status StridedBatched(ElementType type, ElementType c_type, bool transpose_a, int64_t m,
                              int64_t n, int64_t k, float alpha, const MatrixBatch& a,
                              const MatrixBatch& b, void* c, int64_t ldc, int64_t stride_c,
                              int64_t batch);

  cudaStream_t stream() const { return stream_; }

 private:
  Gemm(cublasHandle_t handle, cudaStream_t stream, bool allow_tf32)
      : handle_(handle), stream_(stream), allow_tf32_(allow_tf32) {}

  cublasHandle_t handle_;
  cudaStream_t stream_;
  bool allow_tf32_;
};

}  // namespace zosched
