#include "runtime/core_sharing_probe.h"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/threaded_backend.h"

namespace zosched {
namespace {

void PinToFirstCore() {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  sched_setaffinity(0, sizeof(one), &one);
}

// Spins on the calling thread until it has used `ns` of its own CPU time.
void BurnCpu(int64_t ns) {
  const int64_t until = ThreadCpuNs() + ns;
  volatile int64_t sink = 0;
  while (ThreadCpuNs() < until) sink = sink + 1;
}

// A compute of 1 ms of CPU per run, on core 0 at the lowest priority, as
// the runtime's compute streams run (a copy preempts it at once).
CoreWork Compute() {
  return {[] {
            PinToFirstCore();
            sched_param param{};
            sched_setscheduler(0, SCHED_IDLE, &param);
          },
          [] {
            BurnCpu(1000000);
            return absl::OkStatus();
          }};
}

TEST(PerCopyComputeCpuSeconds, CountsOnlyWhatTheComputeItselfPaysNotTheCopysOwnCpu) {
  // Each "copy" spins 2 ms of CPU on the compute's core, then sleeps 1 ms:
  // the compute's wall time grows by far more than its CPU time, and only
  // the latter (an interruption's cost: a context switch and caches
  // refilled, tens of µs here) may show, well under the copy's own CPU on
  // any machine (both are CPU times, so a slower core scales them alike).
  const CoreWork copy{PinToFirstCore, [] {
                        BurnCpu(2000000);
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                        return absl::OkStatus();
                      }};
  absl::StatusOr<double> per_copy = PerCopyComputeCpuSeconds(Compute(), copy, 5, 3);
  ASSERT_TRUE(per_copy.ok()) << per_copy.status();
  EXPECT_GE(*per_copy, 0);
  EXPECT_LT(*per_copy, 1e-3);  // half the copy's own 2 ms
}

TEST(PerCopyComputeCpuSeconds, ACopysErrorIsReturned) {
  const CoreWork copy{PinToFirstCore, [] { return absl::DataLossError("the copy broke"); }};
  absl::StatusOr<double> per_copy = PerCopyComputeCpuSeconds(Compute(), copy, 2, 1);
  ASSERT_FALSE(per_copy.ok());
  EXPECT_EQ(per_copy.status().message(), "the copy broke");
}

TEST(PerCopyComputeCpuSeconds, AComputeErrorIsReturned) {
  std::atomic<int> runs{0};
  const CoreWork compute{PinToFirstCore, [&runs] {
                           return ++runs < 3 ? absl::OkStatus()
                                             : absl::InternalError("the op failed");
                         }};
  const CoreWork copy{PinToFirstCore, [] { return absl::OkStatus(); }};
  absl::StatusOr<double> per_copy = PerCopyComputeCpuSeconds(compute, copy, 4, 1);
  ASSERT_FALSE(per_copy.ok());
  EXPECT_EQ(per_copy.status().message(), "the op failed");
}

TEST(PerCopyComputeCpuSeconds, ARoundWithoutACopyCannotBeMeasured) {
  // The copy takes 1 s; the compute's passes (5 ms of CPU) are over long
  // before, even on a core 100 times slower.
  const CoreWork copy{PinToFirstCore, [] {
                        std::this_thread::sleep_for(std::chrono::seconds(1));
                        return absl::OkStatus();
                      }};
  absl::StatusOr<double> per_copy = PerCopyComputeCpuSeconds(Compute(), copy, 1, 1);
  ASSERT_FALSE(per_copy.ok());
  EXPECT_EQ(per_copy.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(per_copy.status().message().find("no copy ran"), std::string::npos);
}

TEST(PerCopyComputeCpuSeconds, ACopyThatNeverSleepsIsStoppedNotLeftToStarveTheCompute) {
  // Each "copy" spins 200 µs and never sleeps: run back to back at normal
  // priority on the core of the compute (which yields to it) it would take
  // the core for good, and the probe would never end. It is stopped
  // instead, after a few runs, and the probe says why.
  const CoreWork copy{PinToFirstCore, [] {
                        BurnCpu(200000);
                        return absl::OkStatus();
                      }};
  absl::StatusOr<double> per_copy = PerCopyComputeCpuSeconds(Compute(), copy, 5, 3);
  ASSERT_FALSE(per_copy.ok());
  EXPECT_EQ(per_copy.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(per_copy.status().message().find("would starve the compute"), std::string::npos)
      << per_copy.status();
}

TEST(PerCopyComputeCpuSeconds, CountsBelowOneAreRefused) {
  const CoreWork copy{PinToFirstCore, [] { return absl::OkStatus(); }};
  EXPECT_EQ(PerCopyComputeCpuSeconds(Compute(), copy, 0, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PerCopyComputeCpuSeconds(Compute(), copy, 1, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace zosched
