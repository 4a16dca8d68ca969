// Whether this machine can give a run the host memory it needs, checked
// before anything large is allocated, so that a run that cannot fit is
// refused with the shortfall instead of dying of std::bad_alloc mid-set-up.
//
// What a run's processes hold in host memory (bytes), from the schedule:
//   - each host's parameter store (HOST_PARAMS buffers), once per node in
//     shared memory and mapped by every rank of the node;
//   - on the CPU testbed, each device's arena: the sum of its buffers (a
//     GPU backend holds those on the GPU);
//   - rank 0's fp32 copy of the whole model, for evaluations and the final
//     outputs (the checksum and weights.safetensors), one at a time.
// Not counted: what is small beside these (activations of an evaluation,
// the task's examples) or freed before training (the initialisation's
// fp32 copy of one part at a time).
// The cluster file's host capacity is a figure of the machine described;
// what counts here is what this process may get:
//   - per process: RLIMIT_AS (ulimit -v) less the address space in use,
//     RLIMIT_DATA (ulimit -d) less the private data in use;
//   - per node: MemAvailable (/proc/meminfo) and the memory cgroup's limit
//     less its usage (v1 or v2), whichever is less.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The host memory one rank of a run holds, in bytes.
struct RankHostMemory {
  int64_t host_store = 0;     // its host's parameter store (shared by the node's ranks)
  int64_t device_arena = 0;   // its device's buffers, when they live in host memory
  int64_t model_copies = 0;   // fp32 copies of the model (rank 0 only)
  int64_t Total() const { return host_store + device_arena + model_copies; }
};

// What rank `device` of `schedule` holds. `arena_in_host_memory`: the
// backend keeps device buffers in host memory (the CPU testbed).
// `fp32_copies`: rank 0 evaluates or writes the final outputs.
RankHostMemory HostMemoryOfRank(const Schedule& schedule, int device, bool arena_in_host_memory,
                                bool fp32_copies);

// What this process and its node may still allocate, in bytes; the
// largest int64 where no limit applies.
struct MemoryHeadroom {
  static constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();
  int64_t address_space = kUnlimited;  // RLIMIT_AS less VmSize
  int64_t address_space_limit = kUnlimited;
  int64_t data = kUnlimited;           // RLIMIT_DATA less VmData
  int64_t data_limit = kUnlimited;
  int64_t node = kUnlimited;           // MemAvailable, or the cgroup's room if less
  std::string node_source;             // "MemAvailable" or the cgroup file
};

// Reads this process's limits and the node's available memory.
// Errors: Internal when /proc/self/status or /proc/meminfo cannot be read.
absl::StatusOr<MemoryHeadroom> ReadMemoryHeadroom();

// OK when `headroom` covers the ranks of `schedule` that run in this
// process's place: `device` >= 0 for one rank (its own limits and the node),
// or -1 for the launcher of all the schedule's ranks on this node (each
// rank's limits, which they inherit, and the node against all of them).
// Errors: ResourceExhausted naming the rank, what it needs (store, arena,
// copies), what it may get, which limit binds and what would help (a
// higher limit, --final_outputs=false and no evaluations, a smaller model
// or host dtype).
absl::Status CheckHostMemory(const Schedule& schedule, int device, bool arena_in_host_memory,
                             bool fp32_copies, const MemoryHeadroom& headroom);

}  // namespace zosched
