// Calibration step 3 on the CPU testbed: the runtime's all-gather
// (runtime/mpi_world.h + the peer link's throttle) among 2 and 4 ranks, as
// the collective model's latencies and bus-bandwidth efficiency.
//
// Units: seconds, bytes, GB/s (1e9 bytes per second).
#pragma once

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/line_fit.h"
#include "runtime/calibration/calibration_settings.h"
#include "schedule/cluster.pb.h"

namespace zosched {

// The probe, on every rank under mpirun (MPI initialised): all-gathers of
// 4 KiB .. 4 MiB (x4; the whole gathered buffer) among all ranks through
// the runtime's path (MpiCollectives + the throttle of settings.cluster's
// first peer domain), each all-gather on a real-time thread as the
// runtime's collective stream runs it (runtime/real_time_thread.h; the
// barrier before it at the default policy), 1 + 3 × settings.repeats
// rounds, the first untimed.
// The sizes take turns, one all-gather of each per round, so that a busy
// spell of the machine slows a few samples of every size rather than most
// samples of one (which bent the fitted line: a 2-rank fixed cost of 233 us
// where runs took 120 us). Rank 0 writes "bytes median min max" (seconds)
// and the median thread CPU seconds of the all-gather call (its copies
// through the staging slots and its wake-ups, not the throttle's sleep)
// per size to `path`. Errors: LoadCluster's, MpiCollectives'.
absl::Status CollectiveProbe(const CalibrationSettings& settings, const std::string& path);

// Runs CollectiveProbe among `ranks` ranks (probe_runner.h; on `hosts`,
// mpirun's --host list, or "" for this machine) and fits it to a fixed cost
// + received bytes / rate (a time that does not grow with the bytes is
// noise: measured again, three times at most), printing every size and the
// fit under `label`; with `smallest`, also the smallest size's received
// bytes and median seconds; with `cpu`, the thread CPU time of rank 0's
// all-gathers fitted to a fixed cost + gathered bytes / rate. Errors:
// RunProbe's; Internal when the probe wrote no results; Unavailable when
// three fits do not grow with the bytes.
absl::StatusOr<Line> MeasureAllGather(const CalibrationSettings& settings, int ranks,
                                      const std::string& hosts, const std::string& label,
                                      std::pair<double, double>* smallest = nullptr,
                                      Line* cpu = nullptr);

// Runs CollectiveProbe among 2 and 4 ranks (probe_runner.h; before MPI
// starts here) and fits each to a fixed cost + received bytes / rate (a time
// that does not grow with the bytes is noise: measured again, three times
// at most) -> `out`'s collective model: the base and per-step latency (from
// the 2- and 4-rank fixed costs: fixed(n) = base + (n - 1) · step), the bus
// bandwidth efficiency (the mean rate / the peer link's), the peer link
// class's step latencies, and every device's collective_cpu_gbps (the
// all-gathers' thread CPU per gathered byte, the mean over 2 and 4 ranks).
// Prints every size and fit. Errors: RunProbe's;
// Internal when the probe wrote no results; Unavailable when three fits do
// not grow with the bytes.
absl::Status MeasureCollectives(const CalibrationSettings& settings, Cluster* out);

}  // namespace zosched
