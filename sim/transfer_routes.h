// The routes a simulation's transfers take over the network's links
// (docs/ARCHITECTURE.md, 'Simulator'): host <-> device by cluster device,
// device -> device by (from, to) cluster devices, collectives by kind, size
// and participants, each built once, on first use, and kept until the next
// Reset (the flows in flight and FlowSharing's patterns know a path by its
// address).
#pragma once

#include <deque>
#include <tuple>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "schedule/schedule.pb.h"
#include "sim/cost_model.h"
#include "sim/network.h"

namespace zosched {

// How a collective runs: its plan and each plan edge's route.
struct CollectiveRoute {
  CollectivePlan plan;
  std::vector<const Path*> paths;
};

class TransferRoutes {
 public:
  // Forgets every route (keeping the memory): those asked for next are
  // `schedule`'s over `network` at `costs` (built from it), all of which
  // must outlive them.
  void Reset(const Schedule& schedule, const Network& network, const CostModel& costs);

  // The route of copy op `op`: host memory -> its device, the reverse, or
  // its device -> its peer device (Network::HostToDevice, DeviceToHost,
  // DeviceToDevice). Errors: InvalidArgument for a peer device that does
  // not exist; DeviceToDevice's.
  absl::StatusOr<const Path*> CopyRoute(const Op& op);
  // The route of collective op `op`: CostModel::Collective's plan (and its
  // errors) and the peer path of each of its edges.
  absl::StatusOr<const CollectiveRoute*> RouteOf(const Op& op);

 private:
  // Routes between the host and cluster device `device`, built once.
  const Path* HostToDevice(int device) {
    if (!host_paths_built_[device]) BuildHostPaths(device);
    return &h2d_paths_[device];
  }
  const Path* DeviceToHost(int device) {
    if (!host_paths_built_[device]) BuildHostPaths(device);
    return &d2h_paths_[device];
  }
  void BuildHostPaths(int device);
  // CopyRoute's error for a peer device that does not exist (apart from
  // CopyRoute, whose every call it would slow down).
  ABSL_ATTRIBUTE_NOINLINE absl::Status NoPeer(const Op& op) const;
  // Cluster device `from` -> cluster device `to`, built once.
  absl::StatusOr<const Path*> PeerPath(int from, int to);

  const Schedule* schedule_ = nullptr;
  const Network* network_ = nullptr;
  const CostModel* costs_ = nullptr;
  int cluster_devices_ = 0;
  // Sized once or in deques, filled on first use: the pointers handed out
  // stay valid.
  std::vector<Path> h2d_paths_, d2h_paths_;
  std::vector<bool> host_paths_built_;
  std::deque<Path> d2d_paths_;
  std::vector<int> d2d_path_of_;  // [from × cluster devices + to]: index, or -1
  std::deque<CollectiveRoute> collective_routes_;
  absl::flat_hash_map<std::tuple<CollectiveKind, int64_t, absl::Span<const int32_t>>,
                      const CollectiveRoute*>
      collective_route_of_;
};

}  // namespace zosched
