// HostStreams' ordering guarantees, proven with tasks that block until the
// test lets them go (no sleeps, no wall-clock thresholds).
#include "runtime/host_streams.h"

#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace zosched {
namespace {

// A log of task names, and gates that hold tasks until opened.
class Gates {
 public:
  HostStreams::Task Task(const std::string& name, bool held = false) {
    if (held) {
      std::lock_guard<std::mutex> lock(mu_);
      closed_.insert(name);
    }
    return [this, name] {
      std::unique_lock<std::mutex> lock(mu_);
      log_.push_back("start " + name);
      cv_.notify_all();
      cv_.wait(lock, [&] { return closed_.count(name) == 0; });
      log_.push_back("end " + name);
      cv_.notify_all();
      return absl::OkStatus();
    };
  }
  // Logs `entry` (a ready call's: short, never blocking).
  void Note(const std::string& entry) {
    std::lock_guard<std::mutex> lock(mu_);
    log_.push_back(entry);
    cv_.notify_all();
  }
  // Where `entry` is in the log (-1: absent).
  int Position(const std::string& entry) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < log_.size(); ++i) {
      if (log_[i] == entry) return i;
    }
    return -1;
  }
  void Open(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    closed_.erase(name);
    cv_.notify_all();
  }
  void Await(const std::string& entry) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return Has(entry); });
  }
  bool Happened(const std::string& entry) {
    std::lock_guard<std::mutex> lock(mu_);
    return Has(entry);
  }
  std::vector<std::string> log() {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }

 private:
  bool Has(const std::string& entry) const {
    for (const std::string& e : log_) {
      if (e == entry) return true;
    }
    return false;
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<std::string> closed_;
  std::vector<std::string> log_;
};

TEST(HostStreams, AWaitHoldsItsStreamUntilTheRecordIsReached) {
  Gates g;
  HostStreams s(2, 1, [](int) {});
  s.Enqueue(0, g.Task("upload", /*held=*/true));
  s.Record(0, 0);
  s.Enqueue(1, g.Task("independent"));
  s.Wait(1, 0);
  s.Enqueue(1, g.Task("compute"));
  const int64_t fence = s.Fence();
  g.Await("end independent");  // stream 1 ran up to its wait
  g.Await("start upload");
  EXPECT_FALSE(g.Happened("start compute"));
  g.Open("upload");
  ASSERT_TRUE(s.WaitFence(fence).ok());
  const std::vector<std::string> log = g.log();
  EXPECT_EQ(log.back(), "end compute");
}

TEST(HostStreams, AWaitEnqueuedBeforeAnyRecordWaitsForNothing) {
  Gates g;
  HostStreams s(2, 1, [](int) {});
  s.Wait(1, 0);  // no record of event 0 yet: as in CUDA, nothing to wait for
  s.Enqueue(1, g.Task("free"));
  s.Enqueue(0, g.Task("held", /*held=*/true));
  s.Record(0, 0);
  g.Await("end free");
  g.Open("held");
  EXPECT_TRUE(s.WaitFence(s.Fence()).ok());
}

TEST(HostStreams, AWaitWaitsForTheLatestRecordEnqueuedBeforeIt) {
  Gates g;
  HostStreams s(2, 1, [](int) {});
  s.Enqueue(0, g.Task("first"));
  s.Record(0, 0);
  s.Enqueue(0, g.Task("second", /*held=*/true));
  s.Record(0, 0);
  s.Wait(1, 0);  // the second record
  s.Enqueue(1, g.Task("after"));
  g.Await("start second");
  EXPECT_FALSE(g.Happened("start after"));
  g.Open("second");
  ASSERT_TRUE(s.WaitFence(s.Fence()).ok());
  EXPECT_TRUE(g.Happened("end after"));
}

TEST(HostStreams, TheFirstErrorAbortsWaitsSkipsLaterTasksAndReachesFences) {
  Gates g;
  HostStreams s(2, 1, [](int) {});
  s.Enqueue(0, [] { return absl::InternalError("injected"); });
  s.Enqueue(0, g.Task("skipped"));
  s.Wait(1, 0);  // nothing recorded: no wait
  s.Enqueue(1, [] { return absl::InternalError("second error"); });
  const absl::Status status = s.WaitFence(s.Fence());
  EXPECT_TRUE(status.code() == absl::StatusCode::kInternal) << status;
  EXPECT_FALSE(g.Happened("start skipped"));
  // Sticky: later fences report the same error.
  s.Enqueue(1, g.Task("later"));
  EXPECT_EQ(s.WaitFence(s.Fence()), status);
  EXPECT_FALSE(g.Happened("start later"));
}

TEST(HostStreams, AFailedStreamReleasesAnotherStreamsWait) {
  HostStreams s(2, 1, [](int) {});
  s.Enqueue(0, [] { return absl::InternalError("producer failed"); });
  s.Record(0, 0);
  s.Wait(1, 0);
  const absl::Status status = s.WaitFence(s.Fence());  // would hang if the wait held
  EXPECT_EQ(status.message(), "producer failed");
}

TEST(HostStreams, HeldWorkStartsAtRelease) {
  Gates g;
  HostStreams s(2, 0, [](int) {});
  s.Enqueue(0, g.Task("running", /*held=*/true));
  g.Await("start running");
  s.Hold();
  s.Enqueue(0, g.Task("behind"));
  s.Enqueue(1, g.Task("other stream"));
  const int64_t fence = s.Fence();
  g.Open("running");  // stream 0 finishes what it runs, starts nothing new
  g.Await("end running");
  EXPECT_FALSE(g.Happened("start behind"));
  EXPECT_FALSE(g.Happened("start other stream"));
  s.Release();
  ASSERT_TRUE(s.WaitFence(fence).ok());
  EXPECT_TRUE(g.Happened("end behind"));
  EXPECT_TRUE(g.Happened("end other stream"));
}

// A compute stream waiting for an upload on another stream: its task is
// ready the moment the upload's record is reached, called on the uploading
// stream's thread, not when the waiting thread next gets a core.
TEST(HostStreams, ATaskReleasedByARecordIsReadyOnTheRecordingThread) {
  Gates g;
  HostStreams s(2, 1, [](int) {});
  std::thread::id upload_thread, ready_thread;
  s.Enqueue(0, [&, upload = g.Task("upload", /*held=*/true)] {
    upload_thread = std::this_thread::get_id();
    return upload();
  });
  s.Record(0, 0);
  s.Wait(1, 0);
  s.Enqueue(1, g.Task("compute"), [&] {
    ready_thread = std::this_thread::get_id();
    g.Note("ready compute");
  });
  g.Await("start upload");
  EXPECT_FALSE(g.Happened("ready compute"));
  g.Open("upload");
  ASSERT_TRUE(s.WaitFence(s.Fence()).ok());
  EXPECT_LT(g.Position("end upload"), g.Position("ready compute"));
  EXPECT_LT(g.Position("ready compute"), g.Position("start compute"));
  EXPECT_EQ(ready_thread, upload_thread);
}

// A task that calls Finishing makes the task behind it ready while it
// still runs (a compute op gets in line before it gives its turn away).
TEST(HostStreams, FinishingMakesTheNextTaskReadyBeforeTheTaskEnds) {
  Gates g;
  HostStreams s(1, 0, [](int) {});
  s.Hold();  // both enqueued before the first runs
  s.Enqueue(0, [&, first = g.Task("first", /*held=*/true)] {
    s.Finishing(0);
    return first();
  });
  s.Enqueue(0, g.Task("second"), [&] { g.Note("ready second"); });
  s.Release();
  g.Await("ready second");
  EXPECT_FALSE(g.Happened("end first"));
  g.Open("first");
  ASSERT_TRUE(s.WaitFence(s.Fence()).ok());
  EXPECT_LT(g.Position("ready second"), g.Position("start second"));
}

// The records right behind a task that calls Finishing are reached then:
// the task waiting for one on another stream is ready before that task
// returns (a compute op wakes the collective waiting for it before it
// gives its turn away, and so before its core mate's op takes its core).
TEST(HostStreams, FinishingReachesTheRecordsBehindTheTask) {
  Gates g;
  HostStreams s(2, 1, [](int) {});
  bool ready_at_finishing = false;
  s.Hold();  // everything enqueued before the first runs
  s.Enqueue(0, [&] {
    s.Finishing(0);
    ready_at_finishing = g.Happened("ready all-gather");
    return absl::OkStatus();
  });
  s.Record(0, 0);
  s.Wait(1, 0);
  s.Enqueue(1, g.Task("all-gather"), [&] { g.Note("ready all-gather"); });
  s.Release();
  ASSERT_TRUE(s.WaitFence(s.Fence()).ok());
  EXPECT_TRUE(ready_at_finishing);
}

// Held work is not ready until Release, and its ready call comes once.
TEST(HostStreams, HeldTasksAreReadyOnceAtRelease) {
  Gates g;
  HostStreams s(1, 0, [](int) {});
  s.Enqueue(0, g.Task("running", /*held=*/true));
  g.Await("start running");
  s.Hold();
  int calls = 0;
  s.Enqueue(0, g.Task("behind"), [&] {
    ++calls;
    g.Note("ready behind");
  });
  g.Open("running");
  g.Await("end running");
  EXPECT_FALSE(g.Happened("ready behind"));
  s.Release();
  ASSERT_TRUE(s.WaitFence(s.Fence()).ok());
  EXPECT_EQ(calls, 1);
  EXPECT_LT(g.Position("ready behind"), g.Position("start behind"));
}

TEST(HostStreams, EachThreadIsPreparedOnItself) {
  std::mutex mu;
  std::set<int> prepared;
  {
    HostStreams s(3, 0, [&](int stream) {
      std::lock_guard<std::mutex> lock(mu);
      prepared.insert(stream);
    });
    ASSERT_TRUE(s.WaitFence(s.Fence()).ok());
  }
  EXPECT_EQ(prepared, (std::set<int>{0, 1, 2}));
}

}  // namespace
}  // namespace zosched
