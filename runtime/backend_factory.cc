#include "runtime/backend_factory.h"

#include "runtime/cpu_backend.h"
#ifdef ZOSCHED_WITH_CUDA
#include <cuda_runtime.h>

#include "runtime/cuda/cuda_backend.h"
#endif

namespace zosched {

absl::Status CheckBackendAvailable(const std::string& name) {
  if (name == "cpu") return absl::OkStatus();
  if (name == "cuda") {
#ifdef ZOSCHED_WITH_CUDA
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
      return absl::FailedPreconditionError(
          "--backend=cuda: no CUDA GPU is visible (check nvidia-smi and CUDA_VISIBLE_DEVICES)");
    }
    return absl::OkStatus();
#else
    return absl::InvalidArgumentError(
        "--backend=cuda: this build has no CUDA backend; build with --config=cuda "
        "(./bazelw run --config=cuda //runtime:train -- --backend=cuda ...)");
#endif
  }
  return absl::InvalidArgumentError("--backend='" + name + "': expected cpu or cuda");
}

bool PipelinesSteps(const std::string& name) { return name == "cuda"; }

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const BackendOptions& options,
                                                       const Schedule& schedule, int device,
                                                       const std::vector<int32_t>& label_words,
                                                       NodeSharedMemory* host_memory,
                                                       MpiCollectives* collectives) {
  if (absl::Status s = CheckBackendAvailable(options.name); !s.ok()) return s;
#ifdef ZOSCHED_WITH_CUDA
  if (options.name == "cuda") {
    CudaOptions cuda;
    cuda.allow_tf32 = options.allow_tf32;
    absl::StatusOr<std::unique_ptr<CudaBackend>> b =
        CudaBackend::Create(schedule, device, label_words, host_memory, collectives, cuda);
    if (!b.ok()) return b.status();
    return std::unique_ptr<Backend>(std::move(*b));
  }
#endif
  absl::StatusOr<std::unique_ptr<CpuBackend>> b =
      CpuBackend::Create(schedule, device, label_words, host_memory, collectives,
                         options.cpu_threads);
  if (!b.ok()) return b.status();
  return std::unique_ptr<Backend>(std::move(*b));
}

}  // namespace zosched
