#include "sim/compute_speed.h"

#include <utility>
#include <vector>

#include "base/textproto.h"
#include "gtest/gtest.h"
#include "sim/host_cores.h"

namespace zosched {
namespace {

// Devices 0 and 1 share host "cpu" (2 cores, 1.25× slower when both
// compute); device 2 is a GPU that computes 2× slower while it copies;
// device 3 a GPU nothing slows down.
Schedule FourDevices() {
  Schedule s;
  EXPECT_TRUE(ParseTextProto(R"pb(
    cluster {
      hosts { name: "cpu" cores: 2 shared_core_slowdown: 1.25 }
      hosts { name: "gpu_host" }
      devices { name: "c0" host: "cpu" shares_host_cores: true }
      devices { name: "c1" host: "cpu" shares_host_cores: true }
      devices { name: "g0" host: "gpu_host" compute_slowdown_under_comm: 2 }
      devices { name: "g1" host: "gpu_host" }
    }
    devices { id: 0 cluster_device: "c0" }
    devices { id: 1 cluster_device: "c1" }
    devices { id: 2 cluster_device: "g0" }
    devices { id: 3 cluster_device: "g1" }
  )pb", "inline", &s).ok());
  return s;
}

// HostCores::Speed's `alone`: no slowdown under communication.
constexpr double kAlone = 1;

TEST(HostCores, CoreSharingDevicesComputeOnTheirOwnCoresAndSlowEachOther) {
  absl::StatusOr<HostCores> cores = HostCores::Build(FourDevices(), {0, 1, 2, 3});
  ASSERT_TRUE(cores.ok()) << cores.status();
  EXPECT_TRUE(cores->SharesCores(0));
  EXPECT_EQ(cores->CoreMates(0), (std::vector<int>{0, 1}));
  EXPECT_TRUE(cores->ComputeStarted(0));
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 1);  // alone: a whole core
  EXPECT_TRUE(cores->ComputeStarted(1));
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 1 / 1.25);  // each on its core, sharing caches
  EXPECT_TRUE(cores->ComputeStarted(0));
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 0.5 / 1.25);  // two ops on core 0
  EXPECT_DOUBLE_EQ(cores->Speed(1, kAlone), 1 / 1.25);    // core 1 is device 1's alone
  EXPECT_TRUE(cores->ComputeEnded(0));
  EXPECT_TRUE(cores->ComputeEnded(0));
  EXPECT_EQ(cores->Reschedule(), nullptr);  // nobody waits for core 0
  EXPECT_DOUBLE_EQ(cores->Speed(1, kAlone), 1);
}

// Devices 0 and 2 compute on core 0 of 2 (one host).
Schedule ThreeDevicesOnTwoCores() {
  Schedule s = FourDevices();
  s.mutable_cluster()->mutable_devices(2)->set_host("cpu");
  s.mutable_cluster()->mutable_devices(2)->set_shares_host_cores(true);
  return s;
}

// The last Reschedule's hand-offs as (from, to) pairs.
std::vector<std::pair<int, int>> Handoffs(const HostCores& cores) {
  std::vector<std::pair<int, int>> pairs;
  for (const HostCores::Handoff& h : cores.Handoffs()) pairs.emplace_back(h.from, h.to);
  return pairs;
}
using Pairs = std::vector<std::pair<int, int>>;

TEST(HostCores, DevicesOfOneHostTakeTurnsOnACoreInTheOrderTheyAsked) {
  absl::StatusOr<HostCores> cores = HostCores::Build(ThreeDevicesOnTwoCores(), {0, 1, 2, 3});
  ASSERT_TRUE(cores.ok()) << cores.status();
  EXPECT_TRUE(cores->ComputeStarted(0));  // an idle core runs it at once
  EXPECT_TRUE(cores->ComputeStarted(2));  // it waits for device 0's turn to end
  EXPECT_EQ(cores->Reschedule(), nullptr);
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 1);
  EXPECT_DOUBLE_EQ(cores->Speed(2, kAlone), 0);
  // Device 0's copy preempts it at 100 and gives the core back at 150:
  // device 0 keeps its turn.
  EXPECT_TRUE(cores->TransferCpuChanged(0, +1));
  EXPECT_EQ(cores->Reschedule(), nullptr);
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 0);
  EXPECT_TRUE(cores->TransferCpuChanged(0, -1));
  EXPECT_EQ(cores->Reschedule(), nullptr);
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 1);
  EXPECT_DOUBLE_EQ(cores->Speed(2, kAlone), 0);
  // Its op ends and its next is ready at once: that one queues behind
  // device 2's, which asked at 50.
  EXPECT_TRUE(cores->ComputeEnded(0));
  EXPECT_TRUE(cores->ComputeStarted(0));
  ASSERT_NE(cores->Reschedule(), nullptr);
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 0);
  EXPECT_DOUBLE_EQ(cores->Speed(2, kAlone), 1);
  EXPECT_EQ(Handoffs(*cores), (Pairs{{0, 2}}));  // device 2 was asleep on its turn
  // Device 2's op ends with none after it: device 0's turn.
  EXPECT_TRUE(cores->ComputeEnded(2));
  ASSERT_NE(cores->Reschedule(), nullptr);
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 1);
  EXPECT_EQ(Handoffs(*cores), (Pairs{{2, 0}}));
  // Device 2's next op at 600 waits for the end of device 0's, though
  // device 0 has had more of the core.
  EXPECT_TRUE(cores->ComputeStarted(2));
  EXPECT_TRUE(cores->TransferCpuChanged(2, +1));
  EXPECT_TRUE(cores->TransferCpuChanged(2, -1));
  EXPECT_EQ(cores->Reschedule(), nullptr);
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 1);
  EXPECT_DOUBLE_EQ(cores->Speed(2, kAlone), 0);
  // Device 0's op ends at 700: device 2's turn; device 2's ends at 800 with
  // none after it and device 0's next asked at 700: device 0's turn. Its op
  // ends at 900 and its next is ready at once, nobody waiting: it runs on,
  // once the turn is decided at the end of 900.
  EXPECT_TRUE(cores->ComputeEnded(0));
  EXPECT_TRUE(cores->ComputeStarted(0));
  ASSERT_NE(cores->Reschedule(), nullptr);
  EXPECT_DOUBLE_EQ(cores->Speed(2, kAlone), 1);
  EXPECT_TRUE(cores->ComputeEnded(2));
  ASSERT_NE(cores->Reschedule(), nullptr);
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 1);
  EXPECT_TRUE(cores->ComputeEnded(0));
  EXPECT_TRUE(cores->ComputeStarted(0));
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 0);  // not yet its turn again
  ASSERT_NE(cores->Reschedule(), nullptr);
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 1);
  EXPECT_TRUE(cores->Handoffs().empty());  // its own thread went on: nothing woken
  // Its op ends with none after it; device 2's op starts on the idle core
  // later, its thread never asleep on the turn: no hand-off either.
  EXPECT_TRUE(cores->ComputeEnded(0));
  cores->Reschedule();
  EXPECT_TRUE(cores->Handoffs().empty());
  EXPECT_TRUE(cores->ComputeStarted(2));
  EXPECT_DOUBLE_EQ(cores->Speed(2, kAlone), 1);
  cores->Reschedule();
  EXPECT_TRUE(cores->Handoffs().empty());
}

TEST(HostCores, AStepsFirstTurnsOnACoreGoInDeviceOrder) {
  absl::StatusOr<HostCores> cores = HostCores::Build(ThreeDevicesOnTwoCores(), {0, 1, 2, 3});
  ASSERT_TRUE(cores.ok()) << cores.status();
  // Device 2's first op is ready at 0, device 0's at 100: the core idles
  // until device 0's, whose place is first.
  EXPECT_TRUE(cores->ComputeStarted(2));
  EXPECT_EQ(cores->Reschedule(), nullptr);
  EXPECT_DOUBLE_EQ(cores->Speed(2, kAlone), 0);
  EXPECT_TRUE(cores->ComputeStarted(0));
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 1);
  EXPECT_DOUBLE_EQ(cores->Speed(2, kAlone), 0);
  EXPECT_TRUE(cores->ComputeEnded(0));
  ASSERT_NE(cores->Reschedule(), nullptr);
  EXPECT_DOUBLE_EQ(cores->Speed(2, kAlone), 1);
}

TEST(HostCores, CopiesTakeHostCpuFromTheirDevicesCore) {
  absl::StatusOr<HostCores> cores = HostCores::Build(FourDevices(), {0, 1, 2, 3});
  ASSERT_TRUE(cores.ok()) << cores.status();
  EXPECT_TRUE(cores->ComputeStarted(0));
  EXPECT_TRUE(cores->TransferCpuChanged(1, +1));  // device 1's core: no change here
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 1);
  EXPECT_TRUE(cores->ComputeStarted(1));
  EXPECT_DOUBLE_EQ(cores->Speed(1, kAlone), 0);  // its copy takes its core: compute stalls
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 1 / 1.25);
  EXPECT_TRUE(cores->TransferCpuChanged(0, +1));
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 0);
  EXPECT_TRUE(cores->TransferCpuChanged(0, -1));
  EXPECT_TRUE(cores->TransferCpuChanged(1, -1));
  EXPECT_EQ(cores->Reschedule(), nullptr);
  EXPECT_DOUBLE_EQ(cores->Speed(1, kAlone), 1 / 1.25);
  EXPECT_FALSE(cores->TransferCpuChanged(2, +1));  // not core-sharing
}

TEST(HostCores, WithACoreToSpareCopiesTakeNothingFromCompute) {
  Schedule s = FourDevices();
  s.mutable_cluster()->mutable_hosts(0)->set_cores(3);
  absl::StatusOr<HostCores> cores = HostCores::Build(s, {0, 1, 2, 3});
  ASSERT_TRUE(cores.ok()) << cores.status();
  EXPECT_TRUE(cores->ComputeStarted(0));
  EXPECT_FALSE(cores->TransferCpuChanged(0, +1));
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 1);
}

// A wake-up call takes the waking thread's core: a compute stream's is the
// device's compute core even with cores to spare (the mates computing
// there stall), a copy stream's only where transfers take compute cores.
TEST(HostCores, WakingAStreamTakesTheWakingThreadsCore) {
  absl::StatusOr<HostCores> cores = HostCores::Build(ThreeDevicesOnTwoCores(), {0, 1, 2, 3});
  ASSERT_TRUE(cores.ok()) << cores.status();
  EXPECT_TRUE(cores->ComputeStarted(0));
  EXPECT_TRUE(cores->SignalCpuChanged(2, /*compute=*/true, +1));
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 0);  // device 2's wake-up call holds core 0
  EXPECT_TRUE(cores->SignalCpuChanged(2, /*compute=*/true, -1));
  EXPECT_EQ(cores->Reschedule(), nullptr);
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 1);
  EXPECT_FALSE(cores->SignalCpuChanged(3, /*compute=*/true, +1));  // a GPU: no host core

  Schedule spare = FourDevices();
  spare.mutable_cluster()->mutable_hosts(0)->set_cores(3);
  cores = HostCores::Build(spare, {0, 1, 2, 3});
  ASSERT_TRUE(cores.ok()) << cores.status();
  EXPECT_TRUE(cores->ComputeStarted(0));
  EXPECT_FALSE(cores->SignalCpuChanged(0, /*compute=*/false, +1));  // a copy's: spare core
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 1);
  EXPECT_TRUE(cores->SignalCpuChanged(0, /*compute=*/true, +1));
  EXPECT_DOUBLE_EQ(cores->Speed(0, kAlone), 0);
}

TEST(ComputeSpeed, CommunicationSlowsOnlyTheDevicesItIsSetFor) {
  const Schedule s = FourDevices();
  ComputeSpeed speed = ComputeSpeed::Build(s, {0, 1, 2, 3});
  EXPECT_FALSE(speed.Constant(2));
  EXPECT_TRUE(speed.Constant(3));
  absl::StatusOr<HostCores> cores = HostCores::Build(s, {0, 1, 2, 3});
  ASSERT_TRUE(cores.ok()) << cores.status();
  EXPECT_EQ(cores->CoreMates(2), (std::vector<int>{2}));
  EXPECT_FALSE(cores->ComputeStarted(2));  // no core group
  EXPECT_TRUE(speed.CommChanged(2, +1));
  EXPECT_DOUBLE_EQ(speed.Speed(2), 0.5);
  EXPECT_FALSE(speed.CommChanged(2, +1));  // a second transfer changes nothing
  EXPECT_FALSE(speed.CommChanged(2, -1));
  EXPECT_TRUE(speed.CommChanged(2, -1));
  EXPECT_DOUBLE_EQ(speed.Speed(2), 1);
  EXPECT_FALSE(speed.CommChanged(3, +1));  // device 3 is never slowed
  EXPECT_DOUBLE_EQ(speed.Speed(3), 1);
}

TEST(HostCores, ACoreSharingHostWithoutCoresIsAnError) {
  Schedule s = FourDevices();
  s.mutable_cluster()->mutable_hosts(0)->set_cores(0);
  absl::StatusOr<HostCores> cores = HostCores::Build(s, {0, 1, 2, 3});
  EXPECT_EQ(cores.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(cores.status().message(),
            "device 'c0' shares its host's cores, but host 'cpu' has no `cores`");
}

}  // namespace
}  // namespace zosched
