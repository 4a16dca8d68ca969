#include "runtime/cuda/calibration/calibration_plan.h"

#include <set>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/cluster_validate.h"
#include "schedule/validate.h"

namespace zosched {
namespace {

Cluster Load(const std::string& name) {
  absl::StatusOr<Cluster> c = LoadCluster(name);
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

ModelSpec Model(const std::string& name) {
  absl::StatusOr<ModelSpec> m = LoadModelSpec(name);
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

// The one-GPU cluster calibrate --backend=cuda starts from by default
// (h100_sxm_x1 where the catalog has it).
Cluster OneGpu() {
  return Load(CatalogClusterPath("h100_sxm_x1").empty() ? "h100_sxm_x2" : "h100_sxm_x1");
}

TEST(ClusterForLoweringTest, AppendsCopiesOfTheFirstDevice) {
  Cluster one = OneGpu();
  while (one.devices_size() > 1) one.mutable_devices()->RemoveLast();
  // A model without the PCIe step latency the copies' collectives need.
  CollectiveModel* model = one.mutable_collectives();
  model->clear_step_latencies();
  model->add_step_latencies()->set_link_class(NETWORK);
  ASSERT_TRUE(ValidateCluster(one, "one").ok()) << ValidateCluster(one, "one");

  const Cluster four = ClusterForLowering(one, 4);
  ASSERT_EQ(four.devices_size(), 4);
  const std::string first = one.devices(0).name();
  for (int k = 1; k < 4; ++k) {
    EXPECT_EQ(four.devices(k).name(), first + "+" + std::to_string(k));
    EXPECT_EQ(four.devices(k).host(), one.devices(0).host());
    EXPECT_EQ(four.devices(k).host_link().down_gbps(), one.devices(0).host_link().down_gbps());
  }
  EXPECT_EQ(four.collectives().step_latencies_size(), 5);  // NETWORK, then four placeholders
  absl::Status valid = ValidateCluster(four, "four");
  EXPECT_TRUE(valid.ok()) << valid;

  // Enough devices already: unchanged.
  EXPECT_EQ(ClusterForLowering(one, 1).SerializeAsString(), one.SerializeAsString());
  const Cluster two = Load("h100_sxm_x2");
  EXPECT_EQ(ClusterForLowering(two, 2).SerializeAsString(), two.SerializeAsString());
}

TEST(GpuTargetSchedulesTest, MezoZo2AndTheDistzo2Grids) {
  absl::StatusOr<GpuTargets> t =
      GpuTargetSchedules(Model("opt-tiny"), OneGpu(), 16, 32, DTYPE_UNSPECIFIED);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->skipped.empty());
  ASSERT_EQ(t->schedules.size(), 8u);
  const std::vector<std::tuple<StrategyKind, int, int, bool>> want = {
      {MEZO, 0, 0, true},    {ZO2, 0, 0, true},      {DISTZO2, 2, 1, true},
      {DISTZO2, 2, 1, false}, {DISTZO2, 1, 2, true}, {DISTZO2, 1, 2, false},
      {DISTZO2, 2, 2, true},  {DISTZO2, 2, 2, false}};
  for (size_t i = 0; i < want.size(); ++i) {
    const Schedule& s = t->schedules[i];
    const auto [kind, p, d, slicing] = want[i];
    EXPECT_EQ(s.strategy().kind(), kind) << i;
    EXPECT_EQ(s.devices_size(), kind == DISTZO2 ? p * d : 1) << i;
    if (kind == DISTZO2) {
      EXPECT_EQ(s.strategy().pertp(), p) << i;
      EXPECT_EQ(s.strategy().dp(), d) << i;
      EXPECT_EQ(s.strategy().slicing(), slicing) << i;
    }
    EXPECT_EQ(s.training().batch_size(), 16);
    EXPECT_EQ(s.training().seq_len(), 32);
    EXPECT_EQ(s.training().compute_dtype(), FP32);  // opt-tiny's weight dtype
    EXPECT_EQ(s.training().host_dtype(), s.training().wire_dtype());
    EXPECT_TRUE(ValidateSchedule(s).ok()) << i;
  }
}

TEST(GpuTargetSchedulesTest, ANarrowWireAddsCastsAndCopiesNeverConvert) {
  // opt-125m is FP16 on the host; computing in FP32 widens on the device.
  absl::StatusOr<GpuTargets> t = GpuTargetSchedules(Model("opt-125m"), OneGpu(), 4, 16, FP32);
  ASSERT_TRUE(t.ok()) << t.status();
  const Schedule& zo2 = t->schedules[1];
  ASSERT_EQ(zo2.strategy().kind(), ZO2);
  EXPECT_EQ(zo2.training().compute_dtype(), FP32);
  int casts = 0;
  for (const Op& op : zo2.ops()) {
    casts += op.has_compute() && op.compute().kind() == CAST;
    if (op.has_copy()) EXPECT_EQ(op.copy().src_dtype(), op.copy().dst_dtype()) << op.name();
  }
  EXPECT_GT(casts, 0);
}

TEST(GpuTargetSchedulesTest, PlansThatDoNotFitAreLeftOutSayingWhy) {
  Cluster tiny = OneGpu();
  for (Device& d : *tiny.mutable_devices()) d.set_memory_bytes(1 << 10);
  absl::StatusOr<GpuTargets> t =
      GpuTargetSchedules(Model("opt-tiny"), tiny, 16, 32, DTYPE_UNSPECIFIED);
  EXPECT_TRUE(absl::IsFailedPrecondition(t.status())) << t.status();
  EXPECT_NE(t.status().message().find("no schedule of model 'opt-tiny' fits cluster"),
            std::string::npos);
  EXPECT_NE(t.status().message().find("mezo: "), std::string::npos) << t.status();
}

TEST(GpuTargetSchedulesTest, SettingsLoweringRefusesNameTheSchedule) {
  absl::StatusOr<GpuTargets> t =
      GpuTargetSchedules(Model("opt-tiny"), OneGpu(), 3, 32, DTYPE_UNSPECIFIED);
  EXPECT_TRUE(absl::IsInvalidArgument(t.status())) << t.status();
  EXPECT_EQ(t.status().message().rfind("lowering distzo2 P1xD2 sliced: ", 0), 0u) << t.status();
}

TEST(TimingViewsTest, DistZo2DeviceRunsAloneWithItsOrderKept) {
  absl::StatusOr<GpuTargets> t =
      GpuTargetSchedules(Model("opt-tiny"), OneGpu(), 16, 32, DTYPE_UNSPECIFIED);
  ASSERT_TRUE(t.ok()) << t.status();
  const Schedule& s = t->schedules[6];  // distzo2 P2xD2 sliced: block and loss all-gathers
  ASSERT_EQ(s.devices_size(), 4);
  const int device = 1;
  const DeviceTimingViews v = TimingViews(s, device);

  // The backend's view is the same schedule, reordered.
  EXPECT_EQ(v.backend.ops_size(), s.ops_size());
  absl::Status valid = ValidateSchedule(v.backend);
  EXPECT_TRUE(valid.ok()) << valid;

  // The device's ops: the executor's are the backend's first k, in order.
  std::vector<int64_t> backend_ops, executor_ops;
  for (const Op& op : v.backend.ops()) {
    if (op.device() == device) backend_ops.push_back(op.id());
  }
  absl::flat_hash_set<int64_t> removed;
  for (const Op& op : s.ops()) {
    if (op.device() == device && op.has_collective()) removed.insert(op.id());
  }
  ASSERT_FALSE(removed.empty());
  for (const Op& op : v.executor.ops()) {
    if (op.device() != device) continue;
    EXPECT_FALSE(op.has_collective()) << op.name();
    executor_ops.push_back(op.id());
  }
  ASSERT_EQ(executor_ops.size() + removed.size(), backend_ops.size());
  EXPECT_TRUE(std::equal(executor_ops.begin(), executor_ops.end(), backend_ops.begin()));
  // The other devices keep their collectives.
  int other_collectives = 0;
  for (const Op& op : v.executor.ops()) other_collectives += op.device() != device && op.has_collective();
  EXPECT_GT(other_collectives, 0);

  // No edge names a removed op, and every path a -> removed -> b is an edge.
  std::set<std::pair<int64_t, int64_t>> edges;
  for (const Edge& e : v.executor.edges()) {
    EXPECT_FALSE(removed.count(e.from()) || removed.count(e.to())) << e.from() << " " << e.to();
    edges.insert({e.from(), e.to()});
  }
  for (const Edge& in : s.edges()) {
    if (!removed.count(in.to()) || removed.count(in.from())) continue;
    for (const Edge& out : s.edges()) {
      if (out.from() == in.to() && !removed.count(out.to())) {
        EXPECT_TRUE(edges.count({in.from(), out.to()})) << in.from() << " -> " << out.to();
      }
    }
  }
  // Edges that touched no removed op stay.
  for (const Edge& e : s.edges()) {
    if (!removed.count(e.from()) && !removed.count(e.to())) {
      EXPECT_TRUE(edges.count({e.from(), e.to()}));
    }
  }
}

TEST(ComputeTimingsTest, MediansPerShapeOverTheTimedSteps) {
  absl::StatusOr<GpuTargets> t =
      GpuTargetSchedules(Model("opt-tiny"), OneGpu(), 16, 32, DTYPE_UNSPECIFIED);
  ASSERT_TRUE(t.ok()) << t.status();
  const Schedule& s = t->schedules[1];  // zo2
  std::vector<OpInterval> intervals;
  for (int step = 0; step < 3; ++step) {
    for (const Op& op : s.ops()) {
      OpInterval i;
      i.set_op_id(op.id());
      i.set_device(op.device());
      i.set_step(step);
      i.set_start_ns(1000000 * step);
      // Step 0 (a warm-up) is slow; later steps take 1 µs and 2 µs.
      i.set_end_ns(i.start_ns() + (step == 0 ? 1000000 : 1000 * step));
      intervals.push_back(i);
    }
  }
  const std::vector<ShapeTiming> timings = ComputeTimings(s, 0, intervals, 1);
  std::set<std::string> want;
  std::string first;
  for (const Op& op : s.ops()) {
    if (!op.has_compute()) continue;
    const std::string key = ShapeKey(ComputeShape(s, op.compute()));
    if (first.empty()) first = key;
    want.insert(key);
  }
  ASSERT_EQ(timings.size(), want.size());
  EXPECT_EQ(ShapeKey(timings[0].row), first);
  for (const ShapeTiming& timing : timings) {
    EXPECT_TRUE(want.count(ShapeKey(timing.row)));
    EXPECT_EQ(timing.row.model(), "opt-tiny");
    EXPECT_EQ(timing.row.dtype(), s.training().compute_dtype());  // FP16 and FP32 differ
    EXPECT_NE(timing.row.dtype(), DTYPE_UNSPECIFIED);
    EXPECT_EQ(timing.stats.min, 1e-6);
    EXPECT_EQ(timing.stats.max, 2e-6);
    EXPECT_EQ(timing.row.seconds(), 2e-6);  // the upper middle of an even count
    EXPECT_EQ(timing.samples % 2, 0);
  }
  // An unseen device has nothing timed.
  EXPECT_TRUE(ComputeTimings(s, 0, {}, 1).empty());
}

TEST(CollectiveRowsTest, RowsAndRefusals) {
  absl::StatusOr<std::vector<MeasuredCollective>> rows =
      CollectiveRows(2, {4096, 2e-5, 1e-5, 3e-5, 16384, 4e-5, 3e-5, 5e-5});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].kind(), "ALL_GATHER");
  EXPECT_EQ((*rows)[1].ranks(), 2);
  EXPECT_EQ((*rows)[1].bytes(), 16384);
  EXPECT_EQ((*rows)[1].seconds(), 4e-5);
  EXPECT_TRUE(absl::IsInvalidArgument(CollectiveRows(2, {}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(CollectiveRows(2, {1, 2, 3}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(CollectiveRows(4, {4096, 0, 0, 0}).status()));
}

TEST(WriteGpuMeasurementsTest, ReplacesWhatWasMeasured) {
  Cluster c = Load("h100_sxm_x2");
  MeasuredTransfer* gpu0 = c.add_measured_transfers();
  gpu0->set_link(c.devices(0).name() + "/host_link");
  gpu0->set_bytes(1 << 20);
  gpu0->set_seconds(1e-4);
  MeasuredCollective* two = c.add_measured_collectives();
  two->set_kind("ALL_GATHER");
  two->set_ranks(2);
  two->set_bytes(4096);
  two->set_seconds(1);
  MeasuredCollective* eight = c.add_measured_collectives();
  *eight = *two;
  eight->set_ranks(8);
  MeasuredCompute old;
  old.set_op_class("UPDATE");
  old.set_model("m");
  old.set_elements(7);
  old.set_seconds(1);
  *c.add_measured_compute() = old;

  MeasuredCompute row = old;
  row.set_elements(128);
  row.set_seconds(3e-6);
  std::vector<HostLinkFigures> links(c.devices_size());
  for (int i = 0; i < c.devices_size(); ++i) links[i] = {50.0 + i, 51.0 + i, 90.0 + i, 6e-6};
  absl::StatusOr<std::vector<MeasuredCollective>> rows =
      CollectiveRows(2, {4096, 2e-5, 1e-5, 3e-5, 16384, 4e-5, 3e-5, 5e-5});
  ASSERT_TRUE(rows.ok());
  // A table whose every device is a kernel-modelled GPU (the catalog's).
  Cluster without_table = c;
  for (Device& d : *c.mutable_devices()) {
    ASSERT_TRUE(d.has_kernel_model());
    MeasuredGemm* stale = d.mutable_kernel_model()->add_measured_gemms();
    stale->set_dtype(FP16);
    stale->set_m(1);
    stale->set_n(1);
    stale->set_k(1);
    stale->set_seconds(1);
  }
  MeasuredGemm gemm;
  gemm.set_dtype(FP16);
  gemm.set_m(2048);
  gemm.set_n(6144);
  gemm.set_k(2048);
  gemm.set_batch(1);
  gemm.set_seconds(5e-5);
  gemm.set_source("calibrate --backend=cuda (test)");
  WriteGpuMeasurements({row}, links, *rows, {gemm}, &c);
  for (const Device& d : c.devices()) {
    ASSERT_EQ(d.kernel_model().measured_gemms_size(), 1) << d.name();  // the stale row gone
    EXPECT_EQ(d.kernel_model().measured_gemms(0).m(), 2048);
    EXPECT_EQ(d.kernel_model().measured_gemms(0).seconds(), 5e-5);
  }
  // A device without a kernel model gets no table.
  without_table.mutable_devices(0)->clear_kernel_model();
  WriteGpuMeasurements({row}, links, *rows, {gemm}, &without_table);
  EXPECT_FALSE(without_table.devices(0).has_kernel_model());

  ASSERT_EQ(c.measured_compute_size(), 1);
  EXPECT_EQ(c.measured_compute(0).elements(), 128);
  for (int i = 0; i < c.devices_size(); ++i) {
    const LinkSpec& l = c.devices(i).host_link();
    EXPECT_EQ(l.down_gbps(), 50.0 + i);
    EXPECT_EQ(l.up_gbps(), 51.0 + i);
    EXPECT_EQ(l.duplex_gbps(), 90.0 + i);
    EXPECT_EQ(l.latency_s(), 6e-6);
  }
  EXPECT_EQ(c.measured_transfers_size(), 0);
  ASSERT_EQ(c.measured_collectives_size(), 3);
  EXPECT_EQ(c.measured_collectives(0).ranks(), 8);  // not measured: kept
  EXPECT_EQ(c.measured_collectives(1).bytes(), 4096);
  EXPECT_EQ(c.measured_collectives(1).seconds(), 2e-5);
  absl::Status valid = ValidateCluster(c, "calibrated");
  EXPECT_TRUE(valid.ok()) << valid;
}

TEST(GemmShapesTest, TheCudaBackendsGemmsOfEveryComputeOpOnce) {
  absl::StatusOr<GpuTargets> targets =
      GpuTargetSchedules(Model("opt-125m"), OneGpu(), /*batch=*/2, /*seq=*/128, FP16);
  ASSERT_TRUE(targets.ok()) << targets.status();
  absl::StatusOr<std::vector<MeasuredGemm>> shapes = GemmShapes(targets->schedules);
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  std::set<std::string> keys;
  bool qkv = false;
  for (const MeasuredGemm& g : *shapes) {
    EXPECT_EQ(g.dtype(), FP16);
    EXPECT_GT(g.m(), 0);
    EXPECT_GT(g.n(), 0);
    EXPECT_GT(g.k(), 0);
    EXPECT_GE(g.batch(), 1);
    EXPECT_EQ(g.seconds(), 0);  // for the calibration to time
    const std::string key = absl::StrCat(g.m(), "x", g.n(), "x", g.k(), "x", g.batch());
    EXPECT_TRUE(keys.insert(key).second) << "shape listed twice: " << key;
    // An OPT-125m attention projection of 2 x 128 tokens (cuBLAS's
    // column-major view: m output features, n tokens, k input features).
    qkv |= g.n() == 256 && g.k() == 768 && (g.m() == 768 || g.m() == 3 * 768);
  }
  EXPECT_TRUE(qkv) << "no attention projection among " << shapes->size() << " shapes";
}

}  // namespace
}  // namespace zosched
