#include "sim/expected_maximum.h"

#include <cmath>

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(ExpectedMaximum, TwoIdenticalArrivalsAreExact) {
  // E[max(X, Y)] for X, Y ~ N(0, 1) independent is 1 / sqrt(pi).
  EXPECT_NEAR(ExpectedMaximum({{0, 1}, {0, 1}}), 1 / std::sqrt(M_PI), 1e-12);
  // Shifted and scaled: 100 + 3 / sqrt(pi).
  EXPECT_NEAR(ExpectedMaximum({{100, 3}, {100, 3}}), 100 + 3 / std::sqrt(M_PI), 1e-9);
}

TEST(ExpectedMaximum, SeveralIdenticalArrivalsAreWithinAPercentOfExact) {
  // The exact expected maxima of n standard normals (order statistics).
  const double exact[] = {0, 0, 0.5642, 0.8463, 1.0294, 1.1630, 1.2672, 1.3522, 1.4236};
  for (int n = 2; n <= 8; ++n) {
    const std::vector<Arrival> arrivals(n, Arrival{0, 1});
    EXPECT_NEAR(ExpectedMaximum(arrivals), exact[n], 0.01 * exact[n]) << n << " arrivals";
  }
}

TEST(ExpectedMaximum, AFarLaterArrivalIsTheMaximum) {
  // One arrival 10 sd after the others: the others hardly matter.
  EXPECT_NEAR(ExpectedMaximum({{0, 1}, {0, 1}, {10, 1}}), 10, 1e-6);
}

TEST(ExpectedMaximum, WithoutSpreadTheLatestMean) {
  EXPECT_EQ(ExpectedMaximum({{5, 0}, {7, 0}, {6, 0}}), 7);
  EXPECT_EQ(ExpectedMaximum({}), 0);
  // One varying arrival beside a fixed later one: E[max(X, 7)], X ~ N(5, 2²).
  const double alpha = (5.0 - 7.0) / 2;
  const double phi = std::exp(-0.5 * alpha * alpha) / std::sqrt(2 * M_PI);
  const double cdf = 0.5 * std::erfc(-alpha / std::sqrt(2.0));
  EXPECT_NEAR(ExpectedMaximum({{5, 2}, {7, 0}}), 5 * cdf + 7 * (1 - cdf) + 2 * phi, 1e-12);
}

}  // namespace
}  // namespace zosched
