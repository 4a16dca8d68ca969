// The executor's ordering guarantees, proven with a backend whose ops block
// until the test lets them finish: no sleeps, no wall-clock thresholds, so
// a loaded machine can slow the test down but not change its verdict.
#include "runtime/executor.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/textproto.h"
#include "gtest/gtest.h"
#include "runtime/threaded_backend.h"

namespace zosched {
namespace {

// Records "start N" / "end N" for every op N it runs. An op whose id is held
// blocks after its start until Release(id); the op named "fail" fails.
class GatedBackend : public ThreadedBackend {
 public:
  explicit GatedBackend(std::set<int64_t> held = {})
      : ThreadedBackend(/*device=*/0, /*batch_size=*/1, /*seq_len=*/1), held_(std::move(held)) {}
  ~GatedBackend() override { StopStreams(); }

  absl::Status RunCopy(const Op& op) override { return Run(op); }
  absl::Status RunCollective(const Op& op) override { return Run(op); }
  absl::Status RunCompute(const Op& op, const StepInputs& inputs, StepResult* result) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      steps_seen_.insert(inputs.step);
    }
    return Run(op);
  }

  void Release(int64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    held_.erase(id);
    cv_.notify_all();
  }

  // Blocks until `event` ("start 3", "end 5") has been recorded.
  void Await(const std::string& event) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return Position(event) >= 0; });
  }

  char* HostView(int index) const override { return nullptr; }
  absl::Status PullPersistent() override { return absl::OkStatus(); }
  absl::Status PushPersistent() override { return absl::OkStatus(); }

  std::vector<std::string> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  std::set<int64_t> steps_seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return steps_seen_;
  }

 protected:
  // Records `event` (short: ComputeOpReady calls it under the streams' lock).
  void Note(const std::string& event) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(event);
    cv_.notify_all();
  }

 private:
  absl::Status Run(const Op& op) {
    std::unique_lock<std::mutex> lock(mu_);
    events_.push_back(absl::StrCat("start ", op.id()));
    cv_.notify_all();
    if (op.name() == "fail") return absl::InternalError("injected failure");
    cv_.wait(lock, [&] { return held_.count(op.id()) == 0; });
    events_.push_back(absl::StrCat("end ", op.id()));
    cv_.notify_all();
    return absl::OkStatus();
  }
  int Position(const std::string& event) const {
    auto it = std::find(events_.begin(), events_.end(), event);
    return it == events_.end() ? -1 : static_cast<int>(it - events_.begin());
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::set<int64_t> held_;
  std::vector<std::string> events_;
  std::set<int64_t> steps_seen_;
};

// Also records each compute op's turn: "ready" (ComputeOpReady), "take" and
// "give".
class TurnLoggingBackend : public GatedBackend {
 public:
  using GatedBackend::GatedBackend;
  void ComputeOpReady() override { Note("ready"); }
  absl::Status TakeComputeTurn() override {
    Note("take");
    return absl::OkStatus();
  }
  void GiveComputeTurn() override { Note("give"); }
};

// Also records, with the calling thread, when the step is held ("held by
// T") and released ("released by T").
class HoldLoggingBackend : public GatedBackend {
 public:
  using GatedBackend::GatedBackend;
  void StepHeld() override { Note(absl::StrCat("held by ", ThreadName())); }
  void StepReleased() override { Note(absl::StrCat("released by ", ThreadName())); }
  static std::string ThreadName() {
    std::ostringstream name;
    name << std::this_thread::get_id();
    return name.str();
  }
};

int At(const std::vector<std::string>& events, const std::string& event) {
  auto it = std::find(events.begin(), events.end(), event);
  EXPECT_NE(it, events.end()) << event << " never happened";
  return static_cast<int>(it - events.begin());
}

bool Happened(const std::vector<std::string>& events, const std::string& event) {
  return std::find(events.begin(), events.end(), event) != events.end();
}

Schedule Parse(const std::string& text) {
  Schedule s;
  absl::Status status = ParseTextProto(text, "inline", &s);
  EXPECT_TRUE(status.ok()) << status;
  return s;
}

// The inputs of step `step`, the rest left at their defaults.
StepInputs InputsOfStep(int64_t step) {
  StepInputs inputs;
  inputs.step = step;
  return inputs;
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

// h2d: 1 then 2. compute: 3 (waits for 1) then 4 (waits for 2). d2h: 5,
// free. Device 1's op 6 is not this executor's.
constexpr char kOps[] = R"pb(
  ops { id: 1 device: 0 stream: "h2d" copy {} }
  ops { id: 2 device: 0 stream: "h2d" copy {} }
  ops { id: 3 device: 0 stream: "compute" compute {} }
  ops { id: 4 device: 0 stream: "compute" compute {} }
  ops { id: 5 device: 0 stream: "d2h" copy {} }
  ops { id: 6 device: 1 stream: "compute" compute {} }
  edges { from: 1 to: 3 }
  edges { from: 2 to: 4 }
)pb";

TEST(Executor, StreamsRunConcurrentlyWhileEdgesAndStreamOrderHold) {
  const Schedule s = Parse(std::string(kDevices) + kOps);
  GatedBackend backend(/*held=*/{1});
  auto executor = Executor::Create(s, 0, &backend, Executor::Clock::now());
  ASSERT_TRUE(executor.ok()) << executor.status();
  absl::Status status;
  std::thread step([&] { status = (*executor)->RunStep(StepInputs{}).status(); });
  // The d2h stream finishes its op while the upload it does not depend on
  // has started and is held: streams run concurrently.
  backend.Await("start 1");
  backend.Await("end 5");
  std::vector<std::string> events = backend.events();
  EXPECT_FALSE(Happened(events, "end 1"));
  // Whatever waits for op 1 — op 2 behind it on h2d, op 3 by its edge, op 4
  // behind op 3 — has not started.
  for (const char* waiting : {"start 2", "start 3", "start 4"}) {
    EXPECT_FALSE(Happened(events, waiting)) << waiting << " before op 1 ended";
  }
  backend.Release(1);
  step.join();
  ASSERT_TRUE(status.ok()) << status;
  events = backend.events();
  EXPECT_EQ(events.size(), 10u);  // 5 ops of device 0, none of device 1
  EXPECT_LT(At(events, "end 1"), At(events, "start 2"));  // stream order
  EXPECT_LT(At(events, "end 1"), At(events, "start 3"));  // edge
  EXPECT_LT(At(events, "end 2"), At(events, "start 4"));  // edge
  EXPECT_LT(At(events, "end 3"), At(events, "start 4"));  // stream order
  EXPECT_FALSE(Happened(events, "start 6"));
}

// A compute op gets in line the moment it may start, not when its thread
// next runs: op 3 when the record of its upload (op 1) is reached, op 4,
// whose upload (op 2) ended and was recorded while op 3 ran, as op 3
// finishes, before op 3 gives its turn away (devices sharing a core then
// take turns in the order their ops became ready). Op 7, behind op 2's
// record on the upload stream, shows that the record has been reached: op
// 2's end alone does not.
TEST(Executor, EachComputeOpGetsInLineTheMomentItMayStart) {
  const Schedule s = Parse(std::string(kDevices) + kOps +
                           R"pb(ops { id: 7 device: 0 stream: "h2d" copy {} })pb");
  TurnLoggingBackend backend(/*held=*/{3});
  auto executor = Executor::Create(s, 0, &backend, Executor::Clock::now());
  ASSERT_TRUE(executor.ok()) << executor.status();
  absl::Status status;
  std::thread step([&] { status = (*executor)->RunStep(StepInputs{}).status(); });
  backend.Await("start 3");
  backend.Await("end 7");
  backend.Release(3);
  step.join();
  ASSERT_TRUE(status.ok()) << status;
  std::vector<std::string> turns;  // the compute stream's events, in order
  for (const std::string& e : backend.events()) {
    if (e == "ready" || e == "take" || e == "give" || e == "start 3" || e == "end 3" ||
        e == "start 4" || e == "end 4") {
      turns.push_back(e);
    }
  }
  EXPECT_EQ(turns, (std::vector<std::string>{"ready", "take", "start 3", "end 3", "ready", "give",
                                             "take", "start 4", "end 4", "give"}));
  const std::vector<std::string> events = backend.events();
  EXPECT_LT(At(events, "end 1"), At(events, "ready")) << absl::StrJoin(events, ", ");
}

TEST(Executor, StepsRepeatTheScheduleAndRecordIntervalsInOrder) {
  const Schedule s = Parse(std::string(kDevices) + kOps);
  GatedBackend backend;
  auto executor = Executor::Create(s, 0, &backend, Executor::Clock::now());
  ASSERT_TRUE(executor.ok()) << executor.status();
  for (int64_t n = 0; n < 3; ++n) {
    ASSERT_TRUE((*executor)->RunStep(InputsOfStep(n)).ok());
  }
  EXPECT_EQ(backend.steps_seen(), (std::set<int64_t>{0, 1, 2}));
  const std::vector<OpInterval>& intervals = (*executor)->intervals();
  ASSERT_EQ(intervals.size(), 15u);
  ASSERT_EQ((*executor)->steps().size(), 3u);
  std::map<std::pair<int32_t, int64_t>, OpInterval> by_op;
  for (const OpInterval& i : intervals) {
    EXPECT_LE(i.start_ns(), i.end_ns());
    by_op[{i.step(), i.op_id()}] = i;
  }
  for (const StepInterval& step : (*executor)->steps()) {
    const int32_t n = step.step();
    for (int64_t op : {1, 2, 3, 4, 5}) {
      const OpInterval& i = by_op.at({n, op});
      EXPECT_GE(i.start_ns(), step.start_ns()) << "step " << n << " op " << op;
      EXPECT_LE(i.end_ns(), step.end_ns()) << "step " << n << " op " << op;
    }
    // The recorded times respect the edges and stream order too.
    EXPECT_GE(by_op.at({n, 3}).start_ns(), by_op.at({n, 1}).end_ns());
    EXPECT_GE(by_op.at({n, 4}).start_ns(), by_op.at({n, 2}).end_ns());
    EXPECT_GE(by_op.at({n, 4}).start_ns(), by_op.at({n, 3}).end_ns());
    if (n > 0) {
      EXPECT_GE(step.start_ns(), (*executor)->steps()[n - 1].end_ns());
    }
  }
}

TEST(Executor, AFailingOpStopsTheOtherStreamsAndIsReported) {
  const Schedule s = Parse(std::string(kDevices) + R"pb(
    ops { id: 1 name: "fail" device: 0 stream: "h2d" copy {} }
    ops { id: 2 name: "waits" device: 0 stream: "compute" compute {} }
    ops { id: 3 name: "after" device: 0 stream: "h2d" copy {} }
    edges { from: 1 to: 2 }
  )pb");
  GatedBackend backend;
  auto executor = Executor::Create(s, 0, &backend, Executor::Clock::now());
  ASSERT_TRUE(executor.ok());
  const absl::Status status = (*executor)->RunStep(StepInputs{}).status();
  ASSERT_EQ(status.code(), absl::StatusCode::kInternal) << status;
  EXPECT_NE(status.message().find("device 0 op 1 'fail' at step 0: injected failure"), std::string::npos)
      << status;
  // Neither the op waiting for it nor the one behind it ran.
  EXPECT_EQ(backend.events(), std::vector<std::string>{"start 1"});
  StepInputs next;
  next.step = 1;
  EXPECT_FALSE((*executor)->RunStep(next).ok());  // the executor stays failed
  EXPECT_EQ(backend.events(), std::vector<std::string>{"start 1"});
}

TEST(Executor, EnqueueingNeverWaitsForTheDeviceAndTwoStepsFitInFlight) {
  const Schedule s = Parse(std::string(kDevices) + kOps);
  GatedBackend backend(/*held=*/{1});  // step 0's first upload holds everything behind it
  auto executor = Executor::Create(s, 0, &backend, Executor::Clock::now());
  ASSERT_TRUE(executor.ok()) << executor.status();
  ASSERT_TRUE((*executor)->EnqueueStep(InputsOfStep(0)).ok());  // returns with op 1 held
  ASSERT_TRUE((*executor)->EnqueueStep(InputsOfStep(1)).ok());  // the second slot
  EXPECT_TRUE(backend.events().empty());  // the testbed holds them until Start
  ASSERT_TRUE((*executor)->Start().ok());
  backend.Await("start 1");
  EXPECT_FALSE(Happened(backend.events(), "end 1"));
  backend.Release(1);
  for (int64_t n : {0, 1}) {
    absl::StatusOr<Executor::StepOutcome> outcome = (*executor)->FinishStep();
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(outcome->step, n);
  }
  EXPECT_EQ((*executor)->FinishStep().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*executor)->steps().size(), 2u);
}

// The backend hears, on the thread that enqueues and starts the step (the
// rank's main thread, which the CPU backend makes real-time in between),
// that the step is held once it is enqueued, before any op runs, and that
// it is released once Start has let its ops go.
TEST(Executor, TheBackendHearsOnTheCallersThreadWhenTheStepIsHeldAndReleased) {
  const Schedule s = Parse(std::string(kDevices) + kOps);
  HoldLoggingBackend backend;
  auto executor = Executor::Create(s, 0, &backend, Executor::Clock::now());
  ASSERT_TRUE(executor.ok()) << executor.status();
  const std::string me = HoldLoggingBackend::ThreadName();
  ASSERT_TRUE((*executor)->EnqueueStep(InputsOfStep(0)).ok());
  EXPECT_EQ(backend.events(), std::vector<std::string>{"held by " + me});
  ASSERT_TRUE((*executor)->Start().ok());
  ASSERT_TRUE((*executor)->FinishStep().ok());
  const std::vector<std::string> events = backend.events();
  EXPECT_EQ(std::count(events.begin(), events.end(), "released by " + me), 1);
  EXPECT_EQ(At(events, "held by " + me), 0);
  EXPECT_EQ(events.size(), 12u);  // held, released and 5 ops' starts and ends
}

TEST(Executor, AThirdStepFinishesTheOldestFirstAndKeepsItsOutcome) {
  const Schedule s = Parse(std::string(kDevices) + kOps);
  GatedBackend backend;
  auto executor = Executor::Create(s, 0, &backend, Executor::Clock::now());
  ASSERT_TRUE(executor.ok()) << executor.status();
  for (int64_t n = 0; n < 3; ++n) {
    ASSERT_TRUE((*executor)->EnqueueStep(InputsOfStep(n)).ok());
  }
  EXPECT_EQ((*executor)->steps().size(), 1u);  // step 0, finished to free its slot
  for (int64_t n = 0; n < 3; ++n) {
    absl::StatusOr<Executor::StepOutcome> outcome = (*executor)->FinishStep();
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(outcome->step, n);
  }
}

TEST(Executor, StepsDoNotOverlapOnTheDevice) {
  // Step 1's d2h op may not start before step 0's upload, on another
  // stream, has ended: the IR has no edges across steps, so the executor
  // separates them (on the device, not by waiting on the host).
  const Schedule s = Parse(std::string(kDevices) + kOps);
  GatedBackend backend(/*held=*/{1});
  auto executor = Executor::Create(s, 0, &backend, Executor::Clock::now());
  ASSERT_TRUE(executor.ok()) << executor.status();
  ASSERT_TRUE((*executor)->EnqueueStep(InputsOfStep(0)).ok());
  ASSERT_TRUE((*executor)->EnqueueStep(InputsOfStep(1)).ok());
  ASSERT_TRUE((*executor)->Start().ok());
  backend.Await("start 1");
  backend.Await("end 5");  // step 0's d2h op
  std::vector<std::string> events = backend.events();
  EXPECT_EQ(std::count(events.begin(), events.end(), "start 5"), 1);  // not step 1's
  backend.Release(1);
  ASSERT_TRUE((*executor)->FinishStep().ok());
  ASSERT_TRUE((*executor)->FinishStep().ok());
  // Every op of step 1 (its second start) began after the fifth end, i.e.
  // after all of step 0 had ended.
  events = backend.events();
  int fifth_end = -1, ends = 0;
  for (int i = 0; i < static_cast<int>(events.size()) && fifth_end < 0; ++i) {
    if (events[i].rfind("end ", 0) == 0 && ++ends == 5) fifth_end = i;
  }
  ASSERT_GE(fifth_end, 0);
  for (int op = 1; op <= 5; ++op) {
    const std::string start = absl::StrCat("start ", op);
    auto first = std::find(events.begin(), events.end(), start);
    ASSERT_NE(first, events.end());
    auto second = std::find(first + 1, events.end(), start);
    ASSERT_NE(second, events.end()) << "op " << op << " ran once";
    EXPECT_GT(second - events.begin(), fifth_end) << "op " << op << " of step 1";
  }
}

TEST(Executor, AnEdgeFromALaterOpIsEnqueuedProducerFirst) {
  // Op 1 (compute) waits for op 2 (h2d), listed after it: the executor
  // enqueues op 2 and its record before op 1's wait, so the wait holds.
  const Schedule s = Parse(std::string(kDevices) + R"pb(
    ops { id: 1 device: 0 stream: "compute" compute {} }
    ops { id: 2 device: 0 stream: "h2d" copy {} }
    edges { from: 2 to: 1 }
  )pb");
  GatedBackend backend(/*held=*/{2});
  auto executor = Executor::Create(s, 0, &backend, Executor::Clock::now());
  ASSERT_TRUE(executor.ok()) << executor.status();
  ASSERT_TRUE((*executor)->EnqueueStep(StepInputs{}).ok());
  ASSERT_TRUE((*executor)->Start().ok());
  backend.Await("start 2");
  EXPECT_FALSE(Happened(backend.events(), "start 1"));
  backend.Release(2);
  ASSERT_TRUE((*executor)->FinishStep().ok());
  const std::vector<std::string> events = backend.events();
  EXPECT_LT(At(events, "end 2"), At(events, "start 1"));
}

TEST(Executor, RejectsEdgesAcrossDevices) {
  const Schedule s = Parse(std::string(kDevices) + R"pb(
    ops { id: 1 device: 0 stream: "compute" compute {} }
    ops { id: 2 device: 1 stream: "compute" compute {} }
    edges { from: 2 to: 1 }
  )pb");
  GatedBackend backend;
  auto executor = Executor::Create(s, 0, &backend, Executor::Clock::now());
  ASSERT_EQ(executor.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(executor.status().message().find("crosses devices"), std::string::npos);
}

}  // namespace
}  // namespace zosched
