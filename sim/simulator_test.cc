// Exact simulator cases on tiny clusters written inline: every expected time
// is derived by hand from the figures below, to the nanosecond.
#include "sim/simulator.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/textproto.h"
#include "gtest/gtest.h"
#include "models/model_spec.h"
#include "schedule/lowering.h"

namespace zosched {
namespace {

// One host, four devices. Per device: 1 TFLOP/s FP32 (1000 FLOP/ns), 100 GB/s
// memory, a 10 GB/s host link each way with 1 µs latency, 20 GB/s per
// direction into an NVLink domain with 0.5 µs latency. Collectives: ring base
// 2 µs, 1 µs per step, full bus bandwidth.
constexpr char kCluster[] = R"pb(
  name: "tiny4"
  hosts { name: "h" memory_bytes: 1000000000000 memory_bandwidth_gbps: 1000 cores: 8 }
  peer_domains { name: "nv" link_class: NVLINK gbps_per_device: 20 latency_s: 5e-7 }
  collectives {
    source: "test"
    ring_base_latency_s: 2e-6 tree_base_latency_s: 2e-6
    step_latencies { link_class: NVLINK ring_s: 1e-6 tree_s: 1e-6 }
    bus_bandwidth_efficiency: 1
  }
)pb";

constexpr char kDevice[] = R"pb(
  model: "toy-gpu" host: "h" peer_domain: "nv" memory_bytes: 100000000000
  peaks { dtype: FP32 peak_tflops: 1 efficiency: 1 }
  memory_bandwidth_gbps: 100 memory_efficiency: 1 copy_engines: 2
  host_link { link_class: PCIE down_gbps: 10 up_gbps: 10 latency_s: 1e-6 }
)pb";

// A schedule on `devices` devices of the tiny cluster, each with streams
// compute, h2d, h2d2 and collective, plus `ops_and_edges` (textproto).
Schedule Tiny(int devices, const std::string& ops_and_edges) {
  std::string text = absl::StrCat("cluster {", kCluster);
  for (int d = 0; d < 4; ++d) absl::StrAppend(&text, "devices { name: \"g", d, "\" ", kDevice, "}");
  absl::StrAppend(&text, "}\n training { compute_dtype: FP32 batch_size: 1 seq_len: 1 }\n");
  for (int d = 0; d < devices; ++d) {
    absl::StrAppend(&text, "devices { id: ", d, " cluster_device: \"g", d, "\"",
                    " streams { name: \"compute\" kind: COMPUTE }",
                    " streams { name: \"h2d\" kind: H2D }",
                    " streams { name: \"h2d2\" kind: H2D }",
                    " streams { name: \"collective\" kind: COLLECTIVE } }\n");
  }
  absl::StrAppend(&text, ops_and_edges);
  Schedule s;
  absl::Status status = ParseTextProto(text, "inline", &s);
  EXPECT_TRUE(status.ok()) << status;
  return s;
}

// op id -> {start, end}.
std::map<int64_t, std::pair<int64_t, int64_t>> Times(const Schedule& s) {
  absl::StatusOr<SimResult> r = Simulate(s);
  EXPECT_TRUE(r.ok()) << r.status();
  std::map<int64_t, std::pair<int64_t, int64_t>> times;
  if (!r.ok()) return times;
  for (const OpInterval& o : r->timeline.ops()) times[o.op_id()] = {o.start_ns(), o.end_ns()};
  return times;
}

using Interval = std::pair<int64_t, int64_t>;

TEST(Simulate, OneCopyTakesLatencyPlusBytesOverBandwidth) {
  // 1 µs + 1,000,000 B / 10 GB/s (10 B/ns) = 1,000 + 100,000 ns.
  auto t = Times(Tiny(1, R"pb(
    ops { id: 1 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000000 } }
  )pb"));
  EXPECT_EQ(t[1], Interval(0, 101000));
  // An odd size rounds up to the next nanosecond: 1,000,001 B -> 100,000.1 ns.
  t = Times(Tiny(1, R"pb(
    ops { id: 1 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000001 } }
  )pb"));
  EXPECT_EQ(t[1], Interval(0, 101001));
}

TEST(Simulate, TwoCopiesShareALinkAndTheSurvivorSpeedsUp) {
  // Both flows start at 1,000 ns at 5 B/ns each. The 500,000 B copy is done
  // after 100,000 ns (t = 101,000); the other has 500,000 B left, now alone
  // at 10 B/ns: 50,000 ns more (t = 151,000).
  auto t = Times(Tiny(1, R"pb(
    ops { id: 1 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000000 } }
    ops { id: 2 device: 0 stream: "h2d2" copy { direction: HOST_TO_DEVICE bytes: 500000 } }
  )pb"));
  EXPECT_EQ(t[2], Interval(0, 101000));
  EXPECT_EQ(t[1], Interval(0, 151000));
}

TEST(Simulate, ThreeFlowsOverTwoBottlenecksGetMaxMinShares) {
  // Device 0's host link carries one upload (A); device 1's carries two (B,
  // C). Host memory (1000) never binds: A runs at 10, B and C at 5 each.
  // A: 1,000 + 1,000,000/10; B, C: 1,000 + 1,000,000/5.
  auto t = Times(Tiny(2, R"pb(
    ops { id: 1 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000000 } }
    ops { id: 2 device: 1 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000000 } }
    ops { id: 3 device: 1 stream: "h2d2" copy { direction: HOST_TO_DEVICE bytes: 1000000 } }
  )pb"));
  EXPECT_EQ(t[1], Interval(0, 101000));
  EXPECT_EQ(t[2], Interval(0, 201000));
  EXPECT_EQ(t[3], Interval(0, 201000));
}

TEST(Simulate, ComputeAndCopyOverlapUnlessAnEdgeOrdersThem) {
  // Compute: 1e9 FLOP at 1000 FLOP/ns = 1,000,000 ns (its 1e6 bytes at 100
  // B/ns take only 10,000 ns). Copy: 101,000 ns.
  const std::string ops = R"pb(
    ops { id: 1 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000000 } }
    ops { id: 2 device: 0 stream: "compute"
          compute { kind: BLOCK_FORWARD flops: 1000000000 bytes_accessed: 1000000 } }
  )pb";
  auto t = Times(Tiny(1, ops));
  EXPECT_EQ(t[1], Interval(0, 101000));
  EXPECT_EQ(t[2], Interval(0, 1000000));
  t = Times(Tiny(1, ops + "edges { from: 1 to: 2 }"));
  EXPECT_EQ(t[2], Interval(101000, 1101000));
}

TEST(Simulate, WakingAStreamAsleepOnAnEventCostsBothStreams) {
  // Wake-up 20 µs, signalling 5 µs. The compute op waiting for the copy
  // (its stream idle, asleep) starts 20,000 ns after the copy's end; the
  // copy's stream starts its next copy 5,000 ns late.
  const std::string ops = R"pb(
    ops { id: 1 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000000 } }
    ops { id: 2 device: 0 stream: "compute"
          compute { kind: BLOCK_FORWARD flops: 1000000000 bytes_accessed: 1000000 } }
    ops { id: 3 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000000 } }
    edges { from: 1 to: 2 }
  )pb";
  Schedule s = Tiny(1, ops);
  s.mutable_cluster()->mutable_devices(0)->set_stream_wake_latency_s(20e-6);
  s.mutable_cluster()->mutable_devices(0)->set_stream_signal_cost_s(5e-6);
  auto t = Times(s);
  EXPECT_EQ(t[1], Interval(0, 101000));
  EXPECT_EQ(t[3], Interval(106000, 207000));
  EXPECT_EQ(t[2], Interval(121000, 1121000));

  // A stream still busy when the event is recorded finds it recorded: the
  // compute op queued behind a 1,000,000 ns op starts right after it, and
  // the copy stream pays nothing.
  Schedule busy = Tiny(1, R"pb(
    ops { id: 0 device: 0 stream: "compute"
          compute { kind: BLOCK_FORWARD flops: 1000000000 bytes_accessed: 1000000 } }
  )pb" + ops);
  busy.mutable_cluster()->mutable_devices(0)->set_stream_wake_latency_s(20e-6);
  busy.mutable_cluster()->mutable_devices(0)->set_stream_signal_cost_s(5e-6);
  t = Times(busy);
  EXPECT_EQ(t[3], Interval(101000, 202000));
  EXPECT_EQ(t[2], Interval(1000000, 2000000));
}

TEST(Simulate, MemoryBoundComputeTakesBytesOverBandwidth) {
  // 1,000 FLOP but 5,000,000 bytes at 100 B/ns: 50,000 ns.
  auto t = Times(Tiny(1, R"pb(
    ops { id: 1 device: 0 stream: "compute"
          compute { kind: CAST flops: 1000 bytes_accessed: 5000000 } }
  )pb"));
  EXPECT_EQ(t[1], Interval(0, 50000));
}

std::string AllGather(int devices, int64_t bytes, int first_id) {
  std::string participants;
  for (int d = 0; d < devices; ++d) absl::StrAppend(&participants, d ? ", " : "", d);
  std::string ops;
  for (int d = 0; d < devices; ++d) {
    absl::StrAppend(&ops, "ops { id: ", first_id + d, " device: ", d,
                    " stream: \"collective\" collective { kind: ALL_GATHER key: \"ag\""
                    " participants: [", participants, "] bytes: ", bytes, " } }\n");
  }
  return ops;
}

// Two all-gathers of 4,000,000 bytes between devices 0 and 1: "ag" (ops 10
// and 11) and "ag2" (ops 20 and 21).
std::string TwoAllGathers() {
  std::string second = AllGather(2, 4000000, 20);
  absl::StrReplaceAll({{"\"ag\"", "\"ag2\""}}, &second);
  return AllGather(2, 4000000, 10) + second;
}

TEST(Simulate, ACollectiveStartsAtTheExpectedLatestOfItsMembersVaryingArrivals) {
  // Two devices compute 1,000,000 ns each, then all-gather twice. With a
  // compute spread of 3 % each arrives at 1,000,000 ± 30,000 ns, and the
  // later of two such arrivals comes 30,000 / sqrt(pi) = 16,925.7 ns late
  // on average: the first all-gather starts (and ends) that much later.
  // The second follows the first with no compute between: no wait.
  const std::string ops = TwoAllGathers() + R"pb(
    ops { id: 1 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    ops { id: 2 device: 1 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    edges { from: 1 to: 10 }
    edges { from: 2 to: 11 }
    edges { from: 10 to: 20 }
    edges { from: 11 to: 21 }
  )pb";
  Schedule s = Tiny(2, ops);
  auto steady = Times(s);
  const int64_t gather = steady[10].second - 1000000;
  const int64_t second_gather = steady[20].second - steady[20].first;
  for (int d = 0; d < 2; ++d) s.mutable_cluster()->mutable_devices(d)->set_compute_spread(0.03);
  auto t = Times(s);
  EXPECT_EQ(t[10], Interval(1000000, 1000000 + 16926 + gather));
  EXPECT_EQ(t[11], t[10]);
  EXPECT_EQ(t[20], Interval(t[10].second, t[10].second + second_gather));
  // One device varying beside one that does not: E[max(X, 1,000,000)] for
  // X ~ N(1,000,000, 30,000²) is 30,000 / sqrt(2 pi) = 11,968.3 ns late.
  s.mutable_cluster()->mutable_devices(1)->set_compute_spread(0);
  t = Times(s);
  EXPECT_EQ(t[10], Interval(1000000, 1000000 + 11969 + gather));
}

TEST(Simulate, ComputeThatNeverWaitsForACollectiveKeepsVaryingPastItAsOne) {
  // Each device computes twice, 1,000,000 ns each at a spread of 3 %; an
  // all-gather follows each compute op on the collective stream, but the
  // second compute op does not wait for the first all-gather. The devices'
  // collective streams meet there; their compute streams do not. So each
  // arrives at the second all-gather varying by both compute ops, which
  // vary together (a step's ops run slow or fast as one): sd = 30,000 +
  // 30,000, the later of two such 60,000 / sqrt(pi) = 33,851.4 ns late,
  // where it would be 16,926 had the first all-gather synchronised the
  // devices (and 23,937 were the two ops independent).
  const std::string ops = TwoAllGathers() + R"pb(
    ops { id: 1 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    ops { id: 2 device: 1 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    ops { id: 3 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    ops { id: 4 device: 1 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    edges { from: 1 to: 10 }
    edges { from: 2 to: 11 }
    edges { from: 3 to: 20 }
    edges { from: 4 to: 21 }
  )pb";
  Schedule s = Tiny(2, ops);
  const int64_t second_gather = Times(s)[20].second - 2000000;
  for (int d = 0; d < 2; ++d) s.mutable_cluster()->mutable_devices(d)->set_compute_spread(0.03);
  auto t = Times(s);
  EXPECT_EQ(t[3], Interval(1000000, 2000000));  // the compute streams never wait
  EXPECT_EQ(t[20], Interval(2000000, 2000000 + 33852 + second_gather));
  EXPECT_EQ(t[21], t[20]);
}

TEST(Simulate, AStreamWokenOnItsWakersCoreWakesAtOnce) {
  // The testbed device's copy thread runs on its compute core when its
  // host has no core to spare: the compute op waiting for the copy starts
  // its same-core wake-up (3 µs) after the copy's end, not the 20 µs of a
  // thread woken on an idle core.
  Schedule s = Tiny(1, R"pb(
    ops { id: 1 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000000 } }
    ops { id: 2 device: 0 stream: "compute"
          compute { kind: BLOCK_FORWARD flops: 1000000000 bytes_accessed: 1000000 } }
    edges { from: 1 to: 2 }
  )pb");
  Device* device = s.mutable_cluster()->mutable_devices(0);
  device->set_shares_host_cores(true);
  device->set_stream_wake_latency_s(20e-6);
  device->set_same_core_wake_latency_s(3e-6);
  s.mutable_cluster()->mutable_hosts(0)->set_cores(1);
  EXPECT_EQ(Times(s)[2], Interval(104000, 1104000));
  // With a core to spare the copy thread runs there, and is woken there.
  s.mutable_cluster()->mutable_hosts(0)->set_cores(2);
  EXPECT_EQ(Times(s)[2], Interval(121000, 1121000));
}

TEST(Simulate, RingAllGatherMatchesTheClosedForm) {
  // n = 4, S = 4,000,000 B: latency 2 µs + 3 steps × 1 µs = 5,000 ns; each
  // ring edge carries (n-1)/n · S = 3,000,000 B at 20 B/ns = 150,000 ns.
  auto t = Times(Tiny(4, AllGather(4, 4000000, 10)));
  for (int d = 0; d < 4; ++d) EXPECT_EQ(t[10 + d], Interval(0, 155000)) << d;
  // n = 2: 2 µs + 1 µs, then 1,000,000 B at 20 B/ns.
  t = Times(Tiny(2, AllGather(2, 2000000, 10)));
  EXPECT_EQ(t[10], Interval(0, 53000));
}

TEST(Simulate, ACollectiveWaitsForItsLastParticipant) {
  // Device 3 computes for 1,000,000 ns first; the transfer starts then. The
  // others' intervals start when their streams reach the all-gather, as a
  // measured one does: their wait for device 3 is in them.
  auto t = Times(Tiny(4, AllGather(4, 4000000, 10) + R"pb(
    ops { id: 1 device: 3 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    edges { from: 1 to: 13 }
  )pb"));
  for (int d = 0; d < 3; ++d) EXPECT_EQ(t[10 + d], Interval(0, 1155000)) << d;
  EXPECT_EQ(t[13], Interval(1000000, 1155000));
}

TEST(Simulate, BusBandwidthEfficiencyStretchesTheTransfer) {
  Schedule s = Tiny(4, AllGather(4, 4000000, 10));
  s.mutable_cluster()->mutable_collectives()->set_bus_bandwidth_efficiency(0.5);
  auto t = Times(s);
  EXPECT_EQ(t[10], Interval(0, 5000 + 300000));
}

TEST(Simulate, ComputeSlowsDownWhileTheDeviceCommunicates) {
  // Slowdown 2 while the 101,000 ns copy runs: the first 101,000 ns do
  // 50,500 ns of work; the remaining 949,500 ns run at full speed.
  Schedule s = Tiny(1, R"pb(
    ops { id: 1 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000000 } }
    ops { id: 2 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
  )pb");
  s.mutable_cluster()->mutable_devices(0)->set_compute_slowdown_under_comm(2);
  auto t = Times(s);
  EXPECT_EQ(t[2], Interval(0, 101000 + 949500));
}

// Two CPU-testbed devices of one host with one core, running `ops`.
Schedule TwoDevicesOnOneCore(const std::string& ops) {
  Schedule s = Tiny(2, ops);
  s.mutable_cluster()->mutable_hosts(0)->set_cores(1);
  for (int d = 0; d < 2; ++d) s.mutable_cluster()->mutable_devices(d)->set_shares_host_cores(true);
  return s;
}

// Device 0 computes 1,000,000 ns of work, device 1 500,000 ns, both ready at 0.
constexpr char kTwoForwards[] = R"pb(
  ops { id: 1 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
  ops { id: 2 device: 1 stream: "compute" compute { kind: BLOCK_FORWARD flops: 500000000 } }
)pb";

TEST(Simulate, CoreSharingDevicesTakeTurnsOnTheHostsCores) {
  // One core, two CPU-testbed devices computing 1,000,000 and 500,000 ns of
  // work, both ready at 0: device 0's op takes the idle core and runs
  // whole (nothing makes the scheduler decide again until it ends); device
  // 1's waits, and starts when it gets the core.
  Schedule s = TwoDevicesOnOneCore(kTwoForwards);
  auto t = Times(s);
  EXPECT_EQ(t[1], Interval(0, 1000000));
  EXPECT_EQ(t[2], Interval(1000000, 1500000));
  absl::StatusOr<SimResult> r = Simulate(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->timeline.steps(0).end_ns(), 1500000);
  // A device that becomes ready later does not preempt the one running (the
  // testbed's compute threads are SCHED_IDLE): device 1's op, ready when
  // its small copy ends, waits until device 0's ends.
  s = TwoDevicesOnOneCore(R"pb(
    ops { id: 1 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    ops { id: 2 device: 1 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000 } }
    ops { id: 3 device: 1 stream: "compute" compute { kind: BLOCK_FORWARD flops: 500000000 } }
    edges { from: 2 to: 3 }
  )pb");
  t = Times(s);
  const int64_t copied = t[2].second;
  EXPECT_EQ(t[1], Interval(0, 1000000));
  EXPECT_EQ(t[3], Interval(1000000, 1500000));
  // With two cores neither waits.
  s.mutable_cluster()->mutable_hosts(0)->set_cores(2);
  t = Times(s);
  EXPECT_EQ(t[1], Interval(0, 1000000));
  EXPECT_EQ(t[3], Interval(copied, copied + 500000));
  // Unless running together costs each 1.25x (shared caches): device 1's
  // op takes 625,000 ns; device 0's does 500,000 ns of work meanwhile.
  s.mutable_cluster()->mutable_hosts(0)->set_shared_core_slowdown(1.25);
  t = Times(s);
  EXPECT_EQ(t[3], Interval(copied, copied + 625000));
  EXPECT_EQ(t[1], Interval(0, 1125000));
}

TEST(Simulate, ATurnPassedToAWaitingMateCostsTheHandOff) {
  // One core, two CPU-testbed devices of one host with 1,000,000 and
  // 500,000 ns of work, both ready at 0: device 1's op waits for device 0's
  // turn to end at 1,000,000. Passing the turn on wakes device 1's thread:
  // device 0's wake-up call (4 µs) and device 1's start on the core it
  // shares (3 µs) hold the core, so device 1's op starts at 1,007,000.
  Schedule s = TwoDevicesOnOneCore(kTwoForwards);
  for (int d = 0; d < 2; ++d) {
    Device* device = s.mutable_cluster()->mutable_devices(d);
    device->set_stream_signal_cost_s(4e-6);
    device->set_same_core_wake_latency_s(3e-6);
    device->set_stream_wake_latency_s(20e-6);  // a wake-up on another core: not this one
  }
  auto t = Times(s);
  EXPECT_EQ(t[1], Interval(0, 1000000));
  EXPECT_EQ(t[2], Interval(1007000, 1507000));
  // Without a same-core figure the stream wake-up latency stands in.
  for (int d = 0; d < 2; ++d) {
    s.mutable_cluster()->mutable_devices(d)->set_same_core_wake_latency_s(0);
  }
  t = Times(s);
  EXPECT_EQ(t[2], Interval(1024000, 1524000));
  // On cores of their own nobody hands anything over.
  s.mutable_cluster()->mutable_hosts(0)->set_cores(2);
  t = Times(s);
  EXPECT_EQ(t[2], Interval(0, 500000));
}

TEST(Simulate, AWakeUpCallStallsTheComputeSharingTheWakersCore) {
  // One core. Device 1's 1,000,000 ns op waits behind device 0's 100,000 ns
  // one (which took the core first) until it ends at 100,000 ns. Its end
  // wakes device 0's copy stream (asleep on it): the 5 µs call holds the
  // core, so device 1's op gets it at 105,000 and runs to 1,105,000.
  Schedule s = TwoDevicesOnOneCore(R"pb(
    ops { id: 2 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 100000000 } }
    ops { id: 1 device: 1 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    ops { id: 3 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000 } }
    edges { from: 2 to: 3 }
  )pb");
  for (int d = 0; d < 2; ++d) {
    s.mutable_cluster()->mutable_devices(d)->set_stream_signal_cost_s(5e-6);
  }
  auto t = Times(s);
  EXPECT_EQ(t[2], Interval(0, 100000));
  EXPECT_EQ(t[1], Interval(105000, 1105000));
  // On its own core, device 1 does not notice.
  s.mutable_cluster()->mutable_hosts(0)->set_cores(2);
  t = Times(s);
  EXPECT_EQ(t[1], Interval(0, 1000000));
}

// On a host of one core, device 0 computes for 1,000,000 ns while device 1
// copies 1,000,000 bytes to itself (101,000 ns on its link).
Schedule ComputeBesideACopyOnOneCore() {
  Schedule s = Tiny(2, R"pb(
    ops { id: 1 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    ops { id: 2 device: 1 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000000 } }
  )pb");
  s.mutable_cluster()->mutable_hosts(0)->set_cores(1);
  return s;
}

// Devices 0 and 1 share their host's cores, and each copy or collective
// takes 50 µs + bytes at 20 GB/s of them.
void ShareCoresWithTransferCpu(Schedule* s) {
  for (int d = 0; d < 2; ++d) {
    Device* device = s->mutable_cluster()->mutable_devices(d);
    device->set_shares_host_cores(true);
    device->set_transfer_cpu_s(50e-6);
    device->set_transfer_cpu_gbps(20);
  }
}

TEST(Simulate, ACopysHostCpuComesOutOfTheSharedCores) {
  // Device 1's copy (1,000,000 bytes, 101,000 ns on its link) takes its
  // bytes at 20 GB/s (50,000 ns) of host CPU at its start and 50 µs at its
  // end (its timer's wake-up and the call that wakes what waits for it).
  Schedule s = ComputeBesideACopyOnOneCore();
  ShareCoresWithTransferCpu(&s);
  // One core: the compute stalls while the copy takes it.
  auto t = Times(s);
  EXPECT_EQ(t[2], Interval(0, 101000));
  EXPECT_EQ(t[1], Interval(0, 1100000));
  // Two cores: each device computes on its own, and the copy's CPU comes
  // out of device 1's.
  s.mutable_cluster()->mutable_hosts(0)->set_cores(2);
  t = Times(s);
  EXPECT_EQ(t[1], Interval(0, 1000000));
  // Two cores, both devices computing: device 1's compute waits for the
  // copy's 50,000 ns on its core (its op starts when its thread gets the
  // core) and stalls for its 50,000 at the copy's end; device 0's runs on
  // (the runtime pins each device's threads to its core).
  *s.add_ops() = s.ops(0);
  s.mutable_ops(2)->set_id(3);
  s.mutable_ops(2)->set_device(1);
  t = Times(s);
  EXPECT_EQ(t[1], Interval(0, 1000000));
  EXPECT_EQ(t[3], Interval(50000, 1100000));
  // Three cores: the transfer threads run on the one to spare.
  s.mutable_cluster()->mutable_hosts(0)->set_cores(3);
  t = Times(s);
  EXPECT_EQ(t[3], Interval(0, 1000000));
  // Devices that do not share their host's cores (GPUs) pay nothing.
  for (int d = 0; d < 2; ++d) s.mutable_cluster()->mutable_devices(d)->set_shares_host_cores(false);
  t = Times(s);
  EXPECT_EQ(t[1], Interval(0, 1000000));
}

TEST(Simulate, CopyThreadsOfOneCoreTakeItsCpuOneAfterTheOther) {
  // One core, both devices upload 1,000,000 bytes at once (101,000 ns on
  // each device's link), each thread converting them at 20 GB/s (50,000 ns)
  // first: device 1's thread waits for device 0's to sleep, so its copy
  // starts 50,000 ns late.
  Schedule s = Tiny(2, R"pb(
    ops { id: 1 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000000 } }
    ops { id: 2 device: 1 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000000 } }
  )pb");
  s.mutable_cluster()->mutable_hosts(0)->set_cores(1);
  ShareCoresWithTransferCpu(&s);
  auto t = Times(s);
  EXPECT_EQ(t[1], Interval(0, 101000));
  EXPECT_EQ(t[2], Interval(50000, 151000));
  // Two cores, one per device: each thread converts on its own core.
  s.mutable_cluster()->mutable_hosts(0)->set_cores(2);
  t = Times(s);
  EXPECT_EQ(t[1], Interval(0, 101000));
  EXPECT_EQ(t[2], Interval(0, 101000));
}

// Devices 0 and 1 share their host's cores, and each wake-up of a transfer
// thread costs a compute op running on its core 30 µs.
void ShareCoresWithInterruptCpu(Schedule* s) {
  for (int d = 0; d < 2; ++d) {
    s->mutable_cluster()->mutable_devices(d)->set_shares_host_cores(true);
    s->mutable_cluster()->mutable_devices(d)->set_interrupt_cpu_s(30e-6);
  }
}

TEST(Simulate, ATransferThreadsWakeUpsInterruptTheComputeOnItsCore) {
  // One core, each device's transfers on it. Device 1's copy (1,000,000
  // bytes: 101,000 ns) wakes its thread at 0 and at its end while device 0's
  // 1,000,000 ns op runs: each wake-up holds the core for 30 µs, and the op
  // ends 60,000 ns later.
  Schedule s = ComputeBesideACopyOnOneCore();
  ShareCoresWithInterruptCpu(&s);
  auto t = Times(s);
  EXPECT_EQ(t[2], Interval(0, 101000));
  EXPECT_EQ(t[1], Interval(0, 1060000));
  // A second copy right behind the first on its stream: its thread is
  // awake already, so only its end interrupts (90,000 ns in all).
  Op* next = s.add_ops();
  *next = s.ops(1);
  next->set_id(3);
  t = Times(s);
  EXPECT_EQ(t[3], Interval(101000, 202000));
  EXPECT_EQ(t[1], Interval(0, 1090000));
  // A copy while no compute runs on its core interrupts nothing: after the
  // compute, it costs the step nothing either.
  s.mutable_ops()->RemoveLast();
  Edge* edge = s.add_edges();
  edge->set_from(1);
  edge->set_to(2);
  t = Times(s);
  EXPECT_EQ(t[1], Interval(0, 1000000));
  EXPECT_EQ(t[2], Interval(1000000, 1101000));
  // With a core to spare the transfer threads wake there.
  s.clear_edges();
  s.mutable_cluster()->mutable_hosts(0)->set_cores(3);
  t = Times(s);
  EXPECT_EQ(t[1], Interval(0, 1000000));
}

TEST(Simulate, ACollectivesThreadsWakeUpsInterruptTheComputeOnTheirCore) {
  // Two cores, one per device. An all-gather between devices 0 and 1 runs
  // while device 0's 1,000,000 ns op does: device 0's member thread wakes
  // to start it and at its end, two wake-ups of 30 µs on the op's core
  // (device 1's are on the other core).
  Schedule s = Tiny(2, R"pb(
    ops { id: 1 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
  )pb" + AllGather(2, 10000000, 10));
  s.mutable_cluster()->mutable_hosts(0)->set_cores(2);
  ShareCoresWithInterruptCpu(&s);
  const auto t = Times(s);
  const int64_t gather_ns = t.at(10).second - t.at(10).first;
  ASSERT_GT(gather_ns, 30000);    // its wake-ups do not overlap
  ASSERT_LT(gather_ns, 1000000);  // and it ends while the op runs
  EXPECT_EQ(t.at(1), Interval(0, 1060000));
}

TEST(Simulate, AMemberThatWaitedAtTheMeetingWakesAgainAsTheCollectiveGoes) {
  // As above, but device 1 reaches the all-gather after computing 500,000
  // ns: device 0's member thread, asleep at the meeting since 0, wakes a
  // third time then, and device 0's op ends 90,000 ns late.
  Schedule s = Tiny(2, R"pb(
    ops { id: 1 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    ops { id: 2 device: 1 stream: "compute" compute { kind: BLOCK_FORWARD flops: 500000000 } }
    edges { from: 2 to: 11 }
  )pb" + AllGather(2, 10000000, 10));
  s.mutable_cluster()->mutable_hosts(0)->set_cores(2);
  ShareCoresWithInterruptCpu(&s);
  const auto t = Times(s);
  ASSERT_LT(t.at(10).second, 1000000);  // the all-gather ends while the op runs
  EXPECT_EQ(t.at(1), Interval(0, 1090000));
}

TEST(Simulate, ACollectivesHostCpuComesOutOfTheSharedCoresOnEveryMember) {
  // An all-gather of 1,000,000 bytes between devices 0 and 1 takes 100,000
  // ns of CPU on each (50 µs + bytes at 20 GB/s): on one core the two
  // members' threads take it one after the other, and device 0's compute
  // stalls for 200,000 ns.
  Schedule s = Tiny(2, R"pb(
    ops { id: 1 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
  )pb" + AllGather(2, 1000000, 10));
  s.mutable_cluster()->mutable_hosts(0)->set_cores(1);
  ShareCoresWithTransferCpu(&s);
  EXPECT_EQ(Times(s)[1], Interval(0, 1200000));
  // With three cores one is left for the compute.
  s.mutable_cluster()->mutable_hosts(0)->set_cores(3);
  EXPECT_EQ(Times(s)[1], Interval(0, 1000000));
}

TEST(Simulate, ACollectiveMembersHostCpuComesAsItArrivesAndAsTheCollectiveGoes) {
  // Two cores, each device's transfer threads on its own. Device 0 computes
  // op 1 (100,000 ns), arrives at the all-gather and computes ops 2 and 4
  // (1,000,000 ns each). Its member's thread copies its 500,000-byte chunk
  // into the staging slots as it arrives, with its wake-up and the meeting:
  // 50 µs + 500,000 bytes at 20 GB/s = 75,000 ns of the core, so op 2
  // starts at 175,000 (a measured op starts when its thread first runs).
  // Device 1 arrives after computing 2,000,000 ns: then device 0's thread
  // copies the other 500,000 bytes out (25,000 ns), stalling op 4.
  Schedule s = Tiny(2, R"pb(
    ops { id: 1 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 100000000 } }
    ops { id: 2 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    ops { id: 4 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    ops { id: 3 device: 1 stream: "compute" compute { kind: BLOCK_FORWARD flops: 2000000000 } }
    ops { id: 10 device: 0 stream: "collective"
          collective { kind: ALL_GATHER key: "ag" participants: [0, 1] bytes: 1000000
                       send { size_bytes: 500000 } } }
    ops { id: 11 device: 1 stream: "collective"
          collective { kind: ALL_GATHER key: "ag" participants: [0, 1] bytes: 1000000
                       send { size_bytes: 500000 } } }
    edges { from: 1 to: 10 }
    edges { from: 3 to: 11 }
  )pb");
  s.mutable_cluster()->mutable_hosts(0)->set_cores(2);
  ShareCoresWithTransferCpu(&s);
  auto t = Times(s);
  EXPECT_EQ(t[10].first, 100000);  // its stream reached it
  EXPECT_EQ(t[2], Interval(175000, 1175000));
  EXPECT_EQ(t[4], Interval(1175000, 2200000));
  // Its bytes at the collectives' own rate where the cluster gives one:
  // 50 µs + 500,000 bytes at 10 GB/s = 100,000 ns as it arrives, 50,000 as
  // it goes.
  for (int d = 0; d < 2; ++d) s.mutable_cluster()->mutable_devices(d)->set_collective_cpu_gbps(10);
  t = Times(s);
  EXPECT_EQ(t[2], Interval(200000, 1200000));
  EXPECT_EQ(t[4], Interval(1200000, 2250000));
}

TEST(Simulate, MeasuredComputeEntryWinsOverTheRoofline) {
  Schedule s = Tiny(1, R"pb(
    model { name: "toy" }
    ops { id: 1 device: 0 stream: "compute"
          compute { kind: BLOCK_FORWARD flops: 1000000000 examples: 4 seq_len: 16 } }
  )pb");
  MeasuredCompute* m = s.mutable_cluster()->add_measured_compute();
  m->set_op_class("BLOCK_FORWARD");
  m->set_model("toy");
  m->set_examples(4);
  m->set_seq_len(16);
  m->set_seconds(123e-6);
  EXPECT_EQ(Times(s)[1], Interval(0, 123000));
}

TEST(Simulate, MissingFigureIsAnErrorNamingIt) {
  Schedule s = Tiny(1, R"pb(
    ops { id: 7 name: "fwd+ block 0" device: 0 stream: "compute"
          compute { kind: BLOCK_FORWARD flops: 1000 } }
  )pb");
  s.mutable_training()->set_compute_dtype(BF16);
  absl::StatusOr<SimResult> r = Simulate(s);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("device 'g0' has no ComputePeak"), std::string::npos)
      << r.status();
  EXPECT_NE(r.status().message().find("BF16"), std::string::npos);
  EXPECT_NE(r.status().message().find("op 7 'fwd+ block 0'"), std::string::npos);

  Schedule no_step = Tiny(2, AllGather(2, 1000, 1));
  no_step.mutable_cluster()->mutable_collectives()->clear_step_latencies();
  r = Simulate(no_step);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("no step_latencies entry for NVLINK"), std::string::npos)
      << r.status();
}

TEST(Simulate, ACycleIsReportedNotHung) {
  absl::StatusOr<SimResult> r = Simulate(Tiny(1, R"pb(
    ops { id: 1 name: "a" device: 0 stream: "compute" compute { flops: 1 } }
    ops { id: 2 name: "b" device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1 } }
    edges { from: 2 to: 1 }
    edges { from: 1 to: 2 }
  )pb"));
  ASSERT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("cannot finish"), std::string::npos) << r.status();
}

TEST(Simulate, SameInputSameTimeline) {
  Schedule s = Tiny(4, AllGather(4, 4000000, 10) + R"pb(
    ops { id: 1 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 777777 } }
    ops { id: 2 device: 0 stream: "h2d2" copy { direction: HOST_TO_DEVICE bytes: 333333 } }
  )pb");
  absl::StatusOr<SimResult> a = Simulate(s), b = Simulate(s);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->timeline.SerializeAsString(), b->timeline.SerializeAsString());
}

// One Simulator and one result for schedules of every size and mechanism in
// turn (failing ones among them): each result is the one a fresh simulation
// gives, whatever came before.
TEST(Simulator, EachSimulationDependsOnItsScheduleAlone) {
  Schedule big = Tiny(4, AllGather(4, 4000000, 10) + R"pb(
    ops { id: 1 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 777777 } }
    ops { id: 2 device: 0 stream: "h2d2" copy { direction: HOST_TO_DEVICE bytes: 333333 } }
    ops { id: 3 device: 1 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    edges { from: 1 to: 3 }
  )pb");
  Schedule shared_cores = Tiny(2, R"pb(
    ops { id: 0 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000000000 } }
    ops { id: 1 device: 1 stream: "compute" compute { kind: BLOCK_FORWARD flops: 500000000 } }
    ops { id: 2 device: 1 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000000 } }
  )pb");
  shared_cores.mutable_cluster()->mutable_hosts(0)->set_cores(1);
  for (int d = 0; d < 2; ++d) {
    shared_cores.mutable_cluster()->mutable_devices(d)->set_shares_host_cores(true);
    shared_cores.mutable_cluster()->mutable_devices(d)->set_compute_slowdown_under_comm(2);
  }
  Schedule cycle = Tiny(1, R"pb(
    ops { id: 1 name: "a" device: 0 stream: "compute" compute { flops: 1 } }
    ops { id: 2 name: "b" device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1 } }
    edges { from: 2 to: 1 }
    edges { from: 1 to: 2 }
  )pb");
  Schedule no_peak = Tiny(1, R"pb(
    ops { id: 1 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000 } }
    ops { id: 2 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 1000 } }
  )pb");
  no_peak.mutable_training()->set_compute_dtype(BF16);
  Schedule small = Tiny(1, R"pb(
    ops { id: 1 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 1000001 } }
  )pb");

  Simulator simulator;
  SimResult result;
  (*result.timeline.mutable_metadata())["left"] = "over";
  for (const Schedule* s : {&big, &cycle, &shared_cores, &no_peak, &small, &big, &shared_cores}) {
    const absl::Status status = simulator.Simulate(*s, &result);
    const absl::StatusOr<SimResult> fresh = Simulate(*s);
    ASSERT_EQ(status, fresh.status());
    if (!status.ok()) continue;
    EXPECT_EQ(result.timeline.SerializeAsString(), fresh->timeline.SerializeAsString());
    EXPECT_EQ(result.events, fresh->events);
    ASSERT_EQ(result.links.size(), fresh->links.size());
    for (size_t l = 0; l < result.links.size(); ++l) {
      EXPECT_EQ(result.links[l].name, fresh->links[l].name);
      EXPECT_EQ(result.links[l].link_class, fresh->links[l].link_class);
      EXPECT_EQ(result.links[l].capacity_gbps, fresh->links[l].capacity_gbps);
      EXPECT_EQ(result.links[l].bytes, fresh->links[l].bytes);
      EXPECT_EQ(result.links[l].busy_ns, fresh->links[l].busy_ns);
      EXPECT_EQ(result.links[l].utilisation, fresh->links[l].utilisation);
    }
  }
}

// ZO2 on a 2-block toy model, lowered for real, against the schedule derived
// by hand from each op's cost fields on the tiny cluster.
TEST(Simulate, Zo2OnATwoBlockToyModelMatchesTheHandDerivedSchedule) {
  ModelSpec toy;
  ASSERT_TRUE(ParseTextProto(R"pb(
    name: "toy" family: OPT hidden_size: 64 num_layers: 2 num_heads: 4 ffn_size: 256
    vocab_size: 128 max_positions: 32 activation: RELU norm: LAYER_NORM
    norm_placement: PRE_NORM positional: LEARNED_OPT_OFFSET tied_lm_head: true
    linear_bias: true final_norm: true weight_dtype: FP32
  )pb", "inline", &toy).ok());
  ASSERT_TRUE(ValidateModelSpec(toy, "inline").ok());
  Cluster cluster;
  ASSERT_TRUE(ParseTextProto(absl::StrCat(kCluster, "devices { name: \"g0\" ", kDevice, "}"),
                             "inline", &cluster).ok());
  LowerOptions o;
  o.strategy = ZO2;
  o.training = DefaultTrainingSettings();
  o.training.set_batch_size(4);
  o.training.set_seq_len(16);
  absl::StatusOr<Schedule> s = LowerSchedule(toy, cluster, o);
  ASSERT_TRUE(s.ok()) << s.status();

  // Each op's duration by the roofline on this cluster (FP32: 1000 FLOP/ns,
  // 100 B/ns), and each copy's: 1,000 ns + bytes / 10 B/ns.
  std::map<std::string, int64_t> dur;
  std::map<std::string, int64_t> id;
  for (const Op& op : s->ops()) {
    id[op.name()] = op.id();
    if (op.has_compute()) {
      const double flops_ns = op.compute().flops() / 1000.0;
      const double bytes_ns = op.compute().bytes_accessed() / 100.0;
      dur[op.name()] = static_cast<int64_t>(std::ceil(std::max(flops_ns, bytes_ns)));
    } else {
      dur[op.name()] = 1000 + (op.copy().bytes() + 9) / 10;
    }
  }
  // The hand-derived schedule. h2d stream: both uploads back to back.
  std::map<std::string, Interval> want;
  auto run = [&](const std::string& name, int64_t start) {
    want[name] = {start, start + dur.at(name)};
    return start + dur.at(name);
  };
  const int64_t h2d0_end = run("h2d block 0", 0);
  const int64_t h2d1_end = run("h2d block 1", h2d0_end);
  // compute stream, in order; updates wait for their block's upload.
  int64_t c = run("update embedding", 0);
  c = run("embed+", c);
  c = run("embed-", c);
  c = run("update block 0", std::max(c, h2d0_end));
  const int64_t update0_end = c;
  c = run("fwd+ block 0", c);
  c = run("fwd- block 0", c);
  c = run("update block 1", std::max(c, h2d1_end));
  const int64_t update1_end = c;
  c = run("fwd+ block 1", c);
  c = run("fwd- block 1", c);
  c = run("update head", c);
  c = run("head+ loss", c);
  c = run("head- loss", c);
  c = run("projected gradient", c);
  // d2h stream: each offload as soon as its block is updated.
  const int64_t d2h0_end = run("d2h block 0", update0_end);
  run("d2h block 1", std::max(d2h0_end, update1_end));

  auto t = Times(*s);
  ASSERT_EQ(t.size(), want.size());
  for (const auto& [name, interval] : want) {
    EXPECT_EQ(t[id.at(name)], interval) << name;
  }
}

}  // namespace
}  // namespace zosched
