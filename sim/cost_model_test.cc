// The cost model's figures, derived by hand on a tiny inline cluster: the
// roofline (compute-bound and memory-bound), the measured table that wins
// over it, NCCL's ring and tree plans, measured collectives, and the errors
// for a figure the cluster lacks.
#include "sim/cost_model.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "base/textproto.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

// Four GPUs of one host in one NVLink domain: FP16 at 100 TFLOP/s × 0.5,
// memory 1,000 GB/s × 0.8; NVLink 100 GB/s per device; NCCL-like latencies.
constexpr char kCluster[] = R"pb(
  name: "quad"
  hosts { name: "h" memory_bytes: 1000000000000 memory_bandwidth_gbps: 500 cores: 8 }
  peer_domains { name: "nv" link_class: NVLINK gbps_per_device: 100 latency_s: 1e-6 }
  collectives {
    source: "test"
    ring_base_latency_s: 10e-6
    tree_base_latency_s: 12e-6
    step_latencies { link_class: NVLINK ring_s: 1e-6 tree_s: 2e-6 }
    bus_bandwidth_efficiency: 0.5
  }
)pb";

constexpr char kDevice[] = R"pb(
  model: "gpu" host: "h" peer_domain: "nv" memory_bytes: 80000000000
  peaks { dtype: FP16 peak_tflops: 100 efficiency: 0.5 }
  memory_bandwidth_gbps: 1000 memory_efficiency: 0.8 copy_engines: 2
  host_link { link_class: PCIE down_gbps: 25 up_gbps: 25 }
)pb";

// A schedule on the quad cluster with `ops` (textproto) and `extra` cluster
// fields (measured tables).
Schedule Quad(const std::string& ops, const std::string& extra = "") {
  std::string text = absl::StrCat("cluster {", kCluster, extra);
  for (int d = 0; d < 4; ++d) absl::StrAppend(&text, "devices { name: \"g", d, "\" ", kDevice, "}");
  absl::StrAppend(&text, "}\n model { name: \"m\" }\n training { compute_dtype: FP16 }\n");
  for (int d = 0; d < 4; ++d) {
    absl::StrAppend(&text, "devices { id: ", d, " cluster_device: \"g", d, "\" }\n");
  }
  absl::StrAppend(&text, ops);
  Schedule s;
  const absl::Status status = ParseTextProto(text, "inline", &s);
  EXPECT_TRUE(status.ok()) << status;
  return s;
}

int64_t ComputeNs(const Schedule& s, int op = 0) {
  absl::StatusOr<CostModel> model = CostModel::Build(s);
  EXPECT_TRUE(model.ok()) << model.status();
  absl::StatusOr<int64_t> ns = model->ComputeNs(s.ops(op));
  EXPECT_TRUE(ns.ok()) << ns.status();
  return ns.ok() ? *ns : -1;
}

TEST(CostModel, RooflineTakesTheSlowerOfFlopsAndBytes) {
  // Compute-bound: 1e12 FLOPs at 50 TFLOP/s = 20 ms; 1e9 bytes at 800 GB/s
  // = 1.25 ms.
  EXPECT_EQ(ComputeNs(Quad(R"pb(ops { compute { kind: BLOCK_FORWARD flops: 1000000000000
                                                 bytes_accessed: 1000000000 } })pb")),
            20000000);
  // Memory-bound: 8e9 bytes = 10 ms; 1e9 FLOPs = 20 µs.
  EXPECT_EQ(ComputeNs(Quad(R"pb(ops { compute { kind: UPDATE flops: 1000000000
                                                 bytes_accessed: 8000000000 } })pb")),
            10000000);
  // Rounded up to whole nanoseconds: 1 FLOP = 0.02 ps -> 1 ns.
  EXPECT_EQ(ComputeNs(Quad(R"pb(ops { compute { kind: UPDATE flops: 1 } })pb")), 1);
}

TEST(CostModel, AMeasuredShapeWinsOverTheRoofline) {
  const Schedule s = Quad(
      R"pb(ops { compute { kind: BLOCK_FORWARD examples: 4 seq_len: 128 flops: 1000000000000 } }
           ops { compute { kind: BLOCK_FORWARD examples: 8 seq_len: 128 flops: 1000000000000 } })pb",
      R"pb(measured_compute { op_class: "BLOCK_FORWARD" model: "m" examples: 4 seq_len: 128
                              seconds: 0.0031 })pb");
  EXPECT_EQ(ComputeNs(s, 0), 3100000);   // the table
  EXPECT_EQ(ComputeNs(s, 1), 20000000);  // no entry for 8 examples: the roofline
}

TEST(CostModel, ARowOfTheComputeDtypeWinsOverOneForAnyAndOthersDoNotCount) {
  // The schedule computes in FP16: the FP16 row (2 ms) wins over the row for
  // any dtype (3 ms); an FP32 row is another measurement.
  const std::string op =
      R"pb(ops { compute { kind: BLOCK_FORWARD examples: 4 seq_len: 128 flops: 1000000000000 } })pb";
  const std::string any =
      R"pb(measured_compute { op_class: "BLOCK_FORWARD" model: "m" examples: 4 seq_len: 128
                              seconds: 0.003 })pb";
  const std::string fp16 =
      R"pb(measured_compute { op_class: "BLOCK_FORWARD" model: "m" examples: 4 seq_len: 128
                              dtype: FP16 seconds: 0.002 })pb";
  const std::string fp32 =
      R"pb(measured_compute { op_class: "BLOCK_FORWARD" model: "m" examples: 4 seq_len: 128
                              dtype: FP32 seconds: 0.028 })pb";
  EXPECT_EQ(ComputeNs(Quad(op, any + fp16 + fp32)), 2000000);
  EXPECT_EQ(ComputeNs(Quad(op, fp32 + any)), 3000000);
  EXPECT_EQ(ComputeNs(Quad(op, fp32)), 20000000);  // no FP16 row: the roofline
}

// An UPDATE of a step of q directions draws q normals an element: its row
// says q, and a row of one direction does not stand for it (nor it for one).
TEST(CostModel, AnUpdateOfSeveralDirectionsTakesItsOwnRow) {
  const std::string op =
      R"pb(ops { compute { kind: UPDATE params { elements: 1000 } flops: 1 } })pb";
  const std::string one =
      R"pb(measured_compute { op_class: "UPDATE" model: "m" elements: 1000 seconds: 0.001 })pb";
  const std::string four =
      R"pb(measured_compute { op_class: "UPDATE" model: "m" elements: 1000 directions: 4
                              seconds: 0.0035 })pb";
  Schedule q4 = Quad(op, one + four);
  q4.mutable_training()->set_directions(4);
  EXPECT_EQ(ComputeNs(q4), 3500000);
  EXPECT_EQ(ComputeNs(Quad(op, one + four)), 1000000);
  q4 = Quad(op, one);
  q4.mutable_training()->set_directions(4);
  EXPECT_EQ(ComputeNs(q4), 1);  // no row of 4 directions: the roofline
}

TEST(CostModel, ADevicesComputeTimeScaleStretchesItsOpsOnly) {
  Schedule s = Quad(
      R"pb(ops { device: 1 compute { kind: BLOCK_FORWARD examples: 4 seq_len: 128 } }
           ops { device: 1 compute { kind: BLOCK_FORWARD examples: 8 seq_len: 128
                                     flops: 1000000000000 } }
           ops { device: 0 compute { kind: BLOCK_FORWARD examples: 4 seq_len: 128 } })pb",
      R"pb(measured_compute { op_class: "BLOCK_FORWARD" model: "m" examples: 4 seq_len: 128
                              seconds: 0.0031 })pb");
  s.mutable_cluster()->mutable_devices(1)->set_compute_time_scale(1.5);
  EXPECT_EQ(ComputeNs(s, 0), 4650000);   // the table's 3.1 ms on the slower core
  EXPECT_EQ(ComputeNs(s, 1), 30000000);  // the roofline's 20 ms too
  EXPECT_EQ(ComputeNs(s, 2), 3100000);   // device 0: as measured
}

TEST(CostModel, AMissingFigureIsAnErrorNamingIt) {
  Schedule s = Quad(R"pb(ops { id: 7 name: "fwd" compute { kind: BLOCK_FORWARD flops: 10 } })pb");
  s.mutable_training()->set_compute_dtype(BF16);
  absl::StatusOr<CostModel> model = CostModel::Build(s);
  ASSERT_TRUE(model.ok());
  absl::StatusOr<int64_t> ns = model->ComputeNs(s.ops(0));
  ASSERT_EQ(ns.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ns.status().message(),
            "device 'g0' has no ComputePeak (peak_tflops and efficiency) for BF16, which op 7 "
            "'fwd' needs; add one to the cluster, or a measured_compute entry");
}

// A collective of `kind` over `n` devices moving `bytes`.
std::string Collective(const char* kind, int n, int64_t bytes) {
  std::string participants;
  for (int d = 0; d < n; ++d) absl::StrAppend(&participants, d == 0 ? "" : ", ", d);
  return absl::StrCat("ops { id: 1 name: \"c\" collective { kind: ", kind, " key: \"k\" ",
                      "participants: [", participants, "] bytes: ", bytes, " } }");
}

CollectivePlan Plan(const Schedule& s) {
  absl::StatusOr<Network> network = Network::Build(s.cluster());
  EXPECT_TRUE(network.ok()) << network.status();
  absl::StatusOr<CostModel> model = CostModel::Build(s);
  EXPECT_TRUE(model.ok()) << model.status();
  absl::StatusOr<CollectivePlan> plan = model->Collective(s.ops(0), *network);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : CollectivePlan();
}

TEST(CostModel, RingAllGather) {
  // 4 ranks: 3 steps; each edge carries 3/4 of 4 MB, over the bus
  // efficiency 0.5; latency 10 µs + 3 × 1 µs.
  const CollectivePlan p = Plan(Quad(Collective("ALL_GATHER", 4, 4000000)));
  EXPECT_EQ(p.latency_ns, 13000);
  EXPECT_DOUBLE_EQ(p.flow_bytes, 3000000 / 0.5);
  EXPECT_EQ(p.edges, (std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 3}, {3, 0}}));
  EXPECT_FALSE(p.measured);
}

TEST(CostModel, AllReduceTakesTheRingOrTheTreeWhicheverIsFaster) {
  // Large: ring 16 + 6 µs + 2·(3/4)·100 MB / 100 GB/s = 1.5 ms beats tree
  // 12 + 8 µs + 2·100 MB / 100 GB/s = 2 ms.
  CollectivePlan p = Plan(Quad(Collective("ALL_REDUCE", 4, 100000000)));
  EXPECT_EQ(p.latency_ns, 16000);
  EXPECT_DOUBLE_EQ(p.flow_bytes, 2 * 100000000.0 * 3 / 4 / 0.5);
  // Tiny, latency-bound: with 4 µs ring steps the ring's 2(n-1) = 6 steps
  // (10 + 24 = 34 µs) lose to the tree's 2⌈log2 4⌉ = 4 (12 + 8 = 20 µs).
  Schedule slow_ring = Quad(Collective("ALL_REDUCE", 4, 1000));
  slow_ring.mutable_cluster()->mutable_collectives()->mutable_step_latencies(0)->set_ring_s(4e-6);
  p = Plan(slow_ring);
  EXPECT_EQ(p.latency_ns, 20000);
  EXPECT_DOUBLE_EQ(p.flow_bytes, 2 * 1000.0 / 0.5);
}

TEST(CostModel, BroadcastSendsTheWholeBufferAlongTheChain) {
  const CollectivePlan p = Plan(Quad(Collective("BROADCAST", 4, 1000000)));
  EXPECT_EQ(p.latency_ns, 13000);
  EXPECT_DOUBLE_EQ(p.flow_bytes, 1000000 / 0.5);
  EXPECT_EQ(p.edges, (std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 3}}));
}

TEST(CostModel, AMeasuredCollectiveIsInterpolatedInBytes) {
  const std::string table = R"pb(
    measured_collectives { kind: "ALL_GATHER" ranks: 4 bytes: 1000 seconds: 10e-6 }
    measured_collectives { kind: "ALL_GATHER" ranks: 4 bytes: 3000 seconds: 30e-6 }
  )pb";
  CollectivePlan p = Plan(Quad(Collective("ALL_GATHER", 4, 2000), table));
  EXPECT_TRUE(p.measured);
  EXPECT_EQ(p.measured_ns, 20000);
  // Beyond the table: along the nearest segment.
  p = Plan(Quad(Collective("ALL_GATHER", 4, 4000), table));
  EXPECT_EQ(p.measured_ns, 40000);
  // Another rank count has no table: the ring model.
  p = Plan(Quad(Collective("ALL_GATHER", 2, 2000), table));
  EXPECT_FALSE(p.measured);
}

TEST(CostModel, ACollectiveWithoutAStepLatencyForItsLinksIsAnError) {
  Schedule s = Quad(Collective("ALL_GATHER", 4, 1000));
  s.mutable_cluster()->mutable_collectives()->clear_step_latencies();
  absl::StatusOr<Network> network = Network::Build(s.cluster());
  absl::StatusOr<CostModel> model = CostModel::Build(s);
  ASSERT_TRUE(network.ok() && model.ok());
  absl::StatusOr<CollectivePlan> plan = model->Collective(s.ops(0), *network);
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(plan.status().message(),
            "cluster 'quad': the CollectiveModel has no step_latencies entry for NVLINK, which "
            "op 1 'c' needs");
}

}  // namespace
}  // namespace zosched
