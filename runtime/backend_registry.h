// The device backends this program was linked with, by name. Each backend
// registers itself from a file of its own (cpu_backend_registration.cc,
// runtime/cuda/cuda_backend_registration.cc) with a BackendRegistrar at
// static initialisation, so the code that picks a backend
// (backend_factory.h) names none.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/backend_options.h"
#include "runtime/mpi_world.h"
#include "schedule/schedule.pb.h"

namespace zosched {

struct BackendRegistration {
  std::string name;  // --backend's value
  BackendCapabilities capabilities;
  // OK when this build and machine can run the backend; else why not
  // (InvalidArgument, FailedPrecondition), as --backend=NAME's error.
  std::function<absl::Status()> check_available;
  // The backend of device `device` of `schedule` (validated; both outlive
  // it), for options whose name is this backend's and that passed
  // check_available.
  std::function<absl::StatusOr<std::unique_ptr<Backend>>(
      const BackendOptions& options, const Schedule& schedule, int device,
      const std::vector<int32_t>& label_words, NodeSharedMemory* host_memory,
      MpiCollectives* collectives)>
      create;
};

// Registers `registration`; CHECK-fails on a name registered already.
void RegisterBackend(BackendRegistration registration);

// The backend registered as `name`, or nullptr.
const BackendRegistration* FindBackend(const std::string& name);

// The registered backends' names, sorted, joined by `separator`.
std::string BackendNames(const std::string& separator);

// The names of the registered backends that have `capability`, sorted,
// joined by `separator` ("" when none has it).
std::string BackendNamesWith(bool BackendCapabilities::*capability, const std::string& separator);

// A backend's Create result as a Backend (for BackendRegistration.create).
template <typename ConcreteBackend>
absl::StatusOr<std::unique_ptr<Backend>> AsBackend(
    absl::StatusOr<std::unique_ptr<ConcreteBackend>> backend) {
  if (!backend.ok()) return backend.status();
  return std::unique_ptr<Backend>(std::move(*backend));
}

// Registers a backend when constructed: a backend's registration file
// defines one at namespace scope (its Bazel target alwayslink).
struct BackendRegistrar {
  explicit BackendRegistrar(BackendRegistration registration) {
    RegisterBackend(std::move(registration));
  }
};

}  // namespace zosched
