#include "runtime/cuda/calibration/calibration_math.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace zosched {

absl::StatusOr<LatencyAndRate> FitLatencyAndRate(const std::vector<CopyPoint>& points) {
  std::set<int64_t> sizes;
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const CopyPoint& p : points) {
    if (p.bytes <= 0 || !(p.seconds > 0) || !std::isfinite(p.seconds)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "a copy of %d bytes took %g s (expected bytes > 0 and a finite time > 0)", p.bytes,
          p.seconds));
    }
    sizes.insert(p.bytes);
    const double w = 1 / (p.seconds * p.seconds);
    const double x = p.bytes / 1e9, y = p.seconds;  // GB (keeps the sums well scaled)
    sw += w;
    sx += w * x;
    sy += w * y;
    sxx += w * x * x;
    sxy += w * x * y;
  }
  if (sizes.size() < 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d distinct copy sizes: fitting latency + bytes / rate needs two or more", sizes.size()));
  }
  const double b = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);  // seconds per GB
  const double a = (sy - b * sx) / sw;                            // seconds
  if (!(b > 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the copy time does not grow with size (fitted %g s per GB)", b));
  }
  return LatencyAndRate{std::max(0.0, a), 1 / b};
}

absl::StatusOr<HostLinkFigures> HostLinkFromTimings(const HostLinkTimings& timings) {
  auto fit = [](const std::vector<CopyPoint>& points,
                const char* direction) -> absl::StatusOr<LatencyAndRate> {
    absl::StatusOr<LatencyAndRate> f = FitLatencyAndRate(points);
    if (!f.ok()) {
      return absl::Status(f.status().code(),
                          absl::StrFormat("%s copies: %s", direction, f.status().message()));
    }
    return f;
  };
  ASSIGN_OR_RETURN(const LatencyAndRate down, fit(timings.h2d, "host-to-device"));
  ASSIGN_OR_RETURN(const LatencyAndRate up, fit(timings.d2h, "device-to-host"));
  for (double gbps : {timings.h2d_together_gbps, timings.d2h_together_gbps}) {
    if (!(gbps > 0) || !std::isfinite(gbps)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "a rate with both directions at once is %g GB/s (expected finite and > 0)", gbps));
    }
  }
  HostLinkFigures figures;
  figures.down_gbps = down.gbps;
  figures.up_gbps = up.gbps;
  figures.duplex_gbps = timings.h2d_together_gbps + timings.d2h_together_gbps;
  figures.latency_s = (down.latency_s + up.latency_s) / 2;
  return figures;
}

}  // namespace zosched
