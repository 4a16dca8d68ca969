#include "runtime/speed_probe.h"

#include "gtest/gtest.h"

namespace zosched {
namespace {

// The figure is the work's CPU time in ns: positive, and far below a second
// (about 0.3 ms on the development VM; a unit slip to µs or s would leave
// this range).
TEST(SpeedProbe, ReturnsTheWorksCpuTimeInNanoseconds) {
  SpeedProbe probe;
  for (int run = 0; run < 3; ++run) {
    const int64_t ns = probe.CpuNs();
    EXPECT_GT(ns, 1000);
    EXPECT_LT(ns, 1000000000);
  }
}

}  // namespace
}  // namespace zosched
