#include "runtime/calibration/stream_wake_calibration.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "base/median.h"
#include "base/status_macros.h"
#include "runtime/host_streams.h"
#include "runtime/threaded_backend.h"
#include "runtime/usable_cores.h"

namespace zosched {

namespace {
using Clock = std::chrono::steady_clock;

// Medians over handoffs between two streams, µs (see the header).
struct Handoffs {
  double wake_us = 0;      // the waiting stream's start - the recorded op's end
  double signal_us = 0;    // the recording stream's next start - its op's end
  double wake_cpu_us = 0;  // the waiting stream's CPU between its ops
};

// Stream 0 runs 1 ms ops back to back, each recorded; stream 1 waits for
// each and runs a 20 µs op. `prepare(stream)` runs first on each stream's
// thread (pinning, priority).
absl::StatusOr<Handoffs> TimeHandoffs(const std::function<void(int)>& prepare) {
  constexpr int kHandoffs = 200;
  std::vector<Clock::time_point> started(kHandoffs), recorded(kHandoffs), woken(kHandoffs);
  // The waiting stream's thread CPU time at the start and end of each of
  // its ops: what it spends between them is its wake-up.
  std::vector<double> cpu_in(kHandoffs), cpu_out(kHandoffs);
  HostStreams streams(2, /*events=*/kHandoffs, prepare);
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
  Handoffs h;
  h.wake_us = Median(wake);
  h.signal_us = Median(signal);
  h.wake_cpu_us = std::max(0.0, Median(wake_cpu));
  return h;
}

}  // namespace

absl::Status MeasureStreamWakeUp(Cluster* out) {
  // Both streams free to run on any core (threads would inherit this
  // thread's pinning): the waiting one then wakes on an idle core, as the
  // runtime's transfer threads do on the cores no device computes on.
  ASSIGN_OR_RETURN(const Handoffs idle, TimeHandoffs([](int) { UnpinThread(); }));
  // Both on core 0, the recording one at compute's priority (SCHED_IDLE),
  // the waiting one at a transfer thread's: as a device's threads run when
  // the host has no core to spare (runtime/cpu_backend.h).
  ASSIGN_OR_RETURN(const Handoffs same, TimeHandoffs([](int stream) {
                     PinThreadToCore(0);
                     if (stream != 0) return;
                     sched_param param{};
                     if (sched_setscheduler(0, SCHED_IDLE, &param) != 0) {
                       setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
                     }
                   }));
  std::printf(
      "stream wake-up (medians of 200 handoffs): onto an idle core, the waiting stream starts "
      "%.1f us after the op it waits for, its wake-up taking %.1f us of CPU, and the recording "
      "stream starts its next op %.1f us late; on the recording stream's own core, %.1f us\n",
      idle.wake_us, idle.wake_cpu_us, idle.signal_us, same.wake_us);
  for (Device& d : *out->mutable_devices()) {
    d.set_stream_wake_latency_s(idle.wake_us * 1e-6);
    d.set_stream_signal_cost_s(idle.signal_us * 1e-6);
    d.set_same_core_wake_latency_s(same.wake_us * 1e-6);
    // A transfer thread wakes for each copy or collective it waits for.
    d.set_transfer_cpu_s(d.transfer_cpu_s() + idle.wake_cpu_us * 1e-6);
  }
  return absl::OkStatus();
}

}  // namespace zosched
