// Where the host buffers of one schedule host sit in that node's shared
// memory (mpi_world.h NodeSharedMemory): back to back in schedule order,
// each at a 64-byte aligned offset. Every backend and every rank of the node
// uses this one layout, so the node's single parameter store is the same
// bytes for all of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedule/schedule.pb.h"

namespace zosched {

struct HostStoreLayout {
  // Per Schedule.buffers index: byte offset in the node's shared memory, or
  // -1 for buffers that are not host buffers of this host.
  std::vector<int64_t> offset;
  int64_t bytes = 0;  // the shared memory the host needs
};

HostStoreLayout LayOutHostStore(const Schedule& schedule, const std::string& host);

}  // namespace zosched
