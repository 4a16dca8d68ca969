#include "runtime/calibration/timing_stats.h"

#include <algorithm>

namespace zosched {

Stats Summarize(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  return Stats{seconds.front(), seconds[seconds.size() / 2], seconds.back()};
}

}  // namespace zosched
