// Looking up a Cluster's elements by name: the one way every layer finds a
// device or host a Schedule or a Cluster refers to.
#pragma once

#include <string>

#include "schedule/cluster.pb.h"

namespace zosched {

// The device of `cluster` named `name`, or nullptr if there is none. The
// pointer is valid while `cluster` is alive and unmodified.
const Device* FindDevice(const Cluster& cluster, const std::string& name);

// The index in cluster.devices() of the device named `name`, or -1.
int DeviceIndex(const Cluster& cluster, const std::string& name);

// The host of `cluster` named `name`, or nullptr if there is none. The pointer
// is valid while `cluster` is alive and unmodified.
const Host* FindHost(const Cluster& cluster, const std::string& name);

}  // namespace zosched
