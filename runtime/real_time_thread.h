// The CPU testbed's transfer threads run real-time, so that a copy or
// collective due now never waits behind compute (runtime/cpu_backend.h
// says where each thread runs and why). Linux also lets a real-time
// thread's sleeps end when they are due, with no timer slack: a throttled
// transfer on a fair-class thread ends up to 50 µs late.
#pragma once

namespace zosched {

// The calling thread real-time (SCHED_FIFO at priority 1, the lowest), or
// back at the default policy (SCHED_OTHER). Without CAP_SYS_NICE or
// RLIMIT_RTPRIO it stays as it was: only timing fidelity suffers, so
// failure is ignored.
void SetCallerRealTime(bool real_time);

}  // namespace zosched
