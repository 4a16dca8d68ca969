// The arithmetic of the GPU calibration (gpu_calibration.h), apart from CUDA
// so that CPU tests cover it: the host link's figures from timed copies
// (the timing statistics, Stats and Summarize, are
// runtime/calibration/timing_stats.h, shared with the CPU calibration).
//
// Units: seconds (`_s`), bytes, GB/s (`_gbps` = 1e9 bytes per second, never
// Gbit/s), as in schedule/cluster.proto.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/calibration/timing_stats.h"

namespace zosched {

// One timed copy size: `bytes` took `seconds` (the median of its runs).
struct CopyPoint {
  int64_t bytes = 0;
  double seconds = 0;
};

// A link modelled as seconds = latency_s + bytes / (gbps · 1e9).
struct LatencyAndRate {
  double latency_s = 0;  // fixed cost per copy, >= 0
  double gbps = 0;       // > 0
};

// Least-squares fit of seconds = a + b · bytes over `points`, each weighted by
// 1 / seconds² (the relative error is minimised, so that small copies, which
// fix the latency, count as much as large ones, which fix the rate).
// Returns latency_s = max(a, 0) and gbps = 1 / b / 1e9.
//
// Errors: InvalidArgument when fewer than two distinct sizes are given, a
// point has bytes <= 0 or seconds <= 0 (or not finite), or the fitted time
// does not grow with size (b <= 0).
absl::StatusOr<LatencyAndRate> FitLatencyAndRate(const std::vector<CopyPoint>& points);

// What calibrate measured of one GPU's host link (pinned host memory,
// cudaMemcpyAsync, timed with CUDA events).
struct HostLinkTimings {
  std::vector<CopyPoint> h2d;  // host to device alone, several sizes
  std::vector<CopyPoint> d2h;  // device to host alone, several sizes
  // Both directions at once (two streams, one copy each, started together):
  // each direction's rate, bytes / the time until its own copy ended.
  double h2d_together_gbps = 0;
  double d2h_together_gbps = 0;
};

// The host link's figures in cluster.proto's LinkSpec terms.
struct HostLinkFigures {
  double down_gbps = 0;    // host to device: the H2D fit's rate
  double up_gbps = 0;      // device to host: the D2H fit's rate
  // Both directions at once: h2d_together_gbps + d2h_together_gbps (the H100
  // machine: 45 + 45 = 90, not 2 × 54). Written as the LinkSpec's cap even
  // when it is not below down + up (the cap then never binds).
  double duplex_gbps = 0;
  double latency_s = 0;    // the mean of the H2D and D2H fits' latencies
};

// The figures of `timings` (FitLatencyAndRate of each direction).
//
// Errors: those of FitLatencyAndRate, naming the direction; InvalidArgument
// when a together rate is not finite and > 0.
absl::StatusOr<HostLinkFigures> HostLinkFromTimings(const HostLinkTimings& timings);

}  // namespace zosched
