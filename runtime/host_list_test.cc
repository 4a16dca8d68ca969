#include "runtime/host_list.h"

#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"
#include "schedule/training_settings.h"

namespace zosched {
namespace {

// DistZO2 P2xD2 of opt-tiny on the two-node testbed: cpu0, cpu1 on host
// node1; cpu2, cpu3 on node2.
Schedule TwoNodes() {
  LowerOptions o;
  o.strategy = DISTZO2;
  o.pertp = 2;
  o.dp = 2;
  o.training = DefaultTrainingSettings();
  o.training.set_batch_size(16);
  o.training.set_seq_len(32);
  absl::StatusOr<Schedule> s = LowerSchedule(*LoadModelSpec("opt-tiny"),
                                             *LoadCluster("two_node_cpu"), o);
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

std::string Refusal(const absl::Status& status) {
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  return std::string(status.message());
}

TEST(HostListTest, ParsesMpirunsHostSyntax) {
  absl::StatusOr<std::vector<NodeSlots>> nodes = ParseHostList("node1:2,node2:2,10.0.0.3");
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[0].node, "node1");
  EXPECT_EQ((*nodes)[1].slots, 2);
  EXPECT_EQ((*nodes)[2].node, "10.0.0.3");
  EXPECT_EQ((*nodes)[2].slots, 1);
  EXPECT_EQ(HostListFlag(*nodes), "node1:2,node2:2,10.0.0.3:1");
  EXPECT_EQ(Refusal(ParseHostList("node1:2,,node2").status()),
            "--hosts: '' is not a machine (expected name or name:slots)");
  EXPECT_EQ(Refusal(ParseHostList("node1:two").status()),
            "--hosts: 'node1:two': slots 'two' is not a whole number from 1 to 4096");
  EXPECT_EQ(Refusal(ParseHostList("node1:0").status()),
            "--hosts: 'node1:0': slots '0' is not a whole number from 1 to 4096");
  EXPECT_EQ(Refusal(ParseHostList("node1:2,node1:2").status()),
            "--hosts: machine 'node1' is listed twice (give it once, with all its slots)");
}

TEST(HostListTest, ReadsAnOpenMpiHostfile) {
  const std::string path = std::string(getenv("TEST_TMPDIR")) + "/hosts";
  std::ofstream(path) << "# the testbed\nnode1 slots=2\n\n  node2 slots=2  # the second\n";
  absl::StatusOr<std::vector<NodeSlots>> nodes = ReadHostfile(path);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(HostListFlag(*nodes), "node1:2,node2:2");
  std::ofstream(path) << "node1 slots=2\nnode2 max_slots=2\n";
  EXPECT_EQ(Refusal(ReadHostfile(path).status()),
            path + ":2: 'max_slots=2' is not understood (expected 'name' or 'name slots=N')");
  std::ofstream(path) << "node1 slots=x\n";
  EXPECT_TRUE(absl::StrContains(Refusal(ReadHostfile(path).status()), path + ":1: 'node1:x'"));
  std::ofstream(path) << "# nothing\n";
  EXPECT_EQ(Refusal(ReadHostfile(path).status()), path + " lists no machine");
  EXPECT_TRUE(absl::IsNotFound(ReadHostfile(path + ".missing").status()));
}

TEST(HostListTest, EachMachinesRanksAreOneScheduleHostsDevices) {
  const Schedule s = TwoNodes();
  EXPECT_TRUE(CheckRanksOnHosts(s, *ParseHostList("a:2,b:2")).ok());
  // Too few slots, too many.
  EXPECT_TRUE(absl::StrContains(
      Refusal(CheckRanksOnHosts(s, *ParseHostList("a:2,b:1"))),
      "the machines give 3 slots (a:2,b:1) but the schedule 'opt-tiny distzo2 P2xD2 sliced on "
      "two_node_cpu' has 4 devices, a rank each"));
  EXPECT_TRUE(absl::StrContains(Refusal(CheckRanksOnHosts(s, *ParseHostList("a:4,b:1"))),
                                "(its hosts: node1:2,node2:2)"));
  // A machine with devices of two hosts.
  EXPECT_TRUE(absl::StrContains(
      Refusal(CheckRanksOnHosts(s, *ParseHostList("a:3,b:1"))),
      "rank 2 (device 'cpu2' of schedule host 'node2') would start on 'a' beside rank 0 of "
      "host 'node1'"));
  // One host's devices on two machines.
  EXPECT_TRUE(absl::StrContains(
      Refusal(CheckRanksOnHosts(s, *ParseHostList("a:1,b:1,c:2"))),
      "'a' gets 1 of schedule host 'node1''s devices and rank 1 (device 'cpu1', the same "
      "host) would start on the next machine"));
  // One machine for the whole schedule of one host.
  LowerOptions o;
  o.strategy = ZO2;
  o.training = DefaultTrainingSettings();
  o.training.set_batch_size(16);
  o.training.set_seq_len(32);
  const Schedule one = *LowerSchedule(*LoadModelSpec("opt-tiny"), *LoadCluster("local_cpu"), o);
  EXPECT_TRUE(CheckRanksOnHosts(one, *ParseHostList("localhost")).ok());
}

}  // namespace
}  // namespace zosched
