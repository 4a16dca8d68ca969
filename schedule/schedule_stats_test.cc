#include "schedule/schedule_stats.h"

#include "base/textproto.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(ComputeDeviceStats, SumsCostsTrafficAndThePlanPerDevice) {
  Schedule s;
  ASSERT_TRUE(ParseTextProto(R"pb(
    devices { id: 0 cluster_device: "gpu0" }
    devices { id: 1 cluster_device: "gpu1" }
    buffers { name: "host/params" device: -1 size_bytes: 1000 }
    buffers { name: "d0/slot" device: 0 size_bytes: 300 }
    buffers { name: "d0/act" device: 0 size_bytes: 50 }
    buffers { name: "d1/slot" device: 1 size_bytes: 300 }
    ops { id: 0 device: 0 stream: "h2d" copy { direction: HOST_TO_DEVICE bytes: 100 link_class: PCIE } }
    ops { id: 1 device: 0 stream: "d2h" copy { direction: DEVICE_TO_HOST bytes: 40 link_class: PCIE } }
    ops { id: 2 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 7 } }
    ops { id: 3 device: 0 stream: "compute" compute { kind: BLOCK_FORWARD flops: 8 } }
    ops { id: 4 device: 0 stream: "collective"
          collective { kind: ALL_GATHER participants: [0, 1] bytes: 300 link_class: NVLINK } }
    ops { id: 5 device: 1 stream: "collective"
          collective { kind: ALL_GATHER participants: [0, 1] bytes: 300 } }
    ops { id: 6 device: 1 stream: "collective"
          collective { kind: ALL_REDUCE participants: [0, 1] bytes: 10 } }
    ops { id: 7 device: 1 stream: "collective"
          collective { kind: BROADCAST participants: [1, 0] bytes: 10 } }
  )pb", "inline", &s).ok());
  std::vector<DeviceStats> stats = ComputeDeviceStats(s);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].cluster_device, "gpu0");
  EXPECT_EQ(stats[0].flops, 15);
  EXPECT_EQ(stats[0].h2d_bytes, 100);
  EXPECT_EQ(stats[0].d2h_bytes, 40);
  EXPECT_EQ(stats[0].collective_bytes, 150);  // (n-1)/n of the gathered buffer
  EXPECT_EQ(stats[0].memory_bytes, 350);      // host buffers are not device memory
  EXPECT_EQ(stats[0].ops_by_kind.at("BLOCK_FORWARD"), 2);
  EXPECT_EQ(stats[0].bytes_by_link_class.at(PCIE), 140);
  EXPECT_EQ(stats[0].bytes_by_link_class.at(NVLINK), 150);
  EXPECT_EQ(stats[0].ops_by_kind.at("copy HOST_TO_DEVICE"), 1);
  // 150 gathered + 2(n-1)/n · 10 reduced + nothing for the broadcast's root.
  EXPECT_EQ(stats[1].collective_bytes, 150 + 10 + 0);
  EXPECT_EQ(stats[1].memory_bytes, 300);
}

}  // namespace
}  // namespace zosched
