#include "schedule/timeline_intervals.h"

#include <string>

#include "gtest/gtest.h"
#include "schedule/timeline_test_fixtures.h"

namespace zosched {
namespace {

TEST(UnionNs, EmptyIsZero) { EXPECT_EQ(UnionNs({}), 0); }

TEST(UnionNs, SingleInterval) { EXPECT_EQ(UnionNs({{10, 25}}), 15); }

TEST(UnionNs, EmptyIntervalsCountZero) {
  EXPECT_EQ(UnionNs({{5, 5}}), 0);
  EXPECT_EQ(UnionNs({{5, 5}, {0, 10}}), 10);
}

TEST(UnionNs, OverlappingCountOnce) {
  EXPECT_EQ(UnionNs({{0, 100}, {50, 150}}), 150);
  EXPECT_EQ(UnionNs({{0, 100}, {20, 30}}), 100);  // nested
  EXPECT_EQ(UnionNs({{0, 100}, {0, 100}}), 100);  // identical
}

TEST(UnionNs, TouchingCountOnce) {
  EXPECT_EQ(UnionNs({{0, 100}, {100, 200}}), 200);
}

TEST(UnionNs, DisjointAdd) {
  EXPECT_EQ(UnionNs({{0, 10}, {20, 25}, {100, 200}}), 115);
}

TEST(UnionNs, UnsortedInput) {
  EXPECT_EQ(UnionNs({{300, 400}, {0, 100}, {50, 120}, {400, 450}}), 270);
}

TEST(UnionNs, NegativeTimes) { EXPECT_EQ(UnionNs({{-50, 0}, {-10, 20}}), 70); }

Schedule TwoOpSchedule() {
  Schedule s;
  Op* a = s.add_ops();
  a->set_id(1);
  a->set_name("fwd+ block 0");
  a->set_device(0);
  a->set_stream("compute");
  Op* b = s.add_ops();
  b->set_id(7);
  b->set_name("h2d block 1");
  b->set_device(1);
  b->set_stream("h2d");
  return s;
}

OpInterval MakeOpInterval(int64_t op_id, int32_t device, const std::string& stream,
                    int32_t step, int64_t start_ns, int64_t end_ns) {
  OpInterval i;
  i.set_op_id(op_id);
  i.set_device(device);
  i.set_stream(stream);
  i.set_step(step);
  i.set_start_ns(start_ns);
  i.set_end_ns(end_ns);
  return i;
}

// CheckOpInterval of `interval` against TwoOpSchedule().
absl::Status CheckAgainstTwoOps(const OpInterval& interval) {
  const Schedule s = TwoOpSchedule();
  return CheckOpInterval(OpsById(s), interval);
}

TEST(OpsById, MapsEachOpToItself) {
  const Schedule s = TwoOpSchedule();
  const auto ops = OpsById(s);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops.at(1), &s.ops(0));
  EXPECT_EQ(ops.at(7), &s.ops(1));
  EXPECT_TRUE(OpsById(Schedule()).empty());
}

TEST(CheckOpInterval, AcceptsAMatchingInterval) {
  EXPECT_TRUE(CheckAgainstTwoOps(MakeOpInterval(1, 0, "compute", 0, 0, 100)).ok());
  EXPECT_TRUE(CheckAgainstTwoOps(MakeOpInterval(7, 1, "h2d", 3, 50, 50)).ok());
}

TEST(CheckOpInterval, RejectsAnOpIdTheScheduleLacks) {
  const absl::Status st = CheckAgainstTwoOps(MakeOpInterval(99, 0, "compute", 2, 0, 1));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "timeline step 2 has op id 99, which the schedule lacks");
}

TEST(CheckOpInterval, RejectsAnotherDevice) {
  const absl::Status st = CheckAgainstTwoOps(MakeOpInterval(7, 0, "h2d", 1, 0, 1));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "timeline step 1 has op 7 on device 0 stream 'h2d', but the "
            "schedule puts op 7 'h2d block 1' on device 1 stream 'h2d'");
}

TEST(CheckOpInterval, RejectsAnotherStream) {
  const absl::Status st = CheckAgainstTwoOps(MakeOpInterval(1, 0, "d2h", 0, 0, 1));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(st.message(), "op 1 'fwd+ block 0' on device 0 stream 'compute'"))
      << st;
  EXPECT_TRUE(Contains(st.message(), "on device 0 stream 'd2h'")) << st;
}

TEST(CheckOpInterval, RejectsAnIntervalEndingBeforeItStarts) {
  const absl::Status st = CheckAgainstTwoOps(MakeOpInterval(1, 0, "compute", 4, 200, 150));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "timeline step 4: op 1 'fwd+ block 0' ends (150 ns) before it "
            "starts (200 ns)");
}

}  // namespace
}  // namespace zosched
