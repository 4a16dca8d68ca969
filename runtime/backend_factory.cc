#include "runtime/backend_factory.h"

#include "base/check.h"
#include "base/status_macros.h"
#include "runtime/backend_registry.h"

namespace zosched {
namespace {

// The registration of a backend CheckBackendAvailable accepted.
const BackendRegistration& RegistrationOf(const std::string& name) {
  const BackendRegistration* registration = FindBackend(name);
  CHECK(registration != nullptr) << "backend '" << name << "' is not registered";
  return *registration;
}

}  // namespace

absl::Status CheckBackendAvailable(const std::string& name) {
  const BackendRegistration* registration = FindBackend(name);
  if (registration == nullptr) {
    return absl::InvalidArgumentError("--backend='" + name + "': expected " +
                                      BackendNames(" or "));
  }
  return registration->check_available();
}

BackendCapabilities CapabilitiesOf(const BackendOptions& options) {
  return RegistrationOf(options.name).capabilities;
}

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const BackendOptions& options,
                                                       const Schedule& schedule, int device,
                                                       const std::vector<int32_t>& label_words,
                                                       NodeSharedMemory* host_memory,
                                                       MpiCollectives* collectives) {
  RETURN_IF_ERROR(CheckBackendAvailable(options.name));
  return RegistrationOf(options.name)
      .create(options, schedule, device, label_words, host_memory, collectives);
}

}  // namespace zosched
