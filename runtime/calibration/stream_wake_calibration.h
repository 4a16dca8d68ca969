// Calibration step 4 on the CPU testbed: what waking one of the runtime's
// host streams costs the stream that waits and the stream that records.
//
// Units: seconds.
#pragma once

#include "absl/status/status.h"
#include "schedule/cluster.pb.h"

namespace zosched {

// What waking a stream costs, in the runtime's common case: the stream that
// records goes on working (a copy stream starts its next copy, compute its
// next op), and the waiting one has slept for a while (an op's length: a
// millisecond), so it is woken on another, idle core. One stream runs 1 ms
// ops back to back, each recorded; the other waits for each and runs a
// short op. Medians over the handoffs:
//   the waiting stream's start - the recorded op's end
//     -> every device's stream_wake_latency_s;
//   the recording stream's next start - its recorded op's end
//     -> every device's stream_signal_cost_s.
// (On this project's VMs 70-80 us and about 30 us, against 5-8 us and
// nothing when the waiting stream slept only ~200 us: a virtual CPU idle
// for longer has halted, and waking it is what costs.)
// The waiting stream's CPU time between its ops (its wake-up) is added to
// every device's transfer_cpu_s (a transfer thread wakes so for each copy or
// collective). Then the same handoffs with both threads on one core, the
// recording one at compute's priority (SCHED_IDLE) and the waiting one at a
// transfer thread's, as a device's threads run where the host has no core
// to spare: the median wake-up -> every device's same_core_wake_latency_s
// (a few µs here: the woken thread preempts its waker at once). Prints the
// medians. Errors: those of the host streams.
absl::Status MeasureStreamWakeUp(Cluster* out);

}  // namespace zosched
