#include "sim/flow_sharing.h"

#include <vector>

#include "gtest/gtest.h"

namespace zosched {
namespace {

using Paths = std::vector<const std::vector<int>*>;

// Links: 0 host memory, 1 g0's down link (10), 2 g1's down link (10),
// 3 g1's duplex cap (12), 4 g1's up link (8), 5 a peer link (20).
std::vector<double> Capacities(double memory) { return {memory, 10, 10, 12, 8, 20}; }
const std::vector<int> kToG0 = {0, 1};
const std::vector<int> kToG1 = {0, 2, 3};
const std::vector<int> kFromG1 = {4, 3, 0};
const std::vector<int> kPeer = {5};

TEST(FlowSharing, GivesMaxMinRates) {
  // g1's link binds the two flows to it at 5 each; host memory (20) then
  // leaves the flow to g0 its own link's 10.
  FlowSharing sharing(Capacities(20));
  std::vector<double> rates;
  sharing.Share({&kToG0, &kToG1, &kToG1}, &rates);
  EXPECT_EQ(rates, (std::vector<double>{10, 5, 5}));
  // With 12 GB/s of host memory, memory binds all three first: 4 each.
  FlowSharing narrow(Capacities(12));
  narrow.Share({&kToG0, &kToG1, &kToG1}, &rates);
  EXPECT_EQ(rates, (std::vector<double>{4, 4, 4}));
}

TEST(FlowSharing, FillsProgressivelyAcrossTwoBottlenecks) {
  FlowSharing sharing(Capacities(100));
  std::vector<double> rates;
  // The duplex cap (12) is shared by one upload and two offloads, the up
  // link (8) by the two offloads only: the duplex share 4 saturates first
  // (12/3 < 8/2), so all three run at 4.
  sharing.Share({&kFromG1, &kFromG1, &kToG1}, &rates);
  EXPECT_EQ(rates, (std::vector<double>{4, 4, 4}));
  // Two offloads alone: the up link (8) binds before the duplex cap (12).
  sharing.Share({&kFromG1, &kFromG1}, &rates);
  EXPECT_EQ(rates, (std::vector<double>{4, 4}));
  // Flows that share no link each run at their own bottleneck.
  sharing.Share({&kToG1, &kPeer}, &rates);
  EXPECT_EQ(rates, (std::vector<double>{10, 20}));
}

// The scratch carries nothing from one call to the next.
TEST(FlowSharing, RepeatedCallsGiveTheSameRates) {
  FlowSharing sharing(Capacities(20));
  std::vector<double> first, again, other;
  sharing.Share({&kToG0, &kToG1, &kFromG1, &kPeer}, &first);
  sharing.Share({&kToG1, &kToG1, &kToG1}, &other);
  sharing.Share({&kToG0, &kToG1, &kFromG1, &kPeer}, &again);
  EXPECT_EQ(first, again);
  EXPECT_EQ(other, (std::vector<double>{10.0 / 3, 10.0 / 3, 10.0 / 3}));
}

// A pattern that recurs is known by its paths, in its flows' order; a path
// with the same links elsewhere gives the same rates.
TEST(FlowSharing, RecurringPatternsAreKnownByTheirPathsInOrder) {
  FlowSharing sharing(Capacities(20));
  std::vector<double> rates;
  sharing.Share({&kToG0, &kToG1, &kToG1}, &rates);
  EXPECT_EQ(rates, (std::vector<double>{10, 5, 5}));
  const std::vector<int> to_g1_again = kToG1;
  sharing.Share({&kToG0, &to_g1_again, &kToG1}, &rates);
  EXPECT_EQ(rates, (std::vector<double>{10, 5, 5}));
  sharing.Share({&kToG1, &kToG0, &kToG1}, &rates);
  EXPECT_EQ(rates, (std::vector<double>{5, 10, 5}));
  // Two flows of two links each, then the second over other links.
  sharing.Share({&kToG0, &kToG0}, &rates);
  EXPECT_EQ(rates, (std::vector<double>{5, 5}));
  sharing.Share({&kToG0, &kPeer}, &rates);
  EXPECT_EQ(rates, (std::vector<double>{10, 20}));
}

// Reset starts again for other links: a pattern kept before, whose paths
// now stand for other capacities, is forgotten.
TEST(FlowSharing, ResetForgetsThePatternsKept) {
  FlowSharing sharing(Capacities(20));
  std::vector<double> rates;
  sharing.Share({&kToG0, &kToG1, &kToG1}, &rates);
  EXPECT_EQ(rates, (std::vector<double>{10, 5, 5}));
  sharing.Reset(Capacities(12));
  sharing.Share({&kToG0, &kToG1, &kToG1}, &rates);
  EXPECT_EQ(rates, (std::vector<double>{4, 4, 4}));
}

TEST(FlowSharing, NoFlowsNoRates) {
  FlowSharing sharing(Capacities(20));
  std::vector<double> rates = {1, 2};
  sharing.Share({}, &rates);
  EXPECT_TRUE(rates.empty());
}

}  // namespace
}  // namespace zosched
