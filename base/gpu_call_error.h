// The error a failed CUDA, NCCL or cuBLAS call turns into.
//
// Backend-independent so that the message format is tested on machines
// without a GPU; base/gpu_check.h feeds it from the real libraries.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace zosched {

// Returns an absl::InternalError whose message names the library, the error
// (`error_name`, numeric `code`, human `error_text`), the failing expression
// exactly as written, and where it was called (file:line), e.g.
//
//   CUDA error cudaErrorNoDevice (100): no CUDA-capable device is detected
//     in `cudaSetDevice(0)` at runtime/cuda/device.cc:42
//
// `library`: "CUDA", "NCCL" or "cuBLAS". `code` must be a failure code.
absl::Status GpuCallError(const std::string& library, int code,
                          const std::string& error_name,
                          const std::string& error_text,
                          const std::string& expression, const char* file,
                          int line);

}  // namespace zosched
