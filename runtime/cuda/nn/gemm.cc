#include "runtime/cuda/nn/gemm.h"

#include <cstdint>
#include <limits>

#include "absl/strings/str_format.h"
#include "base/gpu_check.h"

namespace zosched {
namespace {

constexpr uintptr_t kWorkspaceAlignment = 256;  // cublasSetWorkspace's requirement

cudaDataType_t CudaDataType(ElementType type) {
  switch (type) {
    case ElementType::kF16: return CUDA_R_16F;
    case ElementType::kBF16: return CUDA_R_16BF;
    case ElementType::kF32: break;
  }
  return CUDA_R_32F;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Gemm>> Gemm::Create(cudaStream_t stream, void* workspace,
                                                   size_t workspace_bytes, bool allow_tf32) {
  if (workspace == nullptr || reinterpret_cast<uintptr_t>(workspace) % kWorkspaceAlignment != 0 ||
      workspace_bytes < kGemmWorkspaceBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Gemm workspace %p of %d bytes: expected a %d-byte aligned device buffer of at least %d "
        "bytes",
        workspace, workspace_bytes, kWorkspaceAlignment, kGemmWorkspaceBytes));
  }
  cublasHandle_t handle = nullptr;
  GPU_RETURN_IF_ERROR(cublasCreate(&handle));
  std::unique_ptr<Gemm> gemm(new Gemm(handle, stream, allow_tf32));  // destroys the handle
  GPU_RETURN_IF_ERROR(cublasSetStream(handle, stream));
  GPU_RETURN_IF_ERROR(cublasSetWorkspace(handle, workspace, workspace_bytes));
  // Split-K partial sums stay in fp32 even when the output is 16-bit.
  GPU_RETURN_IF_ERROR(cublasSetMathMode(
      handle, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                        CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  return gemm;
}

Gemm::~Gemm() { cublasDestroy(handle_); }

absl::Status Gemm::Linear(ElementType type, const void* x, int64_t rows, int64_t in, const void* w,
                          int64_t out, void* y, const LinearLayout& layout) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  const int64_t x_ld = layout.x_ld == 0 ? in : layout.x_ld;
  if (rows < 0 || in < 1 || out < 1 || rows > kMax || in > kMax || out > kMax || x_ld < in ||
      x_ld > kMax) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Gemm::Linear: rows %d, in %d, out %d, x_ld %d: expected rows in [0, %d], in and out in "
        "[1, %d], x_ld 0 or in [in, %d]",
        rows, in, out, layout.x_ld, kMax, kMax, kMax));
  }
  if (type != ElementType::kF32 && type != ElementType::kF16 && type != ElementType::kBF16) {
    return absl::InvalidArgumentError(
        absl::StrFormat("Gemm::Linear: unknown element type %d", static_cast<int>(type)));
  }
  if (rows == 0) return absl::OkStatus();
  const cudaDataType_t data_type = CudaDataType(type);
  const cublasComputeType_t compute =
      allow_tf32_ && type == ElementType::kF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const float alpha = 1.0f, beta = layout.accumulate ? 1.0f : 0.0f;
  // cuBLAS is column-major: the row-major y [rows, out] is the column-major
  // yᵀ [out, rows] = W [out, in] · xᵀ [in, rows], where the row-major x
  // (rows x_ld apart) is xᵀ with leading dimension x_ld (OP_N). A row-major
  // w [out, in] is the column-major wᵀ (hence OP_T, leading dimension in); a
  // row-major w [in, out] is the column-major [out x in] W itself (OP_N,
  // leading dimension out).
  const bool in_out = layout.weight_in_out;
  GPU_RETURN_IF_ERROR(cublasGemmEx(
      handle_, in_out ? CUBLAS_OP_N : CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(out),
      static_cast<int>(rows), static_cast<int>(in), &alpha, w, data_type,
      static_cast<int>(in_out ? out : in), x, data_type, static_cast<int>(x_ld), &beta, y,
      data_type, static_cast<int>(out), compute, CUBLAS_GEMM_DEFAULT));
  return absl::OkStatus();
}

absl::Status Gemm::StridedBatched(ElementType type, ElementType c_type, bool transpose_a,
                                  int64_t m, int64_t n, int64_t k, float alpha,
                                  const MatrixBatch& a, const MatrixBatch& b, void* c, int64_t ldc,
                                  int64_t stride_c, int64_t batch) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  const int64_t a_rows = transpose_a ? k : m;
  const bool fits = m >= 1 && n >= 1 && k >= 1 && batch >= 1 && m <= kMax && n <= kMax &&
                    k <= kMax && batch <= kMax && a.ld >= a_rows && b.ld >= k && ldc >= m &&
                    a.ld <= kMax && b.ld <= kMax && ldc <= kMax;
  if (!fits) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Gemm::StridedBatched: m %d, n %d, k %d, batch %d, lda %d, ldb %d, ldc %d: expected "
        "dimensions and batch in [1, %d], lda >= %d, ldb >= k and ldc >= m",
        m, n, k, batch, a.ld, b.ld, ldc, kMax, a_rows));
  }
  const bool known = type == ElementType::kF32 || type == ElementType::kF16 ||
                     type == ElementType::kBF16;
  if (!known || (c_type != type && c_type != ElementType::kF32)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Gemm::StridedBatched: element types %d -> %d: expected FP32, FP16 or BF16 operands "
        "and results of the same type or FP32",
        static_cast<int>(type), static_cast<int>(c_type)));
  }
  const cublasComputeType_t compute =
      allow_tf32_ && type == ElementType::kF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const float beta = 0.0f;
  GPU_RETURN_IF_ERROR(cublasGemmStridedBatchedEx(
      handle_, transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(m),
      static_cast<int>(n), static_cast<int>(k), &alpha, a.data, CudaDataType(type),
      static_cast<int>(a.ld), a.stride, b.data, CudaDataType(type), static_cast<int>(b.ld),
      b.stride, &beta, c, CudaDataType(c_type), static_cast<int>(ldc), stride_c,
      static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT));
  return absl::OkStatus();
}

}  // namespace zosched
