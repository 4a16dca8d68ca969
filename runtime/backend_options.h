// What `train` asks of a device backend (BackendOptions) and what a backend
// can do (BackendCapabilities). Backends register both with their name in
// backend_registry.h; shared code asks about a capability, never about a
// backend's name.
#pragma once

#include <string>

namespace zosched {

struct BackendOptions {
  std::string name = "cpu";  // a registered backend (backend_registry.h)
  // Cores each device computes on (the result is bitwise the same for any
  // count); above 1 only for a backend with computes_on_host_threads.
  int compute_threads = 1;
  // FP32 GEMMs may use TF32 tensor cores (changes the numbers); only for a
  // backend with tf32_gemms.
  bool allow_tf32 = false;
};

// What a backend can do, so that shared code asks about a capability rather
// than comparing backend names.
struct BackendCapabilities {
  bool pipelines_steps = false;           // host enqueues step t+1 while step t runs
  bool arena_in_host_memory = false;      // device buffers live in host memory (CheckHostMemory)
  bool probes_compute_speed = false;      // ComputeSpeedProbeOf accepts it (the CPU testbed)
  bool computes_on_host_threads = false;  // BackendOptions.compute_threads applies
  bool tf32_gemms = false;                // BackendOptions.allow_tf32 applies
};

}  // namespace zosched
