// Registers the CPU testbed (cpu_backend.h) as backend "cpu".
#include "runtime/backend_registry.h"
#include "runtime/cpu_backend.h"

namespace zosched {
namespace {

BackendRegistration CpuRegistration() {
  BackendRegistration r;
  r.name = "cpu";
  r.capabilities.arena_in_host_memory = true;
  r.capabilities.probes_compute_speed = true;
  r.capabilities.computes_on_host_threads = true;
  r.check_available = [] { return absl::OkStatus(); };
  r.create = [](const BackendOptions& options, const Schedule& schedule, int device,
                const std::vector<int32_t>& label_words, NodeSharedMemory* host_memory,
                MpiCollectives* collectives) -> absl::StatusOr<std::unique_ptr<Backend>> {
    return AsBackend(CpuBackend::Create(schedule, device, label_words, host_memory, collectives,
                                        options.compute_threads));
  };
  return r;
}

const BackendRegistrar kCpuBackend(CpuRegistration());

}  // namespace
}  // namespace zosched
