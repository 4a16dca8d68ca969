#include "schedule/chrome_trace.h"

#include <string>

#include "gtest/gtest.h"
#include "schedule/timeline_test_fixtures.h"

namespace zosched {
namespace {

Schedule TinySchedule() {
  return ScheduleWithDevices({{COMPUTE, H2D, COLLECTIVE}, {COLLECTIVE}}, R"pb(
  name: "tiny"
  ops { id: 1 name: "fwd+ \"block\" 0\\1\n" device: 0 stream: "compute"
        compute { kind: BLOCK_FORWARD flops: 123456789012 bytes_accessed: 400 } }
  ops { id: 2 name: "h2d block 1" device: 0 stream: "h2d"
        copy { direction: HOST_TO_DEVICE bytes: 2048 link_class: PCIE } }
  ops { id: 3 name: "all-gather" device: 0 stream: "collective"
        collective { kind: ALL_GATHER key: "ag b1" participants: [0, 1] bytes: 4096 } }
  ops { id: 4 name: "all-gather" device: 1 stream: "collective"
        collective { kind: ALL_GATHER key: "ag b1" participants: [0, 1] bytes: 4096 } }
)pb");
}

constexpr char kPredicted[] = R"pb(
  source: PREDICTED
  ops { op_id: 2 device: 0 stream: "h2d" start_ns: 0 end_ns: 1500 }
  ops { op_id: 1 device: 0 stream: "compute" start_ns: 1500 end_ns: 1234567 }
  ops { op_id: 3 device: 0 stream: "collective" start_ns: 1500 end_ns: 2000 }
  ops { op_id: 4 device: 1 stream: "collective" start_ns: 1500 end_ns: 2000 }
)pb";

constexpr char kMeasured[] = R"pb(
  source: MEASURED
  ops { op_id: 2 device: 0 stream: "h2d" step: 3 start_ns: 7 end_ns: 9 }
)pb";

int Count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos;
       at = text.find(part, at + part.size())) {
    ++n;
  }
  return n;
}

// Brackets and braces outside string literals nest properly and close.
bool Balanced(const std::string& json) {
  std::string open;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        return false;  // raw control characters are not allowed in strings
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      open += c;
    } else if (c == '}' || c == ']') {
      if (open.empty() || open.back() != (c == '}' ? '{' : '[')) return false;
      open.pop_back();
    }
  }
  return open.empty() && !in_string;
}

TEST(ChromeTraceJson, WritesProcessesThreadsAndCompleteEvents) {
  const Schedule s = TinySchedule();
  const Timeline predicted = ParseOrFail<Timeline>(kPredicted);
  absl::StatusOr<std::string> json = ChromeTraceJson(s, {&predicted});
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_TRUE(Balanced(*json)) << *json;
  EXPECT_EQ(json->rfind("{\"traceEvents\":[", 0), 0u) << *json;
  EXPECT_TRUE(Contains(*json, R"j("displayTimeUnit":"ns"})j")) << *json;

  EXPECT_TRUE(Contains(
      *json,
      R"j({"ph":"M","pid":0,"tid":0,"name":"process_name","args":{"name":"predicted: device 0 (gpu0)"}})j"))
      << *json;
  EXPECT_TRUE(Contains(
      *json,
      R"j({"ph":"M","pid":1,"tid":0,"name":"process_sort_index","args":{"sort_index":1}})j"))
      << *json;
  EXPECT_TRUE(Contains(
      *json,
      R"j({"ph":"M","pid":0,"tid":2,"name":"thread_name","args":{"name":"collective"}})j"))
      << *json;
  EXPECT_TRUE(Contains(
      *json,
      R"j({"ph":"M","pid":0,"tid":2,"name":"thread_sort_index","args":{"sort_index":2}})j"))
      << *json;
  EXPECT_EQ(Count(*json, R"j("name":"thread_name")j"), 4);
  EXPECT_EQ(Count(*json, R"j("ph":"X")j"), 4);

  // The name's quote, backslash and newline are escaped; times are
  // microseconds with three decimals.
  EXPECT_TRUE(Contains(
      *json,
      R"j({"ph":"X","pid":0,"tid":0,"name":"fwd+ \"block\" 0\\1\n","cat":"compute",)j"
      R"j("ts":1.500,"dur":1233.067,"args":{"op_id":1,"step":0,)j"
      R"j("flops":123456789012,"bytes_accessed":400,"kind":"BLOCK_FORWARD"}})j"))
      << *json;
  EXPECT_TRUE(Contains(
      *json,
      R"j("cat":"copy","ts":0.000,"dur":1.500,"args":{"op_id":2,"step":0,)j"
      R"j("bytes":2048,"direction":"HOST_TO_DEVICE","link_class":"PCIE"}})j"))
      << *json;
  EXPECT_TRUE(Contains(
      *json,
      R"j({"ph":"X","pid":1,"tid":0,"name":"all-gather","cat":"collective",)j"
      R"j("ts":1.500,"dur":0.500,"args":{"op_id":4,"step":0,)j"
      R"j("bytes":4096,"kind":"ALL_GATHER","key":"ag b1","participants":[0,1]}})j"))
      << *json;
}

TEST(ChromeTraceJson, TwoTimelinesGiveTwoLabelledProcessGroups) {
  const Schedule s = TinySchedule();
  const Timeline predicted = ParseOrFail<Timeline>(kPredicted);
  const Timeline measured = ParseOrFail<Timeline>(kMeasured);
  absl::StatusOr<std::string> json = ChromeTraceJson(s, {&predicted, &measured});
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_TRUE(Balanced(*json)) << *json;
  EXPECT_EQ(Count(*json, R"j("name":"process_name")j"), 4);
  EXPECT_TRUE(Contains(*json, R"j("pid":0,"tid":0,"name":"process_name","args":{"name":"predicted: device 0 (gpu0)"})j"));
  EXPECT_TRUE(Contains(*json, R"j("pid":1,"tid":0,"name":"process_name","args":{"name":"predicted: device 1 (gpu1)"})j"));
  EXPECT_TRUE(Contains(*json, R"j("pid":1000,"tid":0,"name":"process_name","args":{"name":"measured: device 0 (gpu0)"})j"));
  EXPECT_TRUE(Contains(*json, R"j("pid":1001,"tid":0,"name":"process_name","args":{"name":"measured: device 1 (gpu1)"})j"));
  EXPECT_TRUE(Contains(
      *json,
      R"j({"ph":"X","pid":1000,"tid":1,"name":"h2d block 1","cat":"copy","ts":0.007,"dur":0.002,)j"
      R"j("args":{"op_id":2,"step":3,)j"))
      << *json;
}

TEST(ChromeTraceJson, EscapesControlCharactersInLabels) {
  Schedule s = TinySchedule();
  s.mutable_devices(1)->set_cluster_device(std::string("gpu\x01\t1"));
  const Timeline measured = ParseOrFail<Timeline>(kMeasured);
  absl::StatusOr<std::string> json = ChromeTraceJson(s, {&measured});
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_TRUE(Balanced(*json)) << *json;
  EXPECT_TRUE(Contains(*json, R"j("measured: device 1 (gpu\u0001\t1)")j")) << *json;
}

TEST(ChromeTraceJson, RejectsAnOpTheScheduleLacks) {
  const Schedule s = TinySchedule();
  const Timeline t = ParseOrFail<Timeline>(R"pb(
    source: MEASURED
    ops { op_id: 42 device: 0 stream: "compute" step: 1 start_ns: 0 end_ns: 1 }
  )pb");
  absl::StatusOr<std::string> json = ChromeTraceJson(s, {&t});
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(std::string(json.status().message()),
                       "measured timeline, step 1: op id 42"))
      << json.status();
}

}  // namespace
}  // namespace zosched
