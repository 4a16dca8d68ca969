#include "runtime/cuda/calibration/calibration_plan.h"

#include <set>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "kernel_plans/profile_plan.h"
#include "schedule/compute_op_model.h"
#include "schedule/lowering.h"
#include "schedule/strategy_grid.h"
#include "schedule/testbed_grid.h"

namespace zosched {

absl::StatusOr<GpuTargets> GpuTargetSchedules(const ModelSpec& model, const Cluster& cluster,
                                              int batch, int seq, DType compute) {
  // One GPU runs mezo; then the testbed's grids.
  std::vector<StrategyGrid> targets = {{MEZO}};
  targets.insert(targets.end(), TestbedGrids().begin(), TestbedGrids().end());
  GpuTargets out;
  for (const StrategyGrid& t : targets) {
    LowerOptions o = GridLowerOptions(t);
    o.training.set_batch_size(batch);
    o.training.set_seq_len(seq);
    o.training.set_learning_rate(1e-6);
    o.training.set_compute_dtype(compute);
    const std::string name = absl::StrReplaceAll(GridSchemeName(t), {{"_", " "}});
    absl::StatusOr<Schedule> s =
        LowerSchedule(model, ClusterForLowering(cluster, t.pertp * t.dp), o);
    if (absl::IsResourceExhausted(s.status())) {
      out.skipped.push_back(absl::StrCat(name, ": ", s.status().message()));
      continue;
    }
    if (!s.ok()) {
      return absl::Status(s.status().code(),
                          absl::StrCat("lowering ", name, ": ", s.status().message()));
    }
    out.schedules.push_back(*std::move(s));
  }
  if (out.schedules.empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "no schedule of model '%s' fits cluster '%s': %s", model.name(), cluster.name(),
        absl::StrJoin(out.skipped, "; ")));
  }
  return out;
}

Cluster ClusterForLowering(const Cluster& cluster, int devices) {
  Cluster c = cluster;
  const Device first = cluster.devices(0);
  for (int k = 1; c.devices_size() < devices; ++k) {
    Device* copy = c.add_devices();
    *copy = first;
    copy->set_name(absl::StrCat(first.name(), "+", k));
  }
  if (c.devices_size() == cluster.devices_size()) return c;
  // Collectives among the copies cross the first device's links, whose
  // class the model may lack (ValidateCluster asks for it): placeholders.
  std::set<LinkClass> given;
  for (const CollectiveModel::StepLatency& s : c.collectives().step_latencies()) {
    given.insert(s.link_class());
  }
  for (LinkClass link : {PCIE, NVLINK, C2C, NETWORK, EMULATED}) {
    if (given.count(link)) continue;
    CollectiveModel::StepLatency* step = c.mutable_collectives()->add_step_latencies();
    step->set_link_class(link);
    step->set_ring_s(1e-6);  // placeholder: lowering only, never simulated
    step->set_tree_s(1e-6);
  }
  return c;
}

DeviceTimingViews TimingViews(const Schedule& schedule, int device) {
  auto removed = [device](const Op& op) { return op.device() == device && op.has_collective(); };
  DeviceTimingViews v;
  v.backend = schedule;
  v.backend.clear_ops();
  v.executor = schedule;
  v.executor.clear_ops();
  v.executor.clear_edges();
  std::vector<int64_t> gone;
  for (const Op& op : schedule.ops()) {
    if (removed(op)) {
      gone.push_back(op.id());
      continue;
    }
    *v.backend.add_ops() = op;
    *v.executor.add_ops() = op;
  }
  for (const Op& op : schedule.ops()) {
    if (removed(op)) *v.backend.add_ops() = op;
  }
  // Bridge each removed op: its producers now precede its consumers.
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (const Edge& e : schedule.edges()) edges.push_back({e.from(), e.to()});
  for (int64_t x : gone) {
    std::vector<int64_t> from, to;
    std::vector<std::pair<int64_t, int64_t>> kept;
    for (const auto& e : edges) {
      if (e.second == x) {
        from.push_back(e.first);
      } else if (e.first == x) {
        to.push_back(e.second);
      } else {
        kept.push_back(e);
      }
    }
    std::set<std::pair<int64_t, int64_t>> present(kept.begin(), kept.end());
    for (int64_t f : from) {
      for (int64_t t : to) {
        if (present.insert({f, t}).second) kept.push_back({f, t});
      }
    }
    edges = std::move(kept);
  }
  for (const auto& [from, to] : edges) {
    Edge* e = v.executor.add_edges();
    e->set_from(from);
    e->set_to(to);
  }
  return v;
}

MeasuredCompute ComputeShape(const Schedule& schedule, const ComputeOp& op) {
  MeasuredCompute m;
  m.set_op_class(ComputeKind_Name(op.kind()));
  m.set_model(schedule.model().name());
  m.set_examples(op.examples());
  m.set_seq_len(op.seq_len());
  m.set_elements(op.params().elements());
  m.set_dtype(schedule.training().compute_dtype());
  m.set_directions(MeasuredDirections(schedule.training(), op.kind()));
  m.set_peft(MeasuredPeft(schedule.training(), op.kind()));
  return m;
}

std::string ShapeKey(const MeasuredCompute& shape) {
  return absl::StrCat(shape.op_class(), "/", shape.model(), "/", shape.examples(), "/",
                      shape.seq_len(), "/", shape.elements(), "/", DType_Name(shape.dtype()), "/",
                      shape.directions());
}

std::vector<ShapeTiming> ComputeTimings(const Schedule& schedule, int device,
                                        const std::vector<OpInterval>& intervals,
                                        int64_t first_step) {
  // Shapes in order of their first op; each op's shape index.
  std::vector<MeasuredCompute> shapes;
  absl::flat_hash_map<std::string, int> shape_index;
  absl::flat_hash_map<int64_t, int> shape_of_op;
  for (const Op& op : schedule.ops()) {
    if (op.device() != device || !op.has_compute()) continue;
    MeasuredCompute shape = ComputeShape(schedule, op.compute());
    auto [it, inserted] = shape_index.emplace(ShapeKey(shape), shapes.size());
    if (inserted) shapes.push_back(std::move(shape));
    shape_of_op[op.id()] = it->second;
  }
  std::vector<std::vector<double>> seconds(shapes.size());
  for (const OpInterval& interval : intervals) {
    if (interval.device() != device || interval.step() < first_step) continue;
    auto it = shape_of_op.find(interval.op_id());
    if (it == shape_of_op.end()) continue;
    seconds[it->second].push_back((interval.end_ns() - interval.start_ns()) / 1e9);
  }
  std::vector<ShapeTiming> timings;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (seconds[i].empty()) continue;
    ShapeTiming t;
    t.row = shapes[i];
    t.stats = Summarize(seconds[i]);
    t.samples = seconds[i].size();
    t.row.set_seconds(t.stats.median);
    timings.push_back(std::move(t));
  }
  return timings;
}

absl::StatusOr<std::vector<MeasuredCollective>> CollectiveRows(int ranks,
                                                               const std::vector<double>& numbers) {
  if (numbers.empty() || numbers.size() % 4 != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the collective probe on %d ranks wrote %d numbers (expected rows of bytes, median, min, "
        "max)",
        ranks, numbers.size()));
  }
  std::vector<MeasuredCollective> rows;
  for (size_t i = 0; i < numbers.size(); i += 4) {
    if (!(numbers[i] > 0) || !(numbers[i + 1] > 0)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the collective probe on %d ranks: %g bytes took %g s (expected both > 0)", ranks,
          numbers[i], numbers[i + 1]));
    }
    MeasuredCollective m;
    m.set_kind(CollectiveKind_Name(ALL_GATHER));
    m.set_ranks(ranks);
    m.set_bytes(static_cast<int64_t>(numbers[i]));
    m.set_seconds(numbers[i + 1]);
    rows.push_back(m);
  }
  return rows;
}

void WriteGpuMeasurements(const std::vector<MeasuredCompute>& compute,
                          const std::vector<HostLinkFigures>& host_links,
                          const std::vector<MeasuredCollective>& collectives,
                          const std::vector<MeasuredGemm>& gemms, Cluster* cluster) {
  cluster->clear_measured_compute();
  for (const MeasuredCompute& m : compute) *cluster->add_measured_compute() = m;

  std::set<std::string> measured_links;
  for (int i = 0; i < cluster->devices_size() && i < static_cast<int>(host_links.size()); ++i) {
    Device* d = cluster->mutable_devices(i);
    const HostLinkFigures& f = host_links[i];
    LinkSpec* link = d->mutable_host_link();
    link->set_down_gbps(f.down_gbps);
    link->set_up_gbps(f.up_gbps);
    link->set_duplex_gbps(f.duplex_gbps);
    link->set_latency_s(f.latency_s);
    measured_links.insert(d->name() + "/host_link");
  }
  google::protobuf::RepeatedPtrField<MeasuredTransfer> transfers;
  for (const MeasuredTransfer& m : cluster->measured_transfers()) {
    if (!measured_links.count(m.link())) *transfers.Add() = m;
  }
  *cluster->mutable_measured_transfers() = std::move(transfers);

  std::set<std::pair<std::string, int>> replaced;
  for (const MeasuredCollective& m : collectives) replaced.insert({m.kind(), m.ranks()});
  google::protobuf::RepeatedPtrField<MeasuredCollective> rows;
  for (const MeasuredCollective& m : cluster->measured_collectives()) {
    if (!replaced.count({m.kind(), m.ranks()})) *rows.Add() = m;
  }
  for (const MeasuredCollective& m : collectives) *rows.Add() = m;
  *cluster->mutable_measured_collectives() = std::move(rows);

  for (Device& d : *cluster->mutable_devices()) {
    if (!d.has_kernel_model()) continue;
    KernelModel* model = d.mutable_kernel_model();
    model->clear_measured_gemms();
    for (const MeasuredGemm& g : gemms) *model->add_measured_gemms() = g;
  }
}

absl::StatusOr<std::vector<MeasuredGemm>> GemmShapes(const std::vector<Schedule>& schedules) {
  std::vector<MeasuredGemm> shapes;
  std::set<std::tuple<int, int64_t, int64_t, int64_t, int64_t>> seen;
  for (const Schedule& schedule : schedules) {
    for (const Op& op : schedule.ops()) {
      if (!op.has_compute()) continue;
      absl::StatusOr<KernelPlan> plan =
          ProfilePlan(ZOSCHED_CUDA, schedule.model(), op.compute(),
                      schedule.training().compute_dtype(), schedule.training().peft());
      if (!plan.ok()) {
        return absl::Status(plan.status().code(),
                            absl::StrFormat("schedule '%s', op %d '%s': %s", schedule.name(),
                                            op.id(), op.name(), plan.status().message()));
      }
      for (const Kernel& kernel : *plan) {
        if (kernel.kind != KernelKind::kGemm) continue;
        if (!seen.insert({kernel.dtype, kernel.m, kernel.n, kernel.k, kernel.batch}).second) {
          continue;
        }
        MeasuredGemm& row = shapes.emplace_back();
        row.set_dtype(kernel.dtype);
        row.set_m(kernel.m);
        row.set_n(kernel.n);
        row.set_k(kernel.k);
        row.set_batch(kernel.batch);
      }
    }
  }
  return shapes;
}

}  // namespace zosched
