// Registers backend "cuda" in builds without the CUDA backend (no
// --config=cuda): it is known, and refused with how to build it.
#include "runtime/cuda/cuda_registration.h"

namespace zosched {
namespace {

BackendRegistration AbsentCudaRegistration() {
  BackendRegistration r = CudaRegistrationBase();
  r.check_available = [] {
    return absl::InvalidArgumentError(
        "--backend=cuda: this build has no CUDA backend; build with --config=cuda "
        "(./bazelw run --config=cuda //train -- --backend=cuda ...)");
  };
  return r;
}

const BackendRegistrar kAbsentCudaBackend(AbsentCudaRegistration());

}  // namespace
}  // namespace zosched
