#include "sim/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernel_plans/profile_plan.h"
#include "schedule/compute_op_model.h"
#include "schedule/cluster_lookup.h"
#include "sim/kernel_cost.h"

namespace zosched {
namespace {

std::string Describe(const Op& op) {
  return absl::StrFormat("op %d '%s'", op.id(), op.name());
}

// Seconds at `bytes`, linear between the nearest measured sizes (and along
// the nearest segment beyond them).
double Interpolate(const std::vector<std::pair<int64_t, double>>& points, int64_t bytes) {
  if (points.size() == 1) return points[0].second;
  size_t hi = 1;
  while (hi + 1 < points.size() && points[hi].first < bytes) ++hi;
  const auto& [x0, y0] = points[hi - 1];
  const auto& [x1, y1] = points[hi];
  if (x1 == x0) return y1;
  return std::max(0.0, y0 + (y1 - y0) * (static_cast<double>(bytes - x0) / (x1 - x0)));
}

}  // namespace

absl::StatusOr<CostModel> CostModel::Build(const Schedule& schedule) {
  CostModel model(schedule);
  const bool kernels = schedule.compute_profile() != ROOFLINE;  // (else no plan is costed)
  std::vector<std::pair<std::string, double>> classes;          // (KernelFigures, time scale)
  const Cluster& cluster = schedule.cluster();
  for (const ScheduleDevice& d : schedule.devices()) {
    const int index = DeviceIndex(cluster, d.cluster_device());
    if (index < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "schedule device %d names cluster device '%s', which cluster '%s' lacks",
          d.id(), d.cluster_device(), cluster.name()));
    }
    model.cluster_index_.push_back(index);
    Roofline roofline;
    roofline.device = &cluster.devices(index);
    const DType dtype = schedule.training().compute_dtype();
    for (const ComputePeak& p : roofline.device->peaks()) {
      if (p.dtype() == dtype) roofline.peak = &p;
    }
    if (roofline.peak != nullptr && roofline.peak->peak_tflops() > 0 &&
        roofline.peak->efficiency() > 0) {
      roofline.flops_per_s = roofline.peak->peak_tflops() * 1e12 * roofline.peak->efficiency();
    } else {
      roofline.peak = nullptr;
    }
    roofline.memory =
        roofline.device->memory_bandwidth_gbps() > 0 && roofline.device->memory_efficiency() > 0;
    if (roofline.memory) {
      roofline.bytes_per_s =
          roofline.device->memory_bandwidth_gbps() * 1e9 * roofline.device->memory_efficiency();
    }
    if (roofline.device->compute_time_scale() > 0) {
      roofline.time_scale = roofline.device->compute_time_scale();
    }
    model.rooflines_.push_back(roofline);
    if (kernels) {
      std::pair<std::string, double> figures(KernelFigures(*roofline.device), roofline.time_scale);
      const int kernel_class = std::find(classes.begin(), classes.end(), figures) - classes.begin();
      if (kernel_class == static_cast<int>(classes.size())) classes.push_back(std::move(figures));
      model.kernel_class_.push_back(kernel_class);
    }
  }
  for (const MeasuredCompute& m : cluster.measured_compute()) {
    model.measured_compute_[{m.op_class(), m.model(), m.examples(), m.seq_len(), m.elements(),
                             static_cast<int>(m.dtype()), m.directions(), m.peft()}] = m.seconds();
  }
  for (const MeasuredCollective& m : cluster.measured_collectives()) {
    model.measured_collectives_[{m.kind(), m.ranks()}].push_back({m.bytes(), m.seconds()});
  }
  for (auto& [key, points] : model.measured_collectives_) {
    std::sort(points.begin(), points.end());
  }
  return model;
}

absl::StatusOr<int64_t> CostModel::ComputeNs(const Op& op) const {
  const ComputeOp& c = op.compute();
  const Roofline& roofline = rooflines_[op.device()];
  if (!measured_compute_.empty()) {  // (the key costs two strings: only when there is a table)
    const int directions = MeasuredDirections(schedule_->training(), c.kind());
    const std::string peft = MeasuredPeft(schedule_->training(), c.kind());
    for (const DType dtype : {schedule_->training().compute_dtype(), DTYPE_UNSPECIFIED}) {
      auto measured = measured_compute_.find({ComputeKind_Name(c.kind()),
                                              schedule_->model().name(), c.examples(),
                                              c.seq_len(), c.params().elements(), dtype,
                                              directions, peft});
      if (measured != measured_compute_.end()) {
        return CeilNs(measured->second * roofline.time_scale);
      }
    }
  }
  if (schedule_->compute_profile() != ROOFLINE && !roofline.device->shares_host_cores()) {
    return KernelsNs(op);
  }
  return RooflineNs(op);
}

absl::StatusOr<int64_t> CostModel::KernelsNs(const Op& op) const {
  const ComputeOp& c = op.compute();
  const PlanKey key{kernel_class_[op.device()],
                    c.kind(),
                    c.sign(),
                    c.examples(),
                    c.seq_len(),
                    c.params().part(),
                    c.params().elements(),
                    c.cast_direction()};
  auto cached = plan_ns_.find(key);
  if (cached != plan_ns_.end()) return cached->second;
  const Roofline& roofline = rooflines_[op.device()];
  absl::StatusOr<KernelPlan> plan =
      ProfilePlan(schedule_->compute_profile(), schedule_->model(), c,
                  schedule_->training().compute_dtype(), schedule_->training().peft());
  if (!plan.ok()) {
    return absl::Status(plan.status().code(),
                        absl::StrFormat("%s: %s", Describe(op), plan.status().message()));
  }
  absl::StatusOr<PlanCost> cost = CostPlan(
      *plan, *roofline.device, ProfileHostDispatchS(schedule_->compute_profile()));
  if (!cost.ok()) {
    return absl::Status(cost.status().code(),
                        absl::StrFormat("%s (profile %s): %s", Describe(op),
                                        ComputeProfile_Name(schedule_->compute_profile()),
                                        cost.status().message()));
  }
  const int64_t ns = CeilNs(cost->seconds * roofline.time_scale);
  plan_ns_.emplace(key, ns);
  return ns;
}

absl::StatusOr<int64_t> CostModel::RooflineNs(const Op& op) const {
  const ComputeOp& c = op.compute();
  const Roofline& roofline = rooflines_[op.device()];
  double flops_s = 0;
  if (c.flops() > 0) {
    if (roofline.peak == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrFormat("device '%s' has no ComputePeak (peak_tflops and efficiency) for %s, "
                          "which %s needs; add one to the cluster, or a measured_compute entry",
                          roofline.device->name(),
                          DType_Name(schedule_->training().compute_dtype()), Describe(op)));
    }
    flops_s = c.flops() / roofline.flops_per_s;
  }
  double bytes_s = 0;
  if (c.bytes_accessed() > 0) {
    if (!roofline.memory) {
      return absl::FailedPreconditionError(
          absl::StrFormat("device '%s' lacks memory_bandwidth_gbps or memory_efficiency, which "
                          "%s needs",
                          roofline.device->name(), Describe(op)));
    }
    bytes_s = c.bytes_accessed() / roofline.bytes_per_s;
  }
  return CeilNs(std::max(flops_s, bytes_s) * roofline.time_scale);
}

absl::StatusOr<CostModel::RingHops> CostModel::Ring(
    const google::protobuf::RepeatedField<int32_t>& participants, const Network& network) const {
  std::vector<int> key(participants.begin(), participants.end());
  auto cached = rings_.find(key);
  if (cached != rings_.end()) return cached->second;
  const int n = participants.size();
  RingHops ring;
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<Path> path = network.DeviceToDevice(cluster_index_[participants[i]],
                                                       cluster_index_[participants[(i + 1) % n]]);
    if (!path.ok()) return path.status();
    for (int l : path->links)
      ring.edge_gbps = std::min(ring.edge_gbps, network.links()[l].capacity);
    if (ring.link_class == LINK_CLASS_UNSPECIFIED || path->link_class == NETWORK ||
        (path->link_class == PCIE && ring.link_class != NETWORK)) {
      ring.link_class = path->link_class;
    }
  }
  rings_.emplace(std::move(key), ring);
  return ring;
}

absl::StatusOr<CollectivePlan> CostModel::Collective(const Op& op,
                                                     const Network& network) const {
  const CollectiveOp& c = op.collective();
  const int n = c.participants_size();
  CollectivePlan plan;
  if (n <= 1) return plan;
  if (!measured_collectives_.empty()) {
    auto measured = measured_collectives_.find({CollectiveKind_Name(c.kind()), n});
    if (measured != measured_collectives_.end()) {
      plan.measured = true;
      plan.measured_ns = CeilNs(Interpolate(measured->second, c.bytes()));
      return plan;
    }
  }
  ASSIGN_OR_RETURN(const RingHops ring, Ring(c.participants(), network));
  const LinkClass link_class = ring.link_class;
  const double edge_gbps = ring.edge_gbps;
  const CollectiveModel& model = schedule_->cluster().collectives();
  const CollectiveModel::StepLatency* step = nullptr;
  for (const CollectiveModel::StepLatency& s : model.step_latencies()) {
    if (s.link_class() == link_class) step = &s;
  }
  if (step == nullptr || !(model.bus_bandwidth_efficiency() > 0)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cluster '%s': the CollectiveModel has no %s for %s, which %s needs",
        schedule_->cluster().name(),
        step == nullptr ? "step_latencies entry" : "bus_bandwidth_efficiency",
        LinkClass_Name(link_class), Describe(op)));
  }
  const double bytes = c.bytes();
  int64_t steps = n - 1;
  double per_edge = bytes * (n - 1) / n;
  double base_s = model.ring_base_latency_s(), step_s = step->ring_s();
  switch (c.kind()) {
    case ALL_REDUCE: {
      steps = 2 * (n - 1);
      per_edge = 2 * bytes * (n - 1) / n;
      const int64_t tree_steps = 2 * static_cast<int64_t>(std::ceil(std::log2(n)));
      // Compare the closed forms, each alone on the ring's slowest link.
      const double ring_s = base_s + steps * step_s + per_edge / (edge_gbps * 1e9);
      const double tree_s = model.tree_base_latency_s() + tree_steps * step->tree_s() +
                            2 * bytes / (edge_gbps * 1e9);
      if (step->tree_s() > 0 && tree_s < ring_s) {
        steps = tree_steps;
        per_edge = 2 * bytes;
        base_s = model.tree_base_latency_s();
        step_s = step->tree_s();
      }
      break;
    }
    case BROADCAST:
      per_edge = bytes;
      break;
    default:
      break;
  }
  plan.latency_ns = CeilNs(base_s + steps * step_s);
  plan.flow_bytes = per_edge / model.bus_bandwidth_efficiency();
  const int edges = c.kind() == BROADCAST ? n - 1 : n;
  for (int i = 0; i < edges; ++i) {
    plan.edges.push_back({c.participants(i), c.participants((i + 1) % n)});
  }
  return plan;
}

}  // namespace zosched
