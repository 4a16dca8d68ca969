#include "schedule/compare_timelines.h"

#include <string>

#include "gtest/gtest.h"
#include "schedule/timeline_test_fixtures.h"

namespace zosched {
namespace {

Schedule TinySchedule() {
  return ScheduleWithDevices({{COMPUTE, H2D}, {COMPUTE, H2D}}, R"pb(
  name: "tiny"
  ops { id: 1 name: "fwd+ block 0" device: 0 stream: "compute" compute {} }
  ops { id: 2 name: "fwd- block 0" device: 0 stream: "compute" compute {} }
  ops { id: 3 name: "h2d block 0" device: 0 stream: "h2d" copy {} }
  ops { id: 4 name: "fwd+ block 0" device: 1 stream: "compute" compute {} }
  ops { id: 5 name: "update" device: 0 stream: "compute" compute {} }
)pb");
}

// Step time 500 (its ops' span); busy: device 0 compute 400, h2d 100;
// device 1 compute 450, h2d 0.
constexpr char kPredicted[] = R"pb(
  source: PREDICTED
  ops { op_id: 3 device: 0 stream: "h2d" start_ns: 0 end_ns: 100 }
  ops { op_id: 1 device: 0 stream: "compute" start_ns: 100 end_ns: 300 }
  ops { op_id: 2 device: 0 stream: "compute" start_ns: 300 end_ns: 500 }
  ops { op_id: 4 device: 1 stream: "compute" start_ns: 0 end_ns: 450 }
)pb";

// Four steps (an even count). Step times 700, 500, 600, 800; busy per step:
//   device 0 compute: 450 (two overlapping ops), 400, 350, 580
//   device 0 h2d:     150, 100, 200, 120
//   device 1 compute: 500, 400, 300, 600
constexpr char kMeasured[] = R"pb(
  source: MEASURED
  steps { step: 0 start_ns: 0 end_ns: 700 }
  steps { step: 2 start_ns: 2000 end_ns: 2600 }
  steps { step: 3 start_ns: 3000 end_ns: 3800 }
  ops { op_id: 3 device: 0 stream: "h2d" step: 0 start_ns: 0 end_ns: 150 }
  ops { op_id: 1 device: 0 stream: "compute" step: 0 start_ns: 150 end_ns: 400 }
  ops { op_id: 2 device: 0 stream: "compute" step: 0 start_ns: 350 end_ns: 600 }
  ops { op_id: 4 device: 1 stream: "compute" step: 0 start_ns: 0 end_ns: 500 }
  ops { op_id: 3 device: 0 stream: "h2d" step: 1 start_ns: 1000 end_ns: 1100 }
  ops { op_id: 1 device: 0 stream: "compute" step: 1 start_ns: 1100 end_ns: 1300 }
  ops { op_id: 2 device: 0 stream: "compute" step: 1 start_ns: 1300 end_ns: 1500 }
  ops { op_id: 4 device: 1 stream: "compute" step: 1 start_ns: 1000 end_ns: 1400 }
  ops { op_id: 3 device: 0 stream: "h2d" step: 2 start_ns: 2000 end_ns: 2200 }
  ops { op_id: 1 device: 0 stream: "compute" step: 2 start_ns: 2200 end_ns: 2400 }
  ops { op_id: 2 device: 0 stream: "compute" step: 2 start_ns: 2400 end_ns: 2550 }
  ops { op_id: 4 device: 1 stream: "compute" step: 2 start_ns: 2000 end_ns: 2300 }
  ops { op_id: 3 device: 0 stream: "h2d" step: 3 start_ns: 3000 end_ns: 3120 }
  ops { op_id: 1 device: 0 stream: "compute" step: 3 start_ns: 3120 end_ns: 3400 }
  ops { op_id: 2 device: 0 stream: "compute" step: 3 start_ns: 3400 end_ns: 3700 }
  ops { op_id: 4 device: 1 stream: "compute" step: 3 start_ns: 3000 end_ns: 3600 }
)pb";

TEST(CompareTimelines, MediansOfStepAndStreamBusyTimes) {
  absl::StatusOr<TimelineComparison> c =
      CompareTimelines(TinySchedule(), ParseOrFail<Timeline>(kPredicted),
                       ParseOrFail<Timeline>(kMeasured));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->predicted_step_ns, 500);
  EXPECT_EQ(c->measured_steps, 4);
  EXPECT_EQ(c->measured_step_ns, 600);  // the lower of 600 and 700
  EXPECT_EQ(c->measured_min_step_ns, 500);
  EXPECT_EQ(c->measured_max_step_ns, 800);
  EXPECT_EQ(c->measured_period_ns, 1000);  // starts 0, 1000, 2000, 3000
  EXPECT_DOUBLE_EQ(c->step_error, (500.0 - 600) / 600);

  ASSERT_EQ(c->streams.size(), 4u);
  struct Expected {
    int device;
    const char* stream;
    int64_t predicted_busy_ns;
    int64_t measured_busy_ns;
    double error;
  };
  const Expected expected[] = {
      {0, "compute", 400, 400, 0},
      {0, "h2d", 100, 120, (100.0 - 120) / 120},
      {1, "compute", 450, 400, (450.0 - 400) / 400},
      {1, "h2d", 0, 0, 0},  // no ops: no error
  };
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(c->streams[i].device, expected[i].device);
    EXPECT_EQ(c->streams[i].stream, expected[i].stream);
    EXPECT_EQ(c->streams[i].predicted_busy_ns, expected[i].predicted_busy_ns);
    EXPECT_EQ(c->streams[i].measured_busy_ns, expected[i].measured_busy_ns);
    EXPECT_DOUBLE_EQ(c->streams[i].error, expected[i].error);
  }
}

TEST(CompareTimelines, RejectsAMeasuredStepMissingAnOp) {
  Timeline measured = ParseOrFail<Timeline>(kMeasured);
  measured.mutable_ops()->DeleteSubrange(6, 1);  // op 2 of step 1
  absl::StatusOr<TimelineComparison> c = CompareTimelines(
      TinySchedule(), ParseOrFail<Timeline>(kPredicted), measured);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("measured step 1 lacks op 2"),
            std::string::npos)
      << c.status();
}

TEST(CompareTimelines, RejectsAMeasuredStepWithAnExtraOp) {
  Timeline measured = ParseOrFail<Timeline>(kMeasured);
  *measured.add_ops() = ParseOrFail<OpInterval>(
      R"pb(op_id: 5 device: 0 stream: "compute" step: 3 start_ns: 3700 end_ns: 3750)pb");
  absl::StatusOr<TimelineComparison> c = CompareTimelines(
      TinySchedule(), ParseOrFail<Timeline>(kPredicted), measured);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find(
                "measured step 3 has op 5, which predicted step 0 lacks"),
            std::string::npos)
      << c.status();
}

TEST(CompareTimelines, RejectsATimelineWithoutOps) {
  absl::StatusOr<TimelineComparison> c =
      CompareTimelines(TinySchedule(), ParseOrFail<Timeline>(kPredicted),
                       ParseOrFail<Timeline>("source: MEASURED"));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("measured timeline has no ops"),
            std::string::npos)
      << c.status();
}

}  // namespace
}  // namespace zosched
