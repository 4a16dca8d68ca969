// A run's compute costs as device scales: the CPU time a device's compute
// ops took over the cost model's figures, over all measured steps; devices
// without CPU times (GPU runs) get none; an interval naming an op the
// schedule lacks is an error; the scales land on the right cluster devices.
#include "sim/run_compute_scales.h"

#include <string>

#include "base/textproto.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

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
  Timeline measured;
  ASSERT_TRUE(ParseTextProto(R"pb(
    ops { op_id: 1 device: 0 step: 2 cpu_ns: 1500000 }
    ops { op_id: 2 device: 0 step: 2 cpu_ns: 300000 }
    ops { op_id: 1 device: 0 step: 3 cpu_ns: 1100000 }
    ops { op_id: 2 device: 0 step: 3 cpu_ns: 200000 }
    ops { op_id: 4 device: 0 step: 3 cpu_ns: 0 }
    ops { op_id: 3 device: 1 step: 2 }
  )pb", "inline", &measured).ok());
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
  Timeline measured;
  ASSERT_TRUE(ParseTextProto(R"pb(ops { op_id: 3 device: 1 step: 0 cpu_ns: 2000000 })pb",
                             "inline", &measured).ok());
  absl::StatusOr<std::vector<double>> scales = RunComputeScales(s, measured);
  ASSERT_TRUE(scales.ok()) << scales.status();
  EXPECT_DOUBLE_EQ((*scales)[1], 2.0);  // against the table's 1 ms, not 1.3 ms
}

TEST(RunComputeScales, AnOpTheScheduleLacksIsAnError) {
  Timeline measured;
  ASSERT_TRUE(ParseTextProto(R"pb(ops { op_id: 9 device: 0 cpu_ns: 5 })pb", "inline",
                             &measured).ok());
  absl::StatusOr<std::vector<double>> scales = RunComputeScales(TwoDevices(), measured);
  ASSERT_FALSE(scales.ok());
  EXPECT_EQ(scales.status().message(), "measured op 9 on device 0 is not in schedule 'two'");
}

}  // namespace
}  // namespace zosched
