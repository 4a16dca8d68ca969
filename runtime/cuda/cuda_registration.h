// Backend "cuda" as it registers (backend_registry.h), in builds with the
// CUDA backend (cuda_backend_registration.cc) and without
// (cuda_backend_absent.cc, whose availability check says how to build it).
#pragma once

#include "runtime/backend_registry.h"

namespace zosched {

// "cuda" and its capabilities; no availability check, no factory.
inline BackendRegistration CudaRegistrationBase() {
  BackendRegistration r;
  r.name = "cuda";
  r.capabilities.pipelines_steps = true;
  r.capabilities.tf32_gemms = true;
  return r;
}

}  // namespace zosched
