#include "sim/network.h"

#include "absl/strings/str_format.h"
#include "base/textproto.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

// Two devices on one host, each behind its own host link, in one peer domain.
Cluster TinyCluster(double memory_gbps) {
  Cluster c;
  EXPECT_TRUE(ParseTextProto(absl::StrFormat(R"pb(
    name: "tiny"
    hosts { name: "h" memory_bytes: 1000000000 memory_bandwidth_gbps: %f cores: 2 }
    peer_domains { name: "nv" link_class: NVLINK gbps_per_device: 20 latency_s: 5e-7 }
    devices {
      name: "g0" host: "h" peer_domain: "nv"
      host_link { link_class: PCIE down_gbps: 10 up_gbps: 10 latency_s: 1e-6 }
    }
    devices {
      name: "g1" host: "h" peer_domain: "nv"
      host_link { link_class: PCIE down_gbps: 10 up_gbps: 8 duplex_gbps: 12 latency_s: 2e-6 }
    }
  )pb", memory_gbps), "inline", &c).ok());
  return c;
}

int LinkNamed(const Network& n, const std::string& name) {
  for (size_t i = 0; i < n.links().size(); ++i) {
    if (n.links()[i].name == name) return i;
  }
  ADD_FAILURE() << "no link " << name;
  return -1;
}

TEST(Network, PathsCrossTheRightLinks) {
  absl::StatusOr<Network> n = Network::Build(TinyCluster(100));
  ASSERT_TRUE(n.ok()) << n.status();
  Path h2d = n->HostToDevice(1);
  EXPECT_EQ(h2d.links, (std::vector<int>{LinkNamed(*n, "h/memory"),
                                         LinkNamed(*n, "g1/host_link down"),
                                         LinkNamed(*n, "g1/host_link duplex")}));
  EXPECT_EQ(h2d.latency_ns, 2000);
  Path d2h = n->DeviceToHost(0);
  EXPECT_EQ(d2h.links, (std::vector<int>{LinkNamed(*n, "g0/host_link up"),
                                         LinkNamed(*n, "h/memory")}));
  absl::StatusOr<Path> peer = n->DeviceToDevice(0, 1);
  ASSERT_TRUE(peer.ok());
  EXPECT_EQ(peer->links, (std::vector<int>{LinkNamed(*n, "g0/nv out"), LinkNamed(*n, "g1/nv in")}));
  EXPECT_EQ(peer->latency_ns, 500);
  EXPECT_EQ(peer->link_class, NVLINK);
  EXPECT_DOUBLE_EQ(n->links()[LinkNamed(*n, "g1/host_link up")].capacity, 8);
}

// Two hosts of one device each, joined by NICs whose directions differ
// (as calibrate --hosts measures them).
TEST(Network, NicInRateSetsTheIncomingDirection) {
  Cluster c;
  ASSERT_TRUE(ParseTextProto(R"pb(
    name: "two"
    hosts { name: "a" memory_bytes: 1000000000 memory_bandwidth_gbps: 50 cores: 2 }
    hosts { name: "b" memory_bytes: 1000000000 memory_bandwidth_gbps: 50 cores: 2 }
    nics { name: "na" host: "a" gbps: 0.1 latency_s: 1e-5 in_gbps: 0.09 }
    nics { name: "nb" host: "b" gbps: 0.2 latency_s: 3e-5 }
    devices {
      name: "d0" host: "a" nic: "na"
      host_link { link_class: PCIE down_gbps: 10 up_gbps: 10 latency_s: 1e-6 }
    }
    devices {
      name: "d1" host: "b" nic: "nb"
      host_link { link_class: PCIE down_gbps: 10 up_gbps: 10 latency_s: 1e-6 }
    }
  )pb", "inline", &c).ok());
  absl::StatusOr<Network> n = Network::Build(c);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_DOUBLE_EQ(n->links()[LinkNamed(*n, "na out")].capacity, 0.1);
  EXPECT_DOUBLE_EQ(n->links()[LinkNamed(*n, "na in")].capacity, 0.09);
  EXPECT_DOUBLE_EQ(n->links()[LinkNamed(*n, "nb out")].capacity, 0.2);
  EXPECT_DOUBLE_EQ(n->links()[LinkNamed(*n, "nb in")].capacity, 0.2);  // in_gbps unset: gbps
  absl::StatusOr<Path> back = n->DeviceToDevice(1, 0);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->links, (std::vector<int>{LinkNamed(*n, "d1/host_link up"), LinkNamed(*n, "nb out"),
                                           LinkNamed(*n, "na in"), LinkNamed(*n, "d0/host_link down")}));
  EXPECT_EQ(back->latency_ns, 30000 + 1000);  // the sender's NIC and host link
  EXPECT_EQ(back->link_class, NETWORK);
}

TEST(Network, MeasuredHostLinkReplacesTheDatasheet) {
  Cluster c = TinyCluster(100);
  for (auto [bytes, seconds] : {std::pair<int64_t, double>{1000000, 1e-5 + 1e6 / 4e9},
                                {4000000, 1e-5 + 4e6 / 4e9}}) {
    MeasuredTransfer* m = c.add_measured_transfers();
    m->set_link("g0/host_link");
    m->set_bytes(bytes);
    m->set_seconds(seconds);
  }
  absl::StatusOr<Network> n = Network::Build(c);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_NEAR(n->links()[LinkNamed(*n, "g0/host_link down")].capacity, 4, 1e-9);
  EXPECT_EQ(n->HostToDevice(0).latency_ns, 10000);
  c.mutable_measured_transfers()->RemoveLast();
  EXPECT_EQ(Network::Build(c).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CeilNs, RoundsUpButForgivesFloatingPointNoise) {
  EXPECT_EQ(CeilNs(1e-6), 1000);
  EXPECT_EQ(CeilNs(1.0000001e-6), 1001);
  EXPECT_EQ(CeilNs(0.1 + 0.2), 300000000);  // 0.30000000000000004 s
  EXPECT_EQ(CeilNs(1e6 / 25e9), 40000);
}

}  // namespace
}  // namespace zosched
