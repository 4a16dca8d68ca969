#include "runtime/cuda/calibration/calibration_math.h"

#include <vector>

#include "gtest/gtest.h"

namespace zosched {
namespace {

// Copies of 4 KiB .. 1 GiB (×4) on a link of `latency_s` + bytes / gbps.
std::vector<CopyPoint> Exact(double latency_s, double gbps) {
  std::vector<CopyPoint> points;
  for (int64_t bytes = 4 << 10; bytes <= int64_t{1} << 30; bytes *= 4) {
    points.push_back({bytes, latency_s + bytes / (gbps * 1e9)});
  }
  return points;
}

TEST(SummarizeTest, MinMedianMax) {
  const Stats odd = Summarize({3e-3, 1e-3, 2e-3});
  EXPECT_EQ(odd.min, 1e-3);
  EXPECT_EQ(odd.median, 2e-3);
  EXPECT_EQ(odd.max, 3e-3);
  // Even counts take the upper middle, as the CPU calibration does.
  EXPECT_EQ(Summarize({4, 1, 3, 2}).median, 3);
  EXPECT_EQ(Summarize({5}).median, 5);
}

TEST(FitLatencyAndRateTest, RecoversAnExactLink) {
  absl::StatusOr<LatencyAndRate> fit = FitLatencyAndRate(Exact(6e-6, 54.4));
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->latency_s, 6e-6, 1e-12);
  EXPECT_NEAR(fit->gbps, 54.4, 1e-6);
}

TEST(FitLatencyAndRateTest, SmallCopiesFixTheLatencyDespiteNoiseOnLargeOnes) {
  // 2 % noise on the 1 GiB copy (about 400 µs) must not swamp a 6 µs
  // latency: the fit weighs relative errors.
  std::vector<CopyPoint> points = Exact(6e-6, 54.4);
  points.back().seconds *= 1.02;
  absl::StatusOr<LatencyAndRate> fit = FitLatencyAndRate(points);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->latency_s, 6e-6, 0.5e-6);
  EXPECT_NEAR(fit->gbps, 54.4, 0.6);
}

TEST(FitLatencyAndRateTest, ANegativeInterceptIsNoLatency) {
  std::vector<CopyPoint> points;
  for (int64_t bytes : {1 << 20, 4 << 20, 16 << 20}) {
    points.push_back({bytes, -1e-6 + bytes / 50e9});
  }
  absl::StatusOr<LatencyAndRate> fit = FitLatencyAndRate(points);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_EQ(fit->latency_s, 0);
  EXPECT_NEAR(fit->gbps, 50, 1e-6);
}

TEST(FitLatencyAndRateTest, Refusals) {
  auto message = [](const std::vector<CopyPoint>& points) {
    absl::StatusOr<LatencyAndRate> fit = FitLatencyAndRate(points);
    EXPECT_TRUE(absl::IsInvalidArgument(fit.status())) << fit.status();
    return std::string(fit.status().message());
  };
  EXPECT_EQ(message({{4096, 1e-5}, {4096, 2e-5}}),
            "1 distinct copy sizes: fitting latency + bytes / rate needs two or more");
  EXPECT_EQ(message({}), "0 distinct copy sizes: fitting latency + bytes / rate needs two or more");
  EXPECT_EQ(message({{0, 1e-5}, {4096, 2e-5}}),
            "a copy of 0 bytes took 1e-05 s (expected bytes > 0 and a finite time > 0)");
  EXPECT_EQ(message({{4096, 0}, {8192, 2e-5}}),
            "a copy of 4096 bytes took 0 s (expected bytes > 0 and a finite time > 0)");
  EXPECT_EQ(message({{4096, 2e-5}, {8192, 1e-5}}).rfind("the copy time does not grow with size", 0),
            0u);
}

TEST(HostLinkFromTimingsTest, RatesDuplexAndLatency) {
  HostLinkTimings t;
  t.h2d = Exact(6e-6, 54.4);
  t.d2h = Exact(8e-6, 54.6);
  t.h2d_together_gbps = 45.0;
  t.d2h_together_gbps = 45.2;
  absl::StatusOr<HostLinkFigures> f = HostLinkFromTimings(t);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_NEAR(f->down_gbps, 54.4, 1e-6);
  EXPECT_NEAR(f->up_gbps, 54.6, 1e-6);
  EXPECT_NEAR(f->duplex_gbps, 90.2, 1e-12);  // the sum, not 2 × 54
  EXPECT_NEAR(f->latency_s, 7e-6, 1e-12);    // the mean of the two directions
}

TEST(HostLinkFromTimingsTest, Refusals) {
  HostLinkTimings t;
  t.h2d = Exact(6e-6, 54.4);
  t.d2h = {{4096, 1e-5}};
  t.h2d_together_gbps = t.d2h_together_gbps = 45;
  EXPECT_EQ(HostLinkFromTimings(t).status().message(),
            "device-to-host copies: 1 distinct copy sizes: fitting latency + bytes / rate needs "
            "two or more");
  t.d2h = Exact(6e-6, 54.4);
  t.d2h_together_gbps = 0;
  EXPECT_EQ(HostLinkFromTimings(t).status().message(),
            "a rate with both directions at once is 0 GB/s (expected finite and > 0)");
}

}  // namespace
}  // namespace zosched
