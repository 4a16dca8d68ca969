// LinkFailureHint: what a rank whose wait ran out says about the machines
// of the ranks it waited for.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/mpi_world.h"

namespace zosched {
namespace {

const std::vector<std::string> kTwoNodes = {"node1", "node1", "node2", "node2"};

TEST(LinkFailureHintTest, NamesTheOtherMachineOfRanksWaitedFor) {
  EXPECT_EQ(LinkFailureHint(kTwoNodes, {2, 3}, 0),
            ", or the link to its machine failed (the ranks are on node2 (ranks 2,3))");
  EXPECT_EQ(LinkFailureHint(kTwoNodes, {0}, 3),
            ", or the link to its machine failed (the ranks are on node1 (ranks 0))");
}

TEST(LinkFailureHintTest, MarksThisRanksMachineInAGroupThatSpansMachines) {
  EXPECT_EQ(LinkFailureHint(kTwoNodes, {0, 2, 1, 3}, 1),
            ", or the link to its machine failed (the ranks are on node1 (ranks 0,1, this one), "
            "node2 (ranks 2,3))");
}

TEST(LinkFailureHintTest, SaysNothingWhereNoLinkIsBetweenThem) {
  EXPECT_EQ(LinkFailureHint(kTwoNodes, {1}, 0), "");
  EXPECT_EQ(LinkFailureHint(kTwoNodes, {2, 3}, 2), "");
  EXPECT_EQ(LinkFailureHint({"a", "a", "a"}, {1, 2}, 0), "");
  EXPECT_EQ(LinkFailureHint({}, {1, 2}, 0), "");  // machines not known yet
}

}  // namespace
}  // namespace zosched
