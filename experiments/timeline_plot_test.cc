#include "experiments/timeline_plot.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "schedule/timeline_test_fixtures.h"

namespace zosched {
namespace {

Schedule TinySchedule() {
  return ScheduleWithDevices({{COMPUTE, H2D, D2H, COLLECTIVE}, {COMPUTE, COLLECTIVE}}, R"pb(
  name: "tiny"
  ops { id: 1 name: "h2d block 0" device: 0 stream: "h2d"
        copy { direction: HOST_TO_DEVICE bytes: 2048 } }
  ops { id: 2 name: "update block 0" device: 0 stream: "compute"
        compute { kind: UPDATE } }
  ops { id: 3 name: "fwd+ block 0" device: 0 stream: "compute"
        compute { kind: BLOCK_FORWARD } }
  ops { id: 4 name: "d2h block 0" device: 0 stream: "d2h"
        copy { direction: DEVICE_TO_HOST bytes: 2048 } }
  ops { id: 5 name: "all-reduce g" device: 0 stream: "collective"
        collective { kind: ALL_REDUCE key: "g" participants: [0, 1] bytes: 8 } }
  ops { id: 6 name: "fwd- block 0" device: 1 stream: "compute"
        compute { kind: BLOCK_FORWARD } }
  ops { id: 7 name: "all-reduce g" device: 1 stream: "collective"
        collective { kind: ALL_REDUCE key: "g" participants: [0, 1] bytes: 8 } }
)pb");
}

// Two steps; step 1 starts at its first op (no StepInterval).
constexpr char kPredicted[] = R"pb(
  source: PREDICTED
  ops { op_id: 1 device: 0 stream: "h2d" step: 0 start_ns: 0 end_ns: 1000000 }
  ops { op_id: 1 device: 0 stream: "h2d" step: 1 start_ns: 5000000 end_ns: 6000000 }
  ops { op_id: 2 device: 0 stream: "compute" step: 1 start_ns: 5000000 end_ns: 5500000 }
  ops { op_id: 3 device: 0 stream: "compute" step: 1 start_ns: 6000000 end_ns: 8000000 }
  ops { op_id: 6 device: 1 stream: "compute" step: 1 start_ns: 6000000 end_ns: 8000000 }
  ops { op_id: 4 device: 0 stream: "d2h" step: 1 start_ns: 8000000 end_ns: 8700000 }
  ops { op_id: 5 device: 0 stream: "collective" step: 1 start_ns: 8000000 end_ns: 8000000 }
  ops { op_id: 7 device: 1 stream: "collective" step: 1 start_ns: 8000000 end_ns: 8000000 }
)pb";

// Step 1 spans its StepInterval, which starts before its first op.
constexpr char kMeasured[] = R"pb(
  source: MEASURED
  steps { step: 1 start_ns: 100000000 end_ns: 110000000 }
  ops { op_id: 1 device: 0 stream: "h2d" step: 1 start_ns: 100500000 end_ns: 101800000 }
  ops { op_id: 2 device: 0 stream: "compute" step: 1 start_ns: 100500000 end_ns: 101000000 }
  ops { op_id: 3 device: 0 stream: "compute" step: 1 start_ns: 101800000 end_ns: 104500000 }
  ops { op_id: 6 device: 1 stream: "compute" step: 1 start_ns: 101900000 end_ns: 104000000 }
  ops { op_id: 4 device: 0 stream: "d2h" step: 1 start_ns: 104500000 end_ns: 105500000 }
  ops { op_id: 5 device: 0 stream: "collective" step: 1 start_ns: 104500000 end_ns: 104600000 }
  ops { op_id: 7 device: 1 stream: "collective" step: 1 start_ns: 104500000 end_ns: 104600000 }
)pb";

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

bool Exists(const std::string& path) {
  struct stat s;
  return stat(path.c_str(), &s) == 0;
}

// Sets PATH for its lifetime (to make gnuplot missing or fake).
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& path) {
    const char* old = std::getenv("PATH");
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    setenv("PATH", path.c_str(), 1);
  }
  ~ScopedPath() {
    if (had_old_) {
      setenv("PATH", old_.c_str(), 1);
    } else {
      unsetenv("PATH");
    }
  }

 private:
  bool had_old_ = false;
  std::string old_;
};

class TimelinePlotTest : public ::testing::Test {
 protected:
  Schedule schedule_ = TinySchedule();
  Timeline predicted_ = ParseOrFail<Timeline>(kPredicted);
  Timeline measured_ = ParseOrFail<Timeline>(kMeasured);
  std::vector<PlotTimeline> both_ = {{&predicted_, "predicted"},
                                     {&measured_, "measured"}};
};

TEST_F(TimelinePlotTest, DrawsPngAndKeepsDataAndScript) {
  const std::string base = ::testing::TempDir() + "/tiny_step1";
  const absl::Status status =
      PlotTimelines(schedule_, both_, 1, "tiny: it's step_1", base + ".png");
  if (absl::IsFailedPrecondition(status)) GTEST_SKIP() << status;
  ASSERT_TRUE(status.ok()) << status;

  const std::string png = ReadFile(base + ".png");
  EXPECT_EQ(png.substr(0, 4), "\x89PNG");
  EXPECT_GT(png.size(), 5000u);

  // One line per op interval of step 1 (7 per timeline), after the comment.
  const std::string dat = ReadFile(base + ".dat");
  std::vector<std::string> lines = absl::StrSplit(dat, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1u + 14u) << dat;
  EXPECT_EQ(lines[0][0], '#');
  // Predicted step 1 starts at its first op (5 ms); measured at its
  // StepInterval (100 ms). Rows: 6 per timeline; h2d is row 1; classes:
  // 2 host->device, 1 update, 0 forward, 3 device->host, 4 collective.
  EXPECT_EQ(lines[1], "0.000000 1.000000 1 2 1");
  EXPECT_EQ(lines[2], "0.000000 0.500000 0 1 2");
  EXPECT_EQ(lines[3], "1.000000 3.000000 0 0 3");
  EXPECT_EQ(lines[4], "1.000000 3.000000 4 0 6");
  EXPECT_EQ(lines[5], "3.000000 3.700000 2 3 4");
  EXPECT_EQ(lines[6], "3.000000 3.000000 3 4 5");
  EXPECT_EQ(lines[8], "0.500000 1.800000 7 2 1");
  EXPECT_EQ(lines[14], "4.500000 4.600000 11 4 7");

  const std::string gp = ReadFile(base + ".gp");
  EXPECT_TRUE(Contains(gp, "set title 'tiny: it''s step_1'")) << gp;
  EXPECT_TRUE(Contains(gp, "noenhanced")) << gp;
  EXPECT_TRUE(Contains(gp, "'predicted d0 compute' 0")) << gp;
  EXPECT_TRUE(Contains(gp, "'predicted d1 collective' 5")) << gp;
  EXPECT_TRUE(Contains(gp, "'measured d0 h2d' 7")) << gp;
  EXPECT_TRUE(Contains(gp, "set terminal pngcairo size 1600,")) << gp;
  EXPECT_TRUE(Contains(gp, "title 'compute forward'")) << gp;
  EXPECT_FALSE(Contains(gp, "title 'other'")) << gp;  // no such op drawn
  // Step ends: predicted at its last op (3.7 ms), measured at its
  // StepInterval's end (10 ms); the x axis reaches the later one.
  EXPECT_TRUE(Contains(gp, "set arrow from first 3.700000, first -0.5 to first "
                           "3.700000, first 5.5")) << gp;
  EXPECT_TRUE(Contains(gp, "set arrow from first 10.000000, first 5.5 to first "
                           "10.000000, first 11.5")) << gp;
  EXPECT_TRUE(Contains(gp, "set xrange [0.000000:10.")) << gp;
}

TEST_F(TimelinePlotTest, ManyOpsDrawQuickly) {
  // The size of a large DistZO2 schedule: 40,000 ops on one stream.
  Schedule schedule;
  ScheduleDevice* device = schedule.add_devices();
  device->add_streams()->set_name("compute");
  Timeline timeline;
  for (int i = 0; i < 40000; ++i) {
    Op* op = schedule.add_ops();
    op->set_id(i);
    op->set_stream("compute");
    op->mutable_compute()->set_kind(i % 2 ? BLOCK_FORWARD : UPDATE);
    OpInterval* interval = timeline.add_ops();
    interval->set_op_id(i);
    interval->set_stream("compute");
    interval->set_start_ns(i * int64_t{1000});
    interval->set_end_ns(i * int64_t{1000} + 900);
  }
  const std::string base = ::testing::TempDir() + "/many";
  const absl::Status status = PlotTimelines(schedule, {{&timeline, "predicted"}}, 0,
                                            "many", base + ".png");
  if (absl::IsFailedPrecondition(status)) GTEST_SKIP() << status;
  ASSERT_TRUE(status.ok()) << status;
  std::vector<std::string> lines =
      absl::StrSplit(ReadFile(base + ".dat"), '\n', absl::SkipEmpty());
  EXPECT_EQ(lines.size(), 1u + 40000u);
  EXPECT_EQ(ReadFile(base + ".png").substr(0, 4), "\x89PNG");
}

TEST_F(TimelinePlotTest, OpMissingFromScheduleIsInvalidArgument) {
  measured_.mutable_ops(3)->set_op_id(99);
  const absl::Status status = PlotTimelines(schedule_, both_, 1, "t",
                                            ::testing::TempDir() + "/missing.png");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_TRUE(Contains(std::string(status.message()), "measured")) << status;
  EXPECT_TRUE(Contains(std::string(status.message()), "op id 99")) << status;
}

TEST_F(TimelinePlotTest, OpOnOtherStreamIsInvalidArgument) {
  predicted_.mutable_ops(2)->set_stream("h2d");
  const absl::Status status = PlotTimelines(schedule_, both_, 1, "t",
                                            ::testing::TempDir() + "/stream.png");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
}

TEST_F(TimelinePlotTest, StepWithoutOpsIsInvalidArgument) {
  const absl::Status status = PlotTimelines(schedule_, both_, 0, "t",
                                            ::testing::TempDir() + "/step0.png");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_TRUE(Contains(std::string(status.message()), "measured")) << status;
}

TEST_F(TimelinePlotTest, BadArgumentsAreInvalidArgument) {
  EXPECT_TRUE(absl::IsInvalidArgument(
      PlotTimelines(schedule_, {}, 1, "t", ::testing::TempDir() + "/none.png")));
  EXPECT_TRUE(absl::IsInvalidArgument(
      PlotTimelines(schedule_, both_, 1, "t", ::testing::TempDir() + "/x.svg")));
}

TEST_F(TimelinePlotTest, UnwritablePathFailsNamingIt) {
  const std::string png = ::testing::TempDir() + "/no_such_dir/plot.png";
  const absl::Status status = PlotTimelines(schedule_, both_, 1, "t", png);
  EXPECT_TRUE(absl::IsNotFound(status)) << status;
  EXPECT_TRUE(Contains(std::string(status.message()), "no_such_dir/plot.dat")) << status;
}

TEST_F(TimelinePlotTest, MissingGnuplotIsFailedPrecondition) {
  const std::string empty_dir = ::testing::TempDir() + "/empty_bin";
  mkdir(empty_dir.c_str(), 0755);
  ScopedPath path(empty_dir);
  const absl::Status status = PlotTimelines(schedule_, both_, 1, "t",
                                            ::testing::TempDir() + "/nognuplot.png");
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_TRUE(Contains(std::string(status.message()), "gnuplot-nox")) << status;
  // The data and the script are written first, for the user to run later.
  EXPECT_TRUE(Exists(::testing::TempDir() + "/nognuplot.dat"));
  EXPECT_TRUE(Exists(::testing::TempDir() + "/nognuplot.gp"));
}

TEST_F(TimelinePlotTest, FailingGnuplotIsInternalWithItsOutput) {
  const std::string bin = ::testing::TempDir() + "/fake_bin";
  mkdir(bin.c_str(), 0755);
  {
    std::ofstream fake(bin + "/gnuplot");
    fake << "#!/bin/sh\necho \"line 7: boom\" >&2\nexit 3\n";
  }
  chmod((bin + "/gnuplot").c_str(), 0755);
  ScopedPath path(bin);
  const absl::Status status = PlotTimelines(schedule_, both_, 1, "t",
                                            ::testing::TempDir() + "/fails.png");
  EXPECT_TRUE(absl::IsInternal(status)) << status;
  EXPECT_TRUE(Contains(std::string(status.message()), "exited with status 3")) << status;
  EXPECT_TRUE(Contains(std::string(status.message()), "line 7: boom")) << status;
}

}  // namespace
}  // namespace zosched
