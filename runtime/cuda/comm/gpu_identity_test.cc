#include "runtime/cuda/comm/gpu_identity.h"

#include "gtest/gtest.h"

namespace zosched {
namespace {

const std::string kA0 = GpuIdentity("node-a", "0000:3B:00.0");
const std::string kA1 = GpuIdentity("node-a", "0000:5E:00.0");
const std::string kB0 = GpuIdentity("node-b", "0000:3B:00.0");  // same bus id, other host

TEST(GpuIdentityTest, NamesHostAndBusId) {
  EXPECT_EQ(kA0, "node-a/0000:3B:00.0");
  EXPECT_NE(kA0, kB0);
}

TEST(DistinctWithinGroupsTest, EachRankOnItsOwnGpu) {
  EXPECT_TRUE(DistinctWithinGroups({{0, 1}, {1, 0}}, {kA0, kA1}));
  // The same bus id on two hosts is two GPUs.
  EXPECT_TRUE(DistinctWithinGroups({{0, 1}}, {kA0, kB0}));
}

TEST(DistinctWithinGroupsTest, TwoRanksOfAGroupOnOneGpu) {
  EXPECT_FALSE(DistinctWithinGroups({{0, 1}}, {kA0, kA0}));
  // One shared GPU in any group is enough.
  EXPECT_FALSE(DistinctWithinGroups({{0, 2}, {1, 3}}, {kA0, kA1, kB0, kA1}));
}

TEST(DistinctWithinGroupsTest, RanksOfDifferentGroupsMayShareAGpu) {
  // P2 x D2 on two GPUs: ranks 0 and 2 share GPU 0 but never gather together.
  EXPECT_TRUE(DistinctWithinGroups({{0, 1}, {2, 3}}, {kA0, kA1, kA0, kA1}));
}

TEST(DistinctWithinGroupsTest, NoGroups) {
  EXPECT_TRUE(DistinctWithinGroups({}, {kA0, kA0}));
  EXPECT_TRUE(DistinctWithinGroups({{0}}, {kA0}));
}

TEST(DistinctWithinGroupsTest, MalformedGroupsAreNotDistinct) {
  EXPECT_FALSE(DistinctWithinGroups({{0, 2}}, {kA0, kA1}));   // no rank 2
  EXPECT_FALSE(DistinctWithinGroups({{-1, 0}}, {kA0, kA1}));  // no rank -1
  EXPECT_FALSE(DistinctWithinGroups({{1, 1}}, {kA0, kA1}));   // rank 1 twice
}

}  // namespace
}  // namespace zosched
