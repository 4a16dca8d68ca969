// GPU_RETURN_IF_ERROR(expr): evaluate a CUDA runtime, NCCL or cuBLAS call;
// if it failed, return an absl::Status that keeps the expression text, the
// library's error name and description, and file:line (see gpu_call_error.h).
// Use in functions returning absl::Status or absl::StatusOr<T>.
//
//   GPU_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, s));
//   GPU_RETURN_IF_ERROR(ncclAllGather(send, recv, n, ncclFloat, comm, s));
//   GPU_RETURN_IF_ERROR(cublasSgemm(handle, ...));
//
// Only under --config=cuda (the target is cuda_only()).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "base/gpu_call_error.h"

namespace zosched {
namespace gpu_check_internal {

inline absl::Status ToStatus(cudaError_t e, const char* expr, const char* file,
                             int line) {
  if (e == cudaSuccess) return absl::OkStatus();
  return GpuCallError("CUDA", static_cast<int>(e), cudaGetErrorName(e),
                      cudaGetErrorString(e), expr, file, line);
}

inline const char* NcclResultName(ncclResult_t e) {
  switch (e) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    default: return "ncclUnknownResult";
  }
}

inline absl::Status ToStatus(ncclResult_t e, const char* expr, const char* file,
                             int line) {
  if (e == ncclSuccess) return absl::OkStatus();
  // ncclGetLastError(nullptr) describes the most recent failure in detail.
  std::string text = ncclGetErrorString(e);
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && last[0] != '\0') text += std::string(": ") + last;
  return GpuCallError("NCCL", static_cast<int>(e), NcclResultName(e), text, expr,
                      file, line);
}

inline absl::Status ToStatus(cublasStatus_t e, const char* expr,
                             const char* file, int line) {
  if (e == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return GpuCallError("cuBLAS", static_cast<int>(e), cublasGetStatusName(e),
                      cublasGetStatusString(e), expr, file, line);
}

}  // namespace gpu_check_internal
}  // namespace zosched

#define GPU_RETURN_IF_ERROR(expr)                                           \
  do {                                                                      \
    ::absl::Status zosched_gpu_status_ =                                    \
        ::zosched::gpu_check_internal::ToStatus((expr), #expr, __FILE__,    \
                                                __LINE__);                  \
    if (!zosched_gpu_status_.ok()) return zosched_gpu_status_;              \
  } while (false)
