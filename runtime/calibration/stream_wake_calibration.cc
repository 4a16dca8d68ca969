#include "runtime/calibration/stream_wake_calibration.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "base/median.h"
#include "base/status_macros.h"
#include "runtime/host_streams.h"
#include "runtime/threaded_backend.h"

namespace zosched {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

absl::Status MeasureStreamWakeUp(Cluster* out) {
  constexpr int kHandoffs = 200;
  std::vector<Clock::time_point> started(kHandoffs), recorded(kHandoffs), woken(kHandoffs);
  // The waiting stream's thread CPU time at the start and end of each of
  // its ops: what it spends between them is its wake-up.
  std::vector<double> cpu_in(kHandoffs), cpu_out(kHandoffs);
  // Both streams free to run on any core (threads would inherit this
  // thread's pinning): the waiting one then wakes on an idle core, as the
  // runtime's transfer threads do on the cores no device computes on.
  HostStreams streams(2, /*events=*/kHandoffs, [](int) {
    cpu_set_t all;
    CPU_ZERO(&all);
    for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; ++c) CPU_SET(c, &all);
    sched_setaffinity(0, sizeof(all), &all);
  });
  auto work = [](Clock::time_point from, std::chrono::microseconds how_long) {
    while (Clock::now() - from < how_long) {
    }
  };
  for (int i = 0; i < kHandoffs; ++i) {
    streams.Enqueue(0, [&, i] {
      started[i] = Clock::now();
      work(started[i], std::chrono::microseconds(1000));
      recorded[i] = Clock::now();
      return absl::OkStatus();
    });
    streams.Record(0, i);
    streams.Wait(1, i);
    streams.Enqueue(1, [&, i] {
      woken[i] = Clock::now();
      cpu_in[i] = 1e-9 * ThreadCpuNs();
      work(woken[i], std::chrono::microseconds(20));
      cpu_out[i] = 1e-9 * ThreadCpuNs();
      return absl::OkStatus();
    });
  }
  RETURN_IF_ERROR(streams.WaitFence(streams.Fence()));
  std::vector<double> wake, signal, wake_cpu;
  for (int i = 0; i < kHandoffs; ++i) {
    wake.push_back(std::chrono::duration<double, std::micro>(woken[i] - recorded[i]).count());
    if (i > 0) wake_cpu.push_back((cpu_in[i] - cpu_out[i - 1]) * 1e6);
    if (i + 1 < kHandoffs) {
      signal.push_back(
          std::chrono::duration<double, std::micro>(started[i + 1] - recorded[i]).count());
    }
  }
  const double wake_us = Median(wake), signal_us = Median(signal);
  const double wake_cpu_us = std::max(0.0, Median(wake_cpu));
  std::printf(
      "stream wake-up (median of %d handoffs): the waiting stream starts %.1f us after "
      "the op it waits for, its wake-up taking %.1f us of CPU; the recording stream "
      "starts its next op %.1f us late\n",
      kHandoffs, wake_us, wake_cpu_us, signal_us);
  for (Device& d : *out->mutable_devices()) {
    d.set_stream_wake_latency_s(wake_us * 1e-6);
    d.set_stream_signal_cost_s(signal_us * 1e-6);
    // A transfer thread wakes for each copy or collective it waits for.
    d.set_transfer_cpu_s(d.transfer_cpu_s() + wake_cpu_us * 1e-6);
  }
  return absl::OkStatus();
}

}  // namespace zosched
