#include "schedule/timeline_metrics.h"

#include <string>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "schedule/timeline_test_fixtures.h"

namespace zosched {
namespace {

// Device 0 streams blocks through its host link and gathers over the peer
// link; device 1 only computes and gathers.
Schedule TinySchedule() {
  return ScheduleWithDevices({{COMPUTE, H2D, D2H, COLLECTIVE, PEER}, {COMPUTE, COLLECTIVE}},
                             R"pb(
  name: "tiny"
  training { batch_size: 16 seq_len: 128 }
  buffers { name: "host0/params" device: -1 size_bytes: 1000 }
  buffers { name: "d0/slot" device: 0 size_bytes: 300 }
  buffers { name: "d0/act" device: 0 size_bytes: 50 }
  buffers { name: "d1/slot" device: 1 size_bytes: 200 }
  ops { id: 1 name: "fwd+ block 0" device: 0 stream: "compute" compute { kind: BLOCK_FORWARD } }
  ops { id: 2 name: "fwd- block 0" device: 0 stream: "compute" compute { kind: BLOCK_FORWARD } }
  ops { id: 3 name: "h2d block 1" device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE } }
  ops { id: 4 name: "d2h block 0" device: 0 stream: "d2h" copy { direction: DEVICE_TO_HOST } }
  ops { id: 5 name: "all-gather" device: 0 stream: "collective"
        collective { kind: ALL_GATHER key: "ag" participants: [0, 1] } }
  ops { id: 6 name: "to gpu1" device: 0 stream: "peer"
        copy { direction: DEVICE_TO_DEVICE peer_device: 1 } }
  ops { id: 7 name: "fwd+ block 0" device: 1 stream: "compute" compute { kind: BLOCK_FORWARD } }
  ops { id: 8 name: "all-gather" device: 1 stream: "collective"
        collective { kind: ALL_GATHER key: "ag" participants: [0, 1] } }
)pb");
}

// The metrics of step `step` of `timeline` (a Timeline textproto) of
// TinySchedule().
absl::StatusOr<StepMetrics> MetricsOfStep(int step, absl::string_view timeline) {
  return ComputeStepMetrics(TinySchedule(), ParseOrFail<Timeline>(timeline), step);
}

TEST(ComputeStepMetrics, PartialOverlapGivesExactOverlapExposedAndIdle) {
  // Device 0: compute [100, 700); host link [0, 200) and [600, 900); no peer
  // traffic. Device 1 spans the step [0, 1000).
  absl::StatusOr<StepMetrics> m = MetricsOfStep(0, R"pb(
    source: PREDICTED
    ops { op_id: 3 device: 0 stream: "h2d" start_ns: 0 end_ns: 200 }
    ops { op_id: 1 device: 0 stream: "compute" start_ns: 100 end_ns: 400 }
    ops { op_id: 2 device: 0 stream: "compute" start_ns: 400 end_ns: 700 }
    ops { op_id: 4 device: 0 stream: "d2h" start_ns: 600 end_ns: 900 }
    ops { op_id: 7 device: 1 stream: "compute" start_ns: 0 end_ns: 1000 }
  )pb");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->step, 0);
  EXPECT_EQ(m->step_ns, 1000);
  EXPECT_DOUBLE_EQ(m->tokens_per_s, 16.0 * 128 / 1e-6);
  ASSERT_EQ(m->devices.size(), 2u);
  const DeviceMetrics& d0 = m->devices[0];
  EXPECT_EQ(d0.device, 0);
  EXPECT_EQ(d0.cluster_device, "gpu0");
  EXPECT_EQ(d0.compute_ns, 600);
  EXPECT_EQ(d0.comm_ns, 500);
  EXPECT_EQ(d0.overlap_ns, 200);  // [100, 200) and [600, 700)
  EXPECT_DOUBLE_EQ(d0.overlap, 0.4);
  EXPECT_EQ(d0.exposed_comm_ns, 300);  // [0, 100) and [700, 900)
  EXPECT_EQ(d0.idle_ns, 100);          // [900, 1000)
  EXPECT_EQ(d0.host_link_ns, 500);
  EXPECT_EQ(d0.peer_link_ns, 0);
  EXPECT_EQ(d0.binding, BindingResource::kCompute);
  EXPECT_EQ(d0.memory_bytes, 350);  // host buffers are not device memory
  const DeviceMetrics& d1 = m->devices[1];
  EXPECT_EQ(d1.compute_ns, 1000);
  EXPECT_EQ(d1.comm_ns, 0);
  EXPECT_DOUBLE_EQ(d1.overlap, 0);
  EXPECT_EQ(d1.idle_ns, 0);
  EXPECT_EQ(d1.memory_bytes, 200);
  EXPECT_EQ(m->binding, BindingResource::kCompute);
}

TEST(ComputeStepMetrics, OverlappingIntervalsOnTwoStreamsCountOnce) {
  // Peer link: the all-gather [100, 400) and the peer copy [300, 500) overlap
  // on two streams: [100, 500) once. Host link: [400, 600).
  absl::StatusOr<StepMetrics> m = MetricsOfStep(0, R"pb(
    ops { op_id: 5 device: 0 stream: "collective" start_ns: 100 end_ns: 400 }
    ops { op_id: 6 device: 0 stream: "peer" start_ns: 300 end_ns: 500 }
    ops { op_id: 3 device: 0 stream: "h2d" start_ns: 400 end_ns: 600 }
    ops { op_id: 1 device: 0 stream: "compute" start_ns: 0 end_ns: 50 }
  )pb");
  ASSERT_TRUE(m.ok()) << m.status();
  const DeviceMetrics& d0 = m->devices[0];
  EXPECT_EQ(d0.peer_link_ns, 400);
  EXPECT_EQ(d0.host_link_ns, 200);
  EXPECT_EQ(d0.comm_ns, 500);  // [100, 600), not 300 + 200 + 200
  EXPECT_EQ(d0.overlap_ns, 0);
  EXPECT_EQ(d0.exposed_comm_ns, 500);
  EXPECT_EQ(d0.idle_ns, 600 - 50 - 500);  // [50, 100)
  EXPECT_EQ(d0.binding, BindingResource::kPeerLink);
  EXPECT_EQ(m->binding, BindingResource::kPeerLink);
}

TEST(ComputeStepMetrics, BindingPrefersComputeThenHostLinkOnTies) {
  // Device 0: compute 100, host link 300, peer link 300: the host link binds.
  // Device 1: compute 200. The step is bound by device 0's host link.
  absl::StatusOr<StepMetrics> m = MetricsOfStep(0, R"pb(
    ops { op_id: 1 device: 0 stream: "compute" start_ns: 0 end_ns: 100 }
    ops { op_id: 3 device: 0 stream: "h2d" start_ns: 0 end_ns: 300 }
    ops { op_id: 5 device: 0 stream: "collective" start_ns: 0 end_ns: 300 }
    ops { op_id: 7 device: 1 stream: "compute" start_ns: 0 end_ns: 300 }
  )pb");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->devices[0].binding, BindingResource::kHostLink);
  EXPECT_EQ(m->devices[1].binding, BindingResource::kCompute);
  // Both devices are busy 300 ns at most: the lower device id wins.
  EXPECT_EQ(m->binding, BindingResource::kHostLink);
  EXPECT_STREQ(BindingResourceName(m->binding), "host link");
}

TEST(ComputeStepMetrics, SelectsTheStepOfAMultiStepTimeline) {
  // Step 1 spans its StepInterval [2000, 3500); op 4 runs past its end and is
  // clipped to it.
  absl::StatusOr<StepMetrics> m = MetricsOfStep(1, R"pb(
    source: MEASURED
    steps { step: 0 start_ns: 0 end_ns: 1000 }
    steps { step: 1 start_ns: 2000 end_ns: 3500 }
    ops { op_id: 1 device: 0 stream: "compute" step: 0 start_ns: 0 end_ns: 900 }
    ops { op_id: 1 device: 0 stream: "compute" step: 1 start_ns: 2100 end_ns: 2500 }
    ops { op_id: 2 device: 0 stream: "compute" step: 1 start_ns: 2500 end_ns: 3000 }
    ops { op_id: 4 device: 0 stream: "d2h" step: 1 start_ns: 2900 end_ns: 3600 }
  )pb");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->step, 1);
  EXPECT_EQ(m->step_ns, 1500);
  const DeviceMetrics& d0 = m->devices[0];
  EXPECT_EQ(d0.compute_ns, 900);
  EXPECT_EQ(d0.comm_ns, 600);  // [2900, 3500)
  EXPECT_EQ(d0.overlap_ns, 100);
  EXPECT_EQ(d0.exposed_comm_ns, 500);
  EXPECT_EQ(d0.idle_ns, 100);  // [2000, 2100)
  EXPECT_EQ(m->devices[1].idle_ns, 1500);
}

TEST(ComputeStepMetrics, RejectsAnOpIdTheScheduleLacks) {
  absl::StatusOr<StepMetrics> m = MetricsOfStep(0, R"pb(
    ops { op_id: 1 device: 0 stream: "compute" start_ns: 0 end_ns: 100 }
    ops { op_id: 99 device: 0 stream: "compute" start_ns: 100 end_ns: 200 }
  )pb");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("op id 99"), std::string::npos) << m.status();
}

TEST(ComputeStepMetrics, RejectsAnOpOnAnotherStreamThanScheduled) {
  absl::StatusOr<StepMetrics> m = MetricsOfStep(0, R"pb(
    ops { op_id: 3 device: 0 stream: "d2h" start_ns: 0 end_ns: 100 }
  )pb");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("op 3 'h2d block 1' on device 0 stream 'h2d'"),
            std::string::npos)
      << m.status();
}

TEST(ComputeStepMetrics, RejectsAStepWithoutOps) {
  absl::StatusOr<StepMetrics> m = MetricsOfStep(2, R"pb(
    steps { step: 2 start_ns: 0 end_ns: 100 }
    ops { op_id: 1 device: 0 stream: "compute" start_ns: 0 end_ns: 100 }
  )pb");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("no op of step 2"), std::string::npos)
      << m.status();
}

}  // namespace
}  // namespace zosched
