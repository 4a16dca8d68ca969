#include "schedule/cluster_lookup.h"

namespace zosched {

const Device* FindDevice(const Cluster& cluster, const std::string& name) {
  for (const Device& device : cluster.devices()) {
    if (device.name() == name) return &device;
  }
  return nullptr;
}

const Host* FindHost(const Cluster& cluster, const std::string& name) {
  for (const Host& host : cluster.hosts()) {
    if (host.name() == name) return &host;
  }
  return nullptr;
}

}  // namespace zosched
