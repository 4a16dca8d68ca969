#include "schedule/cluster_lookup.h"

namespace zosched {

const Device* FindDevice(const Cluster& cluster, const std::string& name) {
  const int index = DeviceIndex(cluster, name);
  return index < 0 ? nullptr : &cluster.devices(index);
}

int DeviceIndex(const Cluster& cluster, const std::string& name) {
  for (int i = 0; i < cluster.devices_size(); ++i) {
    if (cluster.devices(i).name() == name) return i;
  }
  return -1;
}

const Host* FindHost(const Cluster& cluster, const std::string& name) {
  for (const Host& host : cluster.hosts()) {
    if (host.name() == name) return &host;
  }
  return nullptr;
}

}  // namespace zosched
