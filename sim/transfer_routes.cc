#include "sim/transfer_routes.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace zosched {

void TransferRoutes::Reset(const Schedule& schedule, const Network& network,
                           const CostModel& costs) {
  const int cluster_devices = schedule.cluster().devices_size();
  schedule_ = &schedule;
  network_ = &network;
  costs_ = &costs;
  cluster_devices_ = cluster_devices;
  h2d_paths_.assign(cluster_devices, Path());
  d2h_paths_.assign(cluster_devices, Path());
  host_paths_built_.assign(cluster_devices, false);
  d2d_paths_.clear();
  d2d_path_of_.assign(cluster_devices * cluster_devices, -1);
  collective_routes_.clear();
  collective_route_of_.clear();
}

void TransferRoutes::BuildHostPaths(int device) {
  h2d_paths_[device] = network_->HostToDevice(device);
  d2h_paths_[device] = network_->DeviceToHost(device);
  host_paths_built_[device] = true;
}

absl::StatusOr<const Path*> TransferRoutes::CopyRoute(const Op& op) {
  const CopyOp& c = op.copy();
  const int device = costs_->ClusterIndex(op.device());
  if (c.direction() == HOST_TO_DEVICE) return HostToDevice(device);
  if (c.direction() == DEVICE_TO_HOST) return DeviceToHost(device);
  if (c.peer_device() < 0 || c.peer_device() >= schedule_->devices_size()) return NoPeer(op);
  return PeerPath(device, costs_->ClusterIndex(c.peer_device()));
}

absl::Status TransferRoutes::NoPeer(const Op& op) const {
  return absl::InvalidArgumentError(absl::StrFormat("op %d '%s': no peer device %d", op.id(),
                                                    op.name(), op.copy().peer_device()));
}

absl::StatusOr<const Path*> TransferRoutes::PeerPath(int from, int to) {
  int& index = d2d_path_of_[from * cluster_devices_ + to];
  if (index < 0) {
    ASSIGN_OR_RETURN(Path path, network_->DeviceToDevice(from, to));
    index = d2d_paths_.size();
    d2d_paths_.push_back(std::move(path));
  }
  return &d2d_paths_[index];
}

absl::StatusOr<const CollectiveRoute*> TransferRoutes::RouteOf(const Op& op) {
  const CollectiveOp& c = op.collective();
  const CollectiveRoute*& route = collective_route_of_[{
      c.kind(), c.bytes(), absl::MakeConstSpan(c.participants().data(), c.participants_size())}];
  if (route == nullptr) {
    CollectiveRoute built;
    ASSIGN_OR_RETURN(built.plan, costs_->Collective(op, *network_));
    built.paths.reserve(built.plan.edges.size());
    for (const auto& [from, to] : built.plan.edges) {
      ASSIGN_OR_RETURN(const Path* path,
                       PeerPath(costs_->ClusterIndex(from), costs_->ClusterIndex(to)));
      built.paths.push_back(path);
    }
    collective_routes_.push_back(std::move(built));
    route = &collective_routes_.back();
  }
  return route;
}

}  // namespace zosched
