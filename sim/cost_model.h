// What each op of a Schedule costs on its cluster, before any sharing:
// compute ops by roofline or a measured table, collectives by NCCL's cost
// model (docs/ARCHITECTURE.md, 'Simulator'; each cluster figure's source is
// noted beside it in clusters/*.pbtxt).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"
#include "sim/network.h"

namespace zosched {

// How the simulator runs one collective: a fixed latency, then one flow per
// ring (or tree) edge that carries `flow_bytes` over the edge's path; or, when
// the cluster has a measured table for it, a fixed duration.
struct CollectivePlan {
  int64_t latency_ns = 0;
  double flow_bytes = 0;  // wire bytes per edge, divided by the bus-bandwidth efficiency
  std::vector<std::pair<int, int>> edges;  // (from, to) schedule device ids
  bool measured = false;
  int64_t measured_ns = 0;
};

class CostModel {
 public:
  // `schedule` must outlive the model.
  //
  // Errors: InvalidArgument when a schedule device names no cluster device.
  static absl::StatusOr<CostModel> Build(const Schedule& schedule);

  // Index into schedule.cluster().devices() of schedule device `device`.
  int ClusterIndex(int device) const { return cluster_index_[device]; }

  // Duration of compute op `op` (a compute op of the schedule) in ns: the
  // cluster's measured_compute entry for its shape (op class, model,
  // examples, seq_len, elements) and the schedule's compute dtype, else for
  // that shape and any dtype (DTYPE_UNSPECIFIED), if there is one; else,
  // under a kernel ComputeProfile on a GPU (not a CPU testbed device), the
  // profile's kernel plan costed by sim/kernel_cost.h (memoised per op
  // shape and GPU figures; host dispatch as the profile's); else the
  // roofline (RooflineNs)
  //   max(flops / (peak_tflops·1e12 · efficiency),
  //       bytes_accessed / (memory_bandwidth_gbps·1e9 · memory_efficiency))
  // for the schedule's compute dtype on the op's device, times the device's
  // compute_time_scale (when > 0), rounded up to ns.
  //
  // Errors: FailedPrecondition naming the device, the missing figure and the
  // op when the cluster lacks a figure the op needs; InvalidArgument naming
  // the op when the profile's implementation does not run it.
  absl::StatusOr<int64_t> ComputeNs(const Op& op) const;

  // The roofline of compute op `op` in ns (the floor every prediction is
  // printed beside):
  //   max(flops / (peak_tflops·1e12 · efficiency),
  //       bytes_accessed / (memory_bandwidth_gbps·1e9 · memory_efficiency))
  // for the schedule's compute dtype, times compute_time_scale. Errors as
  // ComputeNs's.
  absl::StatusOr<int64_t> RooflineNs(const Op& op) const;

  // How collective op `op` runs. `network` gives the ring edges' paths (whose
  // link class picks the per-step latency). Ring for every kind; for
  // ALL_REDUCE the tree algorithm when its closed form is faster, as NCCL's
  // tuner would choose:
  //   ALL_GATHER, REDUCE_SCATTER: (n-1) steps, (n-1)/n · bytes per edge
  //   ALL_REDUCE ring:          2(n-1) steps, 2(n-1)/n · bytes per edge
  //   ALL_REDUCE tree:          2⌈log2 n⌉ steps, 2 · bytes per edge
  //   BROADCAST:                (n-1) steps, bytes per edge (n-1 edges)
  //   latency = base + steps × per-step latency of the edges' link class
  // A measured_collectives entry for (kind, ranks) wins: the time is
  // interpolated linearly in bytes between the nearest measured sizes.
  //
  // Errors: FailedPrecondition naming the missing CollectiveModel figure.
  absl::StatusOr<CollectivePlan> Collective(const Op& op, const Network& network) const;

 private:
  explicit CostModel(const Schedule& schedule) : schedule_(&schedule) {}

  // A ring over `participants` (schedule device ids, in order): the class of
  // link that dominates its hops and its slowest link's capacity. Memoised:
  // a schedule's collectives reuse a few participant sets.
  struct RingHops {
    LinkClass link_class = LINK_CLASS_UNSPECIFIED;
    double edge_gbps = std::numeric_limits<double>::infinity();
  };
  absl::StatusOr<RingHops> Ring(const google::protobuf::RepeatedField<int32_t>& participants,
                                const Network& network) const;

  // A schedule device's roofline for the schedule's compute dtype, its
  // figures looked up once. `peak` is null when the device has no usable
  // ComputePeak, `memory` false when it lacks a memory figure.
  struct Roofline {
    const Device* device = nullptr;
    const ComputePeak* peak = nullptr;
    double flops_per_s = 0;  // peak_tflops·1e12 · efficiency
    bool memory = false;
    double bytes_per_s = 0;  // memory_bandwidth_gbps·1e9 · memory_efficiency
    double time_scale = 1;   // Device.compute_time_scale (0 taken as 1)
  };

  absl::StatusOr<int64_t> KernelsNs(const Op& op) const;

  // A compute op's shape as its kernel plan sees it on its device: (the
  // device's kernel class, kind, sign, examples, seq_len, part, elements,
  // cast direction).
  using PlanKey = std::tuple<int, int, int, int, int, int, int64_t, int>;

  const Schedule* schedule_;
  std::vector<int> cluster_index_;
  std::vector<Roofline> rooflines_;  // per schedule device
  // Under a kernel profile, per schedule device: its kernel class, shared by
  // the devices on which every plan costs the same (equal KernelFigures and
  // compute_time_scale: a cluster of one GPU model has one class).
  std::vector<int> kernel_class_;
  // measured_compute by (op class, model, examples, seq_len, elements,
  // dtype, directions, peft).
  std::map<std::tuple<std::string, std::string, int, int, int64_t, int, int, std::string>, double>
      measured_compute_;
  // measured_collectives by (kind, ranks): (bytes, seconds), sorted.
  std::map<std::pair<std::string, int>, std::vector<std::pair<int64_t, double>>>
      measured_collectives_;
  mutable std::map<std::vector<int>, RingHops> rings_;     // Ring's memo
  mutable absl::flat_hash_map<PlanKey, int64_t> plan_ns_;  // KernelsNs's memo
};

}  // namespace zosched
