// Registers the CUDA backend (cuda_backend.h) as backend "cuda"; linked in
// --config=cuda builds only.
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_registration.h"

namespace zosched {
namespace {

BackendRegistration CudaRegistration() {
  BackendRegistration r = CudaRegistrationBase();
  r.check_available = [] { return RequireVisibleGpus().status(); };
  r.create = [](const BackendOptions& options, const Schedule& schedule, int device,
                const std::vector<int32_t>& label_words, NodeSharedMemory* host_memory,
                MpiCollectives* collectives) -> absl::StatusOr<std::unique_ptr<Backend>> {
    CudaOptions cuda;
    cuda.allow_tf32 = options.allow_tf32;
    return AsBackend(
        CudaBackend::Create(schedule, device, label_words, host_memory, collectives, cuda));
  };
  return r;
}

const BackendRegistrar kCudaBackend(CudaRegistration());

}  // namespace
}  // namespace zosched
