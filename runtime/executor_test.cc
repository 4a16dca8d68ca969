#include "runtime/executor.h"

#include <atomic>
#include <map>
#include <thread>

#include "base/textproto.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

// Runs every op by sleeping for `flops` microseconds; records the order in
// which ops finish and fails the op named "fail".
class FakeBackend : public Backend {
 public:
  absl::Status Copy(const Op& op) override { return Run(op); }
  absl::Status Collective(const Op& op) override { return Run(op); }
  absl::Status Compute(const Op& op, const StepInputs& inputs) override {
    last_step = inputs.step;
    return Run(op);
  }
  absl::Status Run(const Op& op) {
    const int64_t us = op.has_compute() ? op.compute().flops()
                                        : (op.has_copy() ? op.copy().bytes() : 0);
    std::this_thread::sleep_for(std::chrono::microseconds(us));
    if (op.name() == "fail") return absl::InternalError("injected failure");
    std::lock_guard<std::mutex> lock(mu);
    finished.push_back(op.id());
    return absl::OkStatus();
  }
  std::mutex mu;
  std::vector<int64_t> finished;
  std::atomic<int64_t> last_step{-1};
};

Schedule Parse(const std::string& text) {
  Schedule s;
  absl::Status status = ParseTextProto(text, "inline", &s);
  EXPECT_TRUE(status.ok()) << status;
  return s;
}

constexpr char kDevices[] = R"pb(
  devices {
    id: 0 cluster_device: "cpu0"
    streams { name: "compute" kind: COMPUTE }
    streams { name: "h2d" kind: H2D }
    streams { name: "d2h" kind: D2H }
  }
  devices { id: 1 cluster_device: "cpu1" streams { name: "compute" kind: COMPUTE } }
)pb";

int64_t IndexOf(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) - v.begin();
}

TEST(Executor, EdgesOrderStreamsAndStreamsRunConcurrently) {
  // h2d: 1 (20 ms) then 2 (1 ms). compute: 3 waits for 1; 4 waits for 2.
  // d2h: 5 (1 ms) waits for nothing and must finish first.
  Schedule s = Parse(std::string(kDevices) + R"pb(
    ops { id: 1 device: 0 stream: "h2d" copy { bytes: 20000 } }
    ops { id: 2 device: 0 stream: "h2d" copy { bytes: 1000 } }
    ops { id: 3 device: 0 stream: "compute" compute { flops: 1000 } }
    ops { id: 4 device: 0 stream: "compute" compute { flops: 1000 } }
    ops { id: 5 device: 0 stream: "d2h" copy { bytes: 1000 } }
    ops { id: 6 device: 1 stream: "compute" compute { flops: 1 } }
    edges { from: 1 to: 3 }
    edges { from: 2 to: 4 }
  )pb");
  FakeBackend backend;
  auto executor = Executor::Create(s, 0, &backend, Executor::Clock::now());
  ASSERT_TRUE(executor.ok()) << executor.status();
  for (int64_t step = 0; step < 3; ++step) {
    StepInputs inputs;
    inputs.step = step;
    ASSERT_TRUE((*executor)->RunStep(inputs).ok());
    const std::vector<int64_t>& f = backend.finished;
    ASSERT_EQ(f.size(), 5u * (step + 1));  // device 1's op is not ours
    const std::vector<int64_t> this_step(f.end() - 5, f.end());
    EXPECT_EQ(this_step[0], 5) << "d2h overlaps the long upload";
    EXPECT_LT(IndexOf(this_step, 1), IndexOf(this_step, 3));
    EXPECT_LT(IndexOf(this_step, 2), IndexOf(this_step, 4));
    EXPECT_LT(IndexOf(this_step, 3), IndexOf(this_step, 4));
  }
  EXPECT_EQ(backend.last_step.load(), 2);
  // Intervals: 5 per step, each inside its step, end >= start.
  const auto& intervals = (*executor)->intervals();
  ASSERT_EQ(intervals.size(), 15u);
  std::map<int64_t, OpInterval> step1;
  for (const OpInterval& i : intervals) {
    EXPECT_LE(i.start_ns(), i.end_ns());
    if (i.step() == 1) step1[i.op_id()] = i;
  }
  EXPECT_GE(step1[3].start_ns(), step1[1].end_ns());
  EXPECT_LT(step1[5].start_ns(), step1[1].end_ns());  // overlap across streams
  ASSERT_EQ((*executor)->steps().size(), 3u);
}

TEST(Executor, AFailingOpStopsTheOtherStreamsAndIsReported) {
  Schedule s = Parse(std::string(kDevices) + R"pb(
    ops { id: 1 name: "fail" device: 0 stream: "h2d" copy { bytes: 1000 } }
    ops { id: 2 name: "waits" device: 0 stream: "compute" compute { flops: 1 } }
    ops { id: 3 name: "after" device: 0 stream: "h2d" copy { bytes: 1 } }
    edges { from: 1 to: 2 }
  )pb");
  FakeBackend backend;
  auto executor = Executor::Create(s, 0, &backend, Executor::Clock::now());
  ASSERT_TRUE(executor.ok());
  StepInputs inputs;
  absl::Status status = (*executor)->RunStep(inputs);
  ASSERT_EQ(status.code(), absl::StatusCode::kInternal) << status;
  EXPECT_NE(status.message().find("device 0 op 1 'fail': injected failure"), std::string::npos)
      << status;
  EXPECT_TRUE(backend.finished.empty());  // neither the waiter nor the next op ran
  inputs.step = 1;
  EXPECT_FALSE((*executor)->RunStep(inputs).ok());  // the executor stays failed
}

TEST(Executor, RejectsEdgesAcrossDevices) {
  Schedule s = Parse(std::string(kDevices) + R"pb(
    ops { id: 1 device: 0 stream: "compute" compute { flops: 1 } }
    ops { id: 2 device: 1 stream: "compute" compute { flops: 1 } }
    edges { from: 2 to: 1 }
  )pb");
  FakeBackend backend;
  auto executor = Executor::Create(s, 0, &backend, Executor::Clock::now());
  ASSERT_EQ(executor.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(executor.status().message().find("crosses devices"), std::string::npos);
}

}  // namespace
}  // namespace zosched
