// What a CPU testbed device's compute pays, in its own CPU time, when a
// transfer thread wakes on its core and preempts it: the interrupt, the two
// context switches, and the caches and TLB refilled afterwards, beyond the
// transfer thread's own CPU. On the 2-core development VM (a Firecracker/PVM
// guest) about 40 us per wake-up, more than a 200 KB copy itself takes. A
// transfer thread wakes to start a copy or collective and again at its end,
// when its throttle's timer fires (Device.interrupt_cpu_s, per wake-up).
//
// Measured in rounds that alternate the compute alone with the compute
// while copies run back to back on its core (so that the machine's drift
// lands on both alike), the compute timed in its thread's CPU time: the
// time slices the copies take do not count, only what the compute itself
// does more.
#pragma once

#include <functional>

#include "absl/status/statusor.h"

namespace zosched {

// Work of one of the runtime's threads as the probe runs it, each on a
// thread of its own: `prepare` once (pinning and priority, as the runtime
// does for that stream), then `run` (a step's compute ops of one device, or
// one copy) as often as asked.
struct CoreWork {
  std::function<void()> prepare;
  std::function<absl::Status()> run;
};

// `rounds` rounds (>= 1) of `passes` runs (>= 1) of `compute` alone, then
// as many while `copy` runs back to back; the `prepare`s put both on one
// core, the copy at a priority that preempts the compute (as the runtime's
// copy threads do). Returns the median over the rounds of the compute's
// extra CPU seconds per copy (>= 0). The copy must sleep for at least a
// third of each run (a throttled copy sleeps out its transfer): one that
// keeps its thread busy longer would starve the compute, so it is stopped
// after a few runs, and the rounds with it. Errors: InvalidArgument for
// counts below 1; the first error of a run; ResourceExhausted when the
// copy is that busy (its CPU per run over its wall time, summed over its
// first 8 runs or more: the caller may try a longer copy); FailedPrecondition
// when a round made no copy.
absl::StatusOr<double> PerCopyComputeCpuSeconds(const CoreWork& compute, const CoreWork& copy,
                                                int rounds, int passes);

}  // namespace zosched
