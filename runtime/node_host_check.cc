#include "runtime/node_host_check.h"

#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "schedule/cluster_lookup.h"

namespace zosched {

absl::Status CheckNodeIsOneHost(const Schedule& schedule, const NodeSharedMemory& memory,
                                const std::string& host) {
  ASSIGN_OR_RETURN(const std::vector<std::string> hosts, AllGatherStrings(memory.node(), host));
  for (const std::string& other : hosts) {
    if (other != host) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "ranks on one node must share one schedule host: this rank's device is on '%s', "
          "another rank of the node is on '%s'",
          host, other));
    }
  }
  int on_host = 0;
  for (const ScheduleDevice& d : schedule.devices()) {
    const Device* device = FindDevice(schedule.cluster(), d.cluster_device());
    on_host += device != nullptr && device->host() == host;
  }
  if (on_host != static_cast<int>(hosts.size())) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the schedule puts %d devices on host '%s' but %d ranks share this node: start the "
        "ranks of one schedule host on one node (their parameter store is that node's shared "
        "memory)",
        on_host, host, hosts.size()));
  }
  return absl::OkStatus();
}

}  // namespace zosched
