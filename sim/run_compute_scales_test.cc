// A run's compute costs as device scales: the CPU time a device's compute
// ops took over the cost model's figures, over all measured steps; devices
// without CPU times (GPU runs) get none; an interval naming an op the
// schedule lacks is an error; the scales land on the right cluster devices.
// A run's collective CPU as a per-byte rate per device, likewise.
// The speed probe's drift as device scales: the calibrated scale times the
// run's median probe over the calibration's, per device.
#include "sim/run_compute_scales.h"

#include <string>

#include "base/textproto.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

// A measured Timeline from its text (a parse error fails the test).
Timeline Measured(const std::string& text) {
  Timeline t;
  const absl::Status status = ParseTextProto(text, "inline", &t);
  EXPECT_TRUE(status.ok()) << status;
  return t;
}

// Two core-sharing devices; device 1 (cluster device "c1") already carries a
// calibrated scale, which the run's figures do not build on.
Schedule TwoDevices() {
  Schedule s;
  const absl::Status status = ParseTextProto(R"pb(
    name: "two"
    cluster {
      hosts { name: "h" cores: 2 }
      devices { name: "c0" host: "h" shares_host_cores: true }
      devices { name: "c1" host: "h" shares_host_cores: true compute_time_scale: 1.3 }
      measured_compute { op_class: "BLOCK_FORWARD" model: "m" examples: 4 seconds: 0.001 }
      measured_compute { op_class: "UPDATE" model: "m" seconds: 0.0002 }
    }
    model { name: "m" }
    devices { id: 0 cluster_device: "c0" }
    devices { id: 1 cluster_device: "c1" }
    ops { id: 1 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD examples: 4 } }
    ops { id: 2 device: 0 stream: "compute" compute { kind: UPDATE } }
    ops { id: 3 device: 1 stream: "compute" compute { kind: BLOCK_FORWARD examples: 4 } }
    ops { id: 4 device: 0 stream: "h2d" copy {} }
  )pb", "inline", &s);
  EXPECT_TRUE(status.ok()) << status;
  return s;
}

TEST(RunComputeScales, CpuTimeOverTheModelsFiguresPerDevice) {
  const Schedule s = TwoDevices();
  const Timeline measured = Measured(R"pb(
    ops { op_id: 1 device: 0 step: 2 cpu_ns: 1500000 }
    ops { op_id: 2 device: 0 step: 2 cpu_ns: 300000 }
    ops { op_id: 1 device: 0 step: 3 cpu_ns: 1100000 }
    ops { op_id: 2 device: 0 step: 3 cpu_ns: 200000 }
    ops { op_id: 4 device: 0 step: 3 cpu_ns: 0 }
    ops { op_id: 3 device: 1 step: 2 }
  )pb");
  absl::StatusOr<std::vector<double>> scales = RunComputeScales(s, measured);
  ASSERT_TRUE(scales.ok()) << scales.status();
  ASSERT_EQ(scales->size(), 2u);
  // (1.5 + 0.3 + 1.1 + 0.2) ms over 2 x (1 + 0.2) ms.
  EXPECT_DOUBLE_EQ((*scales)[0], 3.1 / 2.4);
  EXPECT_EQ((*scales)[1], 0);  // no CPU times: no scale

  const Schedule scaled = WithComputeScales(s, *scales);
  EXPECT_DOUBLE_EQ(scaled.cluster().devices(0).compute_time_scale(), 3.1 / 2.4);
  EXPECT_DOUBLE_EQ(scaled.cluster().devices(1).compute_time_scale(), 1.3);  // kept
}

TEST(RunComputeScales, ACalibratedScaleIsNotCountedTwice) {
  const Schedule s = TwoDevices();
  const Timeline measured = Measured(R"pb(ops { op_id: 3 device: 1 step: 0 cpu_ns: 2000000 })pb");
  absl::StatusOr<std::vector<double>> scales = RunComputeScales(s, measured);
  ASSERT_TRUE(scales.ok()) << scales.status();
  EXPECT_DOUBLE_EQ((*scales)[1], 2.0);  // against the table's 1 ms, not 1.3 ms
}

TEST(RunComputeScales, ThePredictionFromThemLeavesOutTheInterruptsTheyHold) {
  Schedule s = TwoDevices();
  for (Device& d : *s.mutable_cluster()->mutable_devices()) d.set_interrupt_cpu_s(4e-5);
  const Schedule cleared = WithoutInterruptCpu(s);
  for (const Device& d : cleared.cluster().devices()) EXPECT_EQ(d.interrupt_cpu_s(), 0) << d.name();
  EXPECT_EQ(cleared.cluster().devices(1).compute_time_scale(), 1.3);  // the rest kept
}

TEST(RunComputeScales, AnOpTheScheduleLacksIsAnError) {
  const Timeline measured = Measured(R"pb(ops { op_id: 9 device: 0 cpu_ns: 5 })pb");
  absl::StatusOr<std::vector<double>> scales = RunComputeScales(TwoDevices(), measured);
  ASSERT_FALSE(scales.ok());
  EXPECT_EQ(scales.status().message(), "measured op 9 on device 0 is not in schedule 'two'");
}

TEST(RunCollectiveCpuGbps, GatheredBytesOverTheCpuBeyondTheFixedCostPerDevice) {
  Schedule s;
  ASSERT_TRUE(ParseTextProto(R"pb(
    name: "gather"
    cluster {
      hosts { name: "h" cores: 2 }
      devices { name: "c0" host: "h" shares_host_cores: true transfer_cpu_s: 1e-5 }
      devices { name: "c1" host: "h" shares_host_cores: true collective_cpu_gbps: 15 }
    }
    model { name: "m" }
    devices { id: 0 cluster_device: "c0" }
    devices { id: 1 cluster_device: "c1" }
    ops { id: 1 device: 0 stream: "collective"
          collective { kind: ALL_GATHER key: "a" participants: [0, 1] bytes: 200000 } }
    ops { id: 2 device: 1 stream: "collective"
          collective { kind: ALL_GATHER key: "a" participants: [0, 1] bytes: 200000 } }
    ops { id: 3 device: 0 stream: "compute" compute { kind: UPDATE } }
  )pb", "inline", &s).ok());
  const Timeline measured = Measured(R"pb(
    ops { op_id: 1 device: 0 step: 2 cpu_ns: 50000 }
    ops { op_id: 1 device: 0 step: 3 cpu_ns: 30000 }
    ops { op_id: 3 device: 0 step: 3 cpu_ns: 900000 }
    ops { op_id: 2 device: 1 step: 2 }
  )pb");
  absl::StatusOr<std::vector<double>> gbps = RunCollectiveCpuGbps(s, measured);
  ASSERT_TRUE(gbps.ok()) << gbps.status();
  ASSERT_EQ(gbps->size(), 2u);
  // 2 x 200,000 bytes over (50 - 10) + (30 - 10) µs: 400,000 / 60,000 ns.
  EXPECT_DOUBLE_EQ((*gbps)[0], 400000.0 / 60000);
  EXPECT_EQ((*gbps)[1], 0);  // no CPU times: none

  const Schedule changed = WithCollectiveCpuGbps(s, *gbps);
  EXPECT_DOUBLE_EQ(changed.cluster().devices(0).collective_cpu_gbps(), 400000.0 / 60000);
  EXPECT_EQ(changed.cluster().devices(1).collective_cpu_gbps(), 15);  // kept

  EXPECT_EQ(RunCollectiveCpuGbps(s, Measured(R"pb(ops { op_id: 7 device: 0 cpu_ns: 5 })pb"))
                .status()
                .message(),
            "measured op 7 on device 0 is not in schedule 'gather'");
}

// TwoDevices with the speed probe calibrated: 0.2 ms on device 0's core,
// 0.1 ms on device 1's.
Schedule TwoProbedDevices() {
  Schedule s = TwoDevices();
  s.mutable_cluster()->mutable_devices(0)->set_speed_probe_s(0.0002);
  s.mutable_cluster()->mutable_devices(1)->set_speed_probe_s(0.0001);
  return s;
}

// Device 0 ran the probe 1.2x as long as at calibration (median of 3
// samples), device 1 0.9x on top of its calibrated 1.3; a device whose
// cluster has no speed_probe_s gets none.
TEST(ProbedComputeScales, CalibratedScaleTimesTheProbesDrift) {
  Schedule s = TwoProbedDevices();
  const Timeline measured = Measured(R"pb(
    speed_probes { device: 0 step: 0 cpu_ns: 240000 }
    speed_probes { device: 0 step: 1 cpu_ns: 900000 }
    speed_probes { device: 0 step: 2 cpu_ns: 200000 }
    speed_probes { device: 1 step: 0 cpu_ns: 90000 }
  )pb");
  absl::StatusOr<std::vector<double>> scales = ProbedComputeScales(s, measured);
  ASSERT_TRUE(scales.ok()) << scales.status();
  ASSERT_EQ(scales->size(), 2u);
  EXPECT_DOUBLE_EQ((*scales)[0], 0.00024 / 0.0002);
  EXPECT_DOUBLE_EQ((*scales)[1], 1.3 * 0.00009 / 0.0001);

  absl::StatusOr<std::vector<double>> drifts = SpeedProbeDrifts(s, measured);
  ASSERT_TRUE(drifts.ok()) << drifts.status();
  EXPECT_DOUBLE_EQ((*drifts)[0], 1.2);
  EXPECT_DOUBLE_EQ((*drifts)[1], 0.9);  // the drift alone, without the calibrated scale

  s.mutable_cluster()->mutable_devices(1)->clear_speed_probe_s();
  scales = ProbedComputeScales(s, measured);
  ASSERT_TRUE(scales.ok()) << scales.status();
  EXPECT_EQ((*scales)[1], 0);  // not calibrated: no scale
}

// The two devices of host h probe at once, so their calibrated probe is
// speed_probe_s times the host's shared_core_slowdown: a run whose probes
// took as long as alone at calibration ran 1 / 1.2 as long as expected.
// One device alone on its host probes alone: no slowdown.
TEST(SpeedProbeDrifts, DevicesProbingTogetherAreExpectedTheHostsSharedCoreSlowdown) {
  Schedule s = TwoProbedDevices();
  s.mutable_cluster()->mutable_hosts(0)->set_shared_core_slowdown(1.2);
  const Timeline measured = Measured(R"pb(
    speed_probes { device: 0 step: 0 cpu_ns: 200000 }
    speed_probes { device: 1 step: 0 cpu_ns: 120000 }
  )pb");
  absl::StatusOr<std::vector<double>> drifts = SpeedProbeDrifts(s, measured);
  ASSERT_TRUE(drifts.ok()) << drifts.status();
  EXPECT_DOUBLE_EQ((*drifts)[0], 1 / 1.2);
  EXPECT_DOUBLE_EQ((*drifts)[1], 1.0);

  // Device 1 on a host of its own: both probe alone.
  Host* other = s.mutable_cluster()->add_hosts();
  other->set_name("g");
  other->set_cores(2);
  other->set_shared_core_slowdown(1.2);
  s.mutable_cluster()->mutable_devices(1)->set_host("g");
  drifts = SpeedProbeDrifts(s, measured);
  ASSERT_TRUE(drifts.ok()) << drifts.status();
  EXPECT_DOUBLE_EQ((*drifts)[0], 1.0);
  EXPECT_DOUBLE_EQ((*drifts)[1], 1.2);
}

TEST(ProbedComputeScales, ASampleOfADeviceTheScheduleLacksIsAnError) {
  const Timeline measured = Measured(R"pb(speed_probes { device: 2 step: 4 cpu_ns: 5 })pb");
  absl::StatusOr<std::vector<double>> scales = ProbedComputeScales(TwoDevices(), measured);
  ASSERT_FALSE(scales.ok());
  EXPECT_EQ(scales.status().message(),
            "a speed probe sample of step 4 names device 2; schedule 'two' has devices 0..1");
}

}  // namespace
}  // namespace zosched
