#include "schedule/lowering.h"

#include <map>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "models/accounting.h"
#include "models/model_zoo.h"
#include "models/peft_for_test.h"
#include "schedule/cluster_catalog.h"
#include "schedule/schedule_stats.h"
#include "schedule/strategy_grid.h"

namespace zosched {
namespace {

ModelSpec Model(const std::string& name) {
  absl::StatusOr<ModelSpec> m = LoadModelSpec(name);
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

Cluster Catalog(const std::string& name) {
  absl::StatusOr<Cluster> c = LoadCluster(name);
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

LowerOptions Options(StrategyKind kind, int pertp = 1, int dp = 1, bool slicing = true) {
  LowerOptions o = GridLowerOptions({kind, pertp, dp, slicing});
  o.training.set_seq_len(512);
  return o;
}

Schedule Lower(const std::string& model, const std::string& cluster,
               const LowerOptions& options) {
  absl::StatusOr<Schedule> s = LowerSchedule(Model(model), Catalog(cluster), options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : Schedule();
}

int64_t BufferBytes(const Schedule& s, BufferKind kind, int device) {
  int64_t bytes = 0;
  for (const Buffer& b : s.buffers()) {
    if (b.kind() == kind && b.device() == device) bytes += b.size_bytes();
  }
  return bytes;
}

int CountBuffers(const Schedule& s, BufferKind kind) {
  int n = 0;
  for (const Buffer& b : s.buffers()) n += b.kind() == kind;
  return n;
}

// Bytes device `device` receives through the block all-gathers.
int64_t BlockGatherBytes(const Schedule& s, int device) {
  int64_t bytes = 0;
  for (const Op& op : s.ops()) {
    if (op.device() != device || !op.has_collective()) continue;
    if (!absl::StartsWith(op.collective().key(), "all-gather block")) continue;
    const int64_t n = op.collective().participants_size();
    bytes += op.collective().bytes() * (n - 1) / n;
  }
  return bytes;
}

TEST(LowerZo2, StreamsEveryBlockOnceEachWayAtTheWireDtype) {
  const ModelSpec model = Model("opt-125m");
  Schedule s = Lower("opt-125m", "dgx_a100", Options(ZO2));
  ASSERT_EQ(s.devices_size(), 1);
  const DeviceStats d = ComputeDeviceStats(s)[0];
  const int64_t all_blocks = model.num_layers() * BlockBytes(model, FP16);
  EXPECT_EQ(d.h2d_bytes, all_blocks);
  EXPECT_EQ(d.d2h_bytes, all_blocks);
  EXPECT_EQ(d.ops_by_kind.at("copy HOST_TO_DEVICE"), model.num_layers());
  EXPECT_EQ(d.ops_by_kind.at("UPDATE"), model.num_layers() + 2);  // + embedding, head
  EXPECT_EQ(d.ops_by_kind.at("BLOCK_FORWARD"), 2 * model.num_layers());
  EXPECT_EQ(d.ops_by_kind.count("CAST"), 0u);
  EXPECT_EQ(s.devices(0).streams_size(), 3);  // compute, h2d, d2h
}

TEST(LowerZo2, HoldsTheConfiguredNumberOfBlockSlots) {
  for (int slots : {1, 2, 3, 5}) {
    LowerOptions o = Options(ZO2);
    o.block_slots = slots;
    Schedule s = Lower("opt-1.3b", "dgx_a100", o);
    EXPECT_EQ(CountBuffers(s, BLOCK_SLOT), slots);
    EXPECT_EQ(s.strategy().block_slots(), slots);
  }
}

TEST(LowerZo2, PeakMemoryIsThePlanFormula) {
  const ModelSpec model = Model("opt-1.3b");
  LowerOptions o = Options(ZO2);
  o.training.set_micro_batch_size(4);
  Schedule s = Lower("opt-1.3b", "dgx_a100", o);
  const int64_t cb = 2, seq = 512, batch = 16, mb = 4, h = model.hidden_size();
  const int64_t expected =
      (EmbeddingParams(model) + FinalNormParams(model) + HeadParams(model)) * cb +
      3 * BlockParams(model) * cb +                                   // slots
      // perturbed: the vectors (2 norms, 6 biases: 9h + f) and room for the
      // largest matrix, fc1 [f, h]
      (9 * h + model.ffn_size() + model.ffn_size() * h) * cb +
      2 * batch * seq * h * cb +                                      // act+ act-
      // workspace: the FFN phase binds, T · (h + f) = 2048 · (2048 + 8192)
      // (attention: 4 · 2048 · 2048 + 512² = 17039360 elements)
      mb * seq * (h + model.ffn_size()) * cb +
      2 * batch * 4 +                                                 // losses
      16;                                                             // zo_state
  EXPECT_EQ(ComputeDeviceStats(s)[0].memory_bytes, expected);
  EXPECT_EQ(ComputeDeviceStats(s)[0].ops_by_kind.at("BLOCK_FORWARD"),
            2 * model.num_layers() * (batch / mb));
}

TEST(LowerZo2, NarrowWireCastsOnTheDeviceAndHalvesTheTraffic) {
  const ModelSpec model = Model("opt-125m");
  LowerOptions o = Options(ZO2);
  o.training.set_host_dtype(FP32);
  o.training.set_wire_dtype(FP16);
  o.training.set_compute_dtype(FP32);
  Schedule s = Lower("opt-125m", "dgx_a100", o);
  const DeviceStats d = ComputeDeviceStats(s)[0];
  EXPECT_EQ(d.h2d_bytes, model.num_layers() * BlockBytes(model, FP16));
  EXPECT_EQ(d.ops_by_kind.at("CAST"), 2 * model.num_layers());  // in and out
  EXPECT_EQ(CountBuffers(s, WIRE_STAGING), 3);
  EXPECT_EQ(BufferBytes(s, BLOCK_SLOT, 0), 3 * BlockBytes(model, FP32));
}

TEST(LowerMezo, KeepsEveryBlockResidentAndMovesNothing) {
  const ModelSpec model = Model("opt-125m");
  Schedule s = Lower("opt-125m", "dgx_a100", Options(MEZO));
  const DeviceStats d = ComputeDeviceStats(s)[0];
  EXPECT_EQ(d.h2d_bytes + d.d2h_bytes, 0);
  EXPECT_EQ(BufferBytes(s, RESIDENT_PARAMS, 0), TotalParams(model) * 2);
  EXPECT_EQ(CountBuffers(s, HOST_PARAMS), 0);
}

TEST(LowerMezo, Opt175bOnOneA100NamesTheShortfall) {
  absl::StatusOr<Schedule> s =
      LowerSchedule(Model("opt-175b"), Catalog("dgx_a100"), Options(MEZO));
  ASSERT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted) << s.status();
  EXPECT_NE(s.status().message().find("over by"), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find("gpu0"), std::string::npos) << s.status();
}

TEST(LowerDistZo2, SlicingDividesHostTrafficByTheDevicesOfAHost) {
  const ModelSpec model = Model("opt-1.3b");
  Schedule sliced = Lower("opt-1.3b", "dgx_a100", Options(DISTZO2, 2, 4, true));
  Schedule naive = Lower("opt-1.3b", "dgx_a100", Options(DISTZO2, 2, 4, false));
  std::vector<DeviceStats> s = ComputeDeviceStats(sliced);
  std::vector<DeviceStats> n = ComputeDeviceStats(naive);
  ASSERT_EQ(s.size(), 8u);
  const int64_t block = BlockBytes(model, FP16);
  for (int d = 0; d < 8; ++d) {
    EXPECT_EQ(n[d].h2d_bytes, model.num_layers() * block) << d;
    EXPECT_EQ(s[d].h2d_bytes * 8, n[d].h2d_bytes) << d;
    EXPECT_EQ(s[d].d2h_bytes * 8, n[d].d2h_bytes) << d;
    // The peer links carry the rest: (N-1)/N of every block.
    EXPECT_EQ(BlockGatherBytes(sliced, d), model.num_layers() * block * 7 / 8) << d;
    EXPECT_EQ(BlockGatherBytes(naive, d), 0) << d;
  }
  // One host store for the sliced scheme; one per device for the naive one.
  EXPECT_EQ(CountBuffers(sliced, HOST_PARAMS), 1);
  EXPECT_EQ(CountBuffers(naive, HOST_PARAMS), 8);
}

// (example, sign) -> device, per block, from the BLOCK_FORWARD ops.
using Coverage = std::map<std::tuple<int, int, Sign>, std::vector<int>>;
Coverage ForwardCoverage(const Schedule& s) {
  Coverage c;
  for (const Op& op : s.ops()) {
    if (!op.has_compute() || op.compute().kind() != BLOCK_FORWARD) continue;
    const ComputeOp& f = op.compute();
    for (int e = f.first_example(); e < f.first_example() + f.examples(); ++e) {
      c[{f.params().block(), e, f.sign()}].push_back(op.device());
    }
  }
  return c;
}

TEST(LowerDistZo2, PerturbationParallelRunsOppositeSignsOverTheSameExamples) {
  Schedule s = Lower("opt-125m", "h100_sxm_x2", Options(DISTZO2, 2, 1));
  for (const auto& [key, devices] : ForwardCoverage(s)) {
    ASSERT_EQ(devices.size(), 1u);
    EXPECT_EQ(devices[0], std::get<2>(key) == PLUS ? 0 : 1);
  }
  EXPECT_EQ(ForwardCoverage(s).size(), 12u * 16 * 2);
}

TEST(LowerDistZo2, DataParallelSplitsExamplesDisjointlyAndRunsBothSigns) {
  Schedule s = Lower("opt-125m", "h100_sxm_x2", Options(DISTZO2, 1, 2));
  for (const auto& [key, devices] : ForwardCoverage(s)) {
    ASSERT_EQ(devices.size(), 1u);
    EXPECT_EQ(devices[0], std::get<1>(key) < 8 ? 0 : 1);  // examples 0-7, 8-15
  }
  EXPECT_EQ(ForwardCoverage(s).size(), 12u * 16 * 2);
}

TEST(LowerDistZo2, TwoDimensionalGridCombinesBoth) {
  Schedule s = Lower("opt-125m", "hgx_h100", Options(DISTZO2, 2, 2));
  for (const auto& [key, devices] : ForwardCoverage(s)) {
    ASSERT_EQ(devices.size(), 1u);
    const int p = std::get<2>(key) == PLUS ? 0 : 1;
    const int d = std::get<1>(key) < 8 ? 0 : 1;
    EXPECT_EQ(devices[0], p * 2 + d);
  }
}

TEST(Lower, EveryExampleSignAndBlockIsForwardedExactlyOnce) {
  const std::vector<std::pair<std::string, LowerOptions>> cases = {
      {"dgx_a100", Options(MEZO)},
      {"dgx_a100", Options(ZO2)},
      {"dgx_a100", Options(DISTZO2, 2, 4, true)},
      {"dgx_a100", Options(DISTZO2, 1, 8, false)},
      {"hgx_h100", Options(DISTZO2, 2, 2, true)},
      {"rtx4090_x8", Options(DISTZO2, 1, 4, true)},
  };
  for (const auto& [cluster, options] : cases) {
    LowerOptions o = options;
    o.training.set_micro_batch_size(2);
    Schedule s = Lower("opt-125m", cluster, o);
    Coverage c = ForwardCoverage(s);
    EXPECT_EQ(c.size(), 12u * 16 * 2) << s.name();
    for (const auto& [key, devices] : c) EXPECT_EQ(devices.size(), 1u) << s.name();
  }
}

TEST(Lower, LossesAreGatheredSoEveryDeviceComputesTheGradient) {
  Schedule s = Lower("opt-125m", "hgx_h100", Options(DISTZO2, 2, 2));
  int gradients = 0, gathers = 0;
  for (const Op& op : s.ops()) {
    if (op.has_compute() && op.compute().kind() == PROJECTED_GRADIENT) ++gradients;
    if (op.has_collective() && op.collective().key() == "all-gather losses") {
      ++gathers;
      EXPECT_EQ(op.collective().participants_size(), 4);
      EXPECT_EQ(op.collective().bytes(), 16 * 2 * 4);  // every (example, sign), fp32
    }
  }
  EXPECT_EQ(gradients, 4);
  EXPECT_EQ(gathers, 4);
}

TEST(Lower, ComputeDTypeFollowsTheDevices) {
  // The CPU testbed computes in FP32 only: FP16 weights compute in FP32 there.
  Schedule cpu = Lower("opt-125m", "local_cpu", Options(ZO2));
  EXPECT_EQ(cpu.training().compute_dtype(), FP32);
  EXPECT_EQ(cpu.training().host_dtype(), FP16);
  Schedule gpu = Lower("opt-125m", "dgx_a100", Options(ZO2));
  EXPECT_EQ(gpu.training().compute_dtype(), FP16);
  LowerOptions fp16 = Options(ZO2);
  fp16.training.set_compute_dtype(FP16);
  absl::StatusOr<Schedule> s = LowerSchedule(Model("opt-125m"), Catalog("local_cpu"), fp16);
  ASSERT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("device 'cpu0'"), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find("does not compute in FP16"), std::string::npos);
}

// n-SPSA: q directions a step. Every path (direction, sign) goes through
// every block once, the blocks still cross the link once each way, the
// ZO_STATE holds q entries, and perturbation parallelism splits the 2q
// paths P ways.
TEST(LowerDirections, EveryDirectionPassesEveryBlockOnAnUploadOfIt) {
  const ModelSpec model = Model("opt-125m");
  LowerOptions o = Options(ZO2);
  o.training.set_directions(3);
  Schedule s = Lower("opt-125m", "dgx_a100", o);
  ASSERT_EQ(s.devices_size(), 1);
  EXPECT_EQ(s.name(), "opt-125m zo2 q3 on dgx_a100");
  const DeviceStats d = ComputeDeviceStats(s)[0];
  EXPECT_EQ(d.h2d_bytes, model.num_layers() * BlockBytes(model, FP16));
  EXPECT_EQ(d.ops_by_kind.at("UPDATE"), model.num_layers() + 2);
  EXPECT_EQ(d.ops_by_kind.at("BLOCK_FORWARD"), 6 * model.num_layers());
  EXPECT_EQ(d.ops_by_kind.at("HEAD_LOSS"), 6);
  EXPECT_EQ(CountBuffers(s, ACTIVATIONS), 6);
  EXPECT_EQ(BufferBytes(s, ZO_STATE, 0), 3 * 16);
  std::set<std::tuple<int, int>> paths;  // (direction, sign) of the head losses
  for (const Op& op : s.ops()) {
    if (op.has_compute() && op.compute().kind() == HEAD_LOSS) {
      paths.insert({op.compute().direction(), op.compute().sign()});
    }
  }
  EXPECT_EQ(paths.size(), 6u);
}

TEST(LowerDirections, PerturbationParallelismSplitsThePathsInOrder) {
  LowerOptions o = Options(DISTZO2, 3, 1);
  o.training.set_directions(3);
  o.devices = {"gpu0", "gpu1", "gpu2"};
  Schedule s = Lower("opt-125m", "dgx_a100", o);
  ASSERT_EQ(s.devices_size(), 3);
  // Device p runs paths 2p and 2p + 1: direction p, + then -.
  std::map<int, std::vector<std::pair<int, int>>> heads;
  for (const Op& op : s.ops()) {
    if (op.has_compute() && op.compute().kind() == HEAD_LOSS) {
      heads[op.device()].push_back({op.compute().direction(), op.compute().sign()});
    }
  }
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(heads[p], (std::vector<std::pair<int, int>>{{p, PLUS}, {p, MINUS}})) << p;
  }
  o.pertp = 2;
  o.devices = {"gpu0", "gpu1"};
  s = Lower("opt-125m", "dgx_a100", o);
  heads.clear();
  for (const Op& op : s.ops()) {
    if (op.has_compute() && op.compute().kind() == HEAD_LOSS) {
      heads[op.device()].push_back({op.compute().direction(), op.compute().sign()});
    }
  }
  EXPECT_EQ(heads[0], (std::vector<std::pair<int, int>>{{0, PLUS}, {0, MINUS}, {1, PLUS}}));
  EXPECT_EQ(heads[1], (std::vector<std::pair<int, int>>{{1, MINUS}, {2, PLUS}, {2, MINUS}}));
}

// LoRA freezes the base: ZO2 uploads every block once and offloads nothing,
// updates only the adapters (one UPDATE per block), which stay resident,
// and its forwards perturb only them.
TEST(LowerLora, UploadsTheFrozenBaseAndUpdatesOnlyTheResidentAdapters) {
  const ModelSpec model = Model("opt-125m");
  LowerOptions o = Options(ZO2);
  o.block_slots = 2;
  *o.training.mutable_peft() = LoraPeft(8, 16);
  Schedule s = Lower("opt-125m", "dgx_a100", o);
  EXPECT_EQ(s.name(), "opt-125m zo2 lora r8 on dgx_a100");
  const DeviceStats d = ComputeDeviceStats(s)[0];
  EXPECT_EQ(d.h2d_bytes, model.num_layers() * BlockBytes(model, FP16));
  EXPECT_EQ(d.d2h_bytes, 0);
  EXPECT_EQ(d.ops_by_kind.at("UPDATE"), model.num_layers());
  const int64_t adapter = 4 * 8 * model.hidden_size();  // A and B of q and v
  for (const Op& op : s.ops()) {
    if (!op.has_compute()) continue;
    const ComputeOp& c = op.compute();
    if (c.kind() == UPDATE) {
      EXPECT_EQ(c.params().part(), ADAPTER_PART) << op.name();
      EXPECT_EQ(c.params().elements(), adapter);
    }
    if (c.kind() == BLOCK_FORWARD) {
      EXPECT_EQ(c.adapters().block(), c.params().block());
      EXPECT_EQ(c.perturbed().size_bytes(), adapter * 2) << "the adapters' θ±εz in FP16";
    }
  }
  EXPECT_EQ(BufferBytes(s, RESIDENT_PARAMS, 0) - BufferBytes(Lower("opt-125m", "dgx_a100", Options(ZO2)), RESIDENT_PARAMS, 0),
            model.num_layers() * adapter * 2);
  EXPECT_EQ(CountBuffers(s, BLOCK_SLOT), 2);
  for (const ScheduleDevice& device : s.devices()) {
    for (const Stream& stream : device.streams()) EXPECT_NE(stream.kind(), D2H);
  }
}

// The naive DistZO2 scheme gives each device its own store to offload into;
// with nothing offloaded, the devices of a host share one.
TEST(LowerLora, NaiveDevicesShareTheFrozenStore) {
  LowerOptions o = Options(DISTZO2, 2, 1, /*slicing=*/false);
  *o.training.mutable_peft() = LoraPeft(4, 16);
  Schedule s = Lower("opt-125m", "dgx_a100", o);
  EXPECT_EQ(CountBuffers(s, HOST_PARAMS), 1);
  EXPECT_EQ(CountBuffers(s, RESIDENT_PARAMS), 4);  // resident and adapters, per device
}

TEST(LowerLora, FirstOrderStrategiesAndGpt2AreRefused) {
  LowerOptions o = Options(DDP, 1, 2);
  *o.training.mutable_peft() = LoraPeft(8, 16);
  absl::StatusOr<Schedule> s = LowerSchedule(Model("opt-125m"), Catalog("dgx_a100"), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("peft LORA applies to the ZO strategies"),
            std::string::npos)
      << s.status();
  o = Options(ZO2);
  *o.training.mutable_peft() = LoraPeft(8, 16);
  s = LowerSchedule(Model("gpt2-small"), Catalog("dgx_a100"), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("training model 'gpt2-small' fuses"), std::string::npos)
      << s.status();
}

// A prefix freezes the base as LoRA does; only its keys and values (2·k·h
// per block for OPT) are resident, perturbed and updated, and the real
// tokens' positions after it must fit the model's.
TEST(LowerPrefix, UpdatesOnlyTheResidentPrefixAndFitsItsPositions) {
  const ModelSpec model = Model("opt-125m");
  LowerOptions o = Options(DISTZO2, 2, 1, /*slicing=*/true);
  *o.training.mutable_peft() = PrefixPeft(5);
  Schedule s = Lower("opt-125m", "dgx_a100", o);
  EXPECT_NE(s.name().find(" prefix k5"), std::string::npos) << s.name();
  const int64_t adapter = 2 * 5 * model.hidden_size();
  int updates = 0;
  for (const Op& op : s.ops()) {
    if (!op.has_compute()) continue;
    const ComputeOp& c = op.compute();
    if (c.kind() == UPDATE) {
      ++updates;
      EXPECT_EQ(c.params().part(), ADAPTER_PART) << op.name();
      EXPECT_EQ(c.params().elements(), adapter);
    }
    if (c.kind() == BLOCK_FORWARD) EXPECT_EQ(c.adapters().elements(), adapter);
  }
  EXPECT_EQ(updates, 2 * model.num_layers());  // each device updates its own copy
  for (const DeviceStats& d : ComputeDeviceStats(s)) EXPECT_EQ(d.d2h_bytes, 0);
  o.training.set_seq_len(model.max_positions() - 4);
  absl::StatusOr<Schedule> past = LowerSchedule(model, Catalog("dgx_a100"), o);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("after the prefix's 5 virtual tokens reaches position"),
            std::string::npos)
      << past.status();
}

TEST(LowerErrors, BadOptionsSayWhatWouldBeRight) {
  const ModelSpec model = Model("opt-125m");
  const Cluster cluster = Catalog("dgx_a100");
  struct Case {
    LowerOptions options;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({Options(DISTZO2, 3, 2), "P must divide 2"});
  LowerOptions odd_split = Options(DISTZO2, 4, 1);
  odd_split.training.set_directions(3);
  cases.push_back({odd_split, "splits a step's 6 forward passes (+ε and -ε along each of its q = 3 "
                              "directions) evenly, so P must divide 6"});
  LowerOptions first_order = Options(DDP, 1, 2);
  first_order.training.set_directions(4);
  cases.push_back({first_order, "directions 4 applies to the ZO strategies (MEZO, ZO2, DISTZO2)"});
  LowerOptions directions = Options(ZO2);
  directions.training.set_directions(-1);
  cases.push_back({directions, "directions is -1 (expected 1 to 1024"});
  LowerOptions devices = Options(DISTZO2, 2, 2);
  devices.devices = {"gpu0", "gpu1", "gpu2"};
  cases.push_back({devices, "3 devices given, but DISTZO2 needs 4 (P·D = 2·2)"});
  LowerOptions unknown = Options(ZO2);
  unknown.devices = {"gpu9"};
  cases.push_back({unknown, "no device 'gpu9'"});
  LowerOptions batch = Options(DISTZO2, 1, 3);
  cases.push_back({batch, "batch 16 is not a positive multiple of D = 3"});
  LowerOptions micro = Options(DISTZO2, 1, 2);
  micro.training.set_micro_batch_size(3);
  cases.push_back({micro, "share of 8 examples is not divisible by the micro-batch 3"});
  LowerOptions seq = Options(ZO2);
  seq.training.set_seq_len(4096);
  cases.push_back({seq, "seq_len is 4096 (expected 1 to model 'opt-125m' max_positions 2048)"});
  LowerOptions epsilon = Options(ZO2);
  epsilon.training.set_epsilon(0);
  cases.push_back({epsilon, "epsilon is 0 (expected a finite ε > 0"});
  LowerOptions grid = Options(ZO2, 2, 1);
  cases.push_back({grid, "pertp 2 and dp 1 apply to DISTZO2 only"});
  LowerOptions slots = Options(ZO2);
  slots.block_slots = 0;
  cases.push_back({slots, "block_slots is 0"});
  cases.push_back({Options(STRATEGY_KIND_UNSPECIFIED), "no strategy given"});
  LowerOptions too_many = Options(DISTZO2, 2, 8);
  cases.push_back({too_many, "has 8 devices; the strategy needs 16"});
  for (const Case& c : cases) {
    absl::StatusOr<Schedule> s = LowerSchedule(model, cluster, c.options);
    ASSERT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_NE(s.status().message().find(c.message), std::string::npos)
        << s.status() << "\n  wanted: " << c.message;
  }
}

}  // namespace
}  // namespace zosched
