#include "runtime/calibration/nic_calibration.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace zosched {
namespace {

Cluster TwoHosts(bool nics) {
  Cluster c;
  c.set_name("pair");
  for (const char* name : {"a", "b"}) {
    c.add_hosts()->set_name(name);
    if (!nics) continue;
    Nic* nic = c.add_nics();
    nic->set_name(std::string("n") + name);
    nic->set_host(name);
    nic->set_gbps(0.1);
  }
  return c;
}

CalibrationSettings On(std::vector<std::string> hosts) {
  CalibrationSettings s;
  s.backend = "cpu";
  s.hosts = std::move(hosts);
  return s;
}

TEST(CheckNicHosts, OneMachinePerHostInTheClustersOrder) {
  EXPECT_TRUE(CheckNicHosts(On({"node1", "node2"}), TwoHosts(true)).ok());
  EXPECT_TRUE(CheckNicHosts(On({}), TwoHosts(false)).ok());
}

TEST(CheckNicHosts, RefusesWhatWouldNotCrossTheNics) {
  absl::Status none = CheckNicHosts(On({}), TwoHosts(true));
  EXPECT_EQ(none.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(none.message().find("has 2 hosts joined by NICs (a, b)"), std::string::npos) << none;
  EXPECT_NE(none.message().find("--hosts=node1,node2"), std::string::npos) << none;

  absl::Status short_list = CheckNicHosts(On({"node1"}), TwoHosts(true));
  EXPECT_NE(short_list.message().find("(1 given)"), std::string::npos) << short_list;

  absl::Status same = CheckNicHosts(On({"node1", "node1"}), TwoHosts(true));
  EXPECT_EQ(same.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(same.message().find("machine 'node1' for both host 'a' and host 'b'"),
            std::string::npos)
      << same;

  absl::Status no_nics = CheckNicHosts(On({"node1", "node2"}), TwoHosts(false));
  EXPECT_EQ(no_nics.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(no_nics.message().find("cluster 'pair' has no NICs"), std::string::npos) << no_nics;
}

}  // namespace
}  // namespace zosched
