#include "runtime/host_memory_check.h"

#include <sys/resource.h>

#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "models/accounting.h"
#include "models/model_zoo.h"
#include "runtime/host_store_layout.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"
#include "schedule/training_settings.h"

namespace zosched {
namespace {

Schedule Lowered(StrategyKind strategy, int pertp) {
  absl::StatusOr<ModelSpec> model = LoadModelSpec("opt-tiny");
  absl::StatusOr<Cluster> cluster = LoadCluster("local_cpu");
  EXPECT_TRUE(model.ok() && cluster.ok());
  LowerOptions o;
  o.strategy = strategy;
  o.pertp = pertp;
  o.training = DefaultTrainingSettings();
  absl::StatusOr<Schedule> s = LowerSchedule(*model, *cluster, o);
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

MemoryHeadroom Plenty() { return MemoryHeadroom{}; }

TEST(HostMemoryOfRank, CountsTheStoreTheArenaAndRankZerosCopy) {
  const Schedule s = Lowered(DISTZO2, 2);
  int64_t arena1 = 0;
  for (const Buffer& b : s.buffers()) arena1 += b.device() == 1 ? b.size_bytes() : 0;
  const RankHostMemory r0 = HostMemoryOfRank(s, 0, true, true);
  const RankHostMemory r1 = HostMemoryOfRank(s, 1, true, true);
  EXPECT_EQ(r0.host_store, LayOutHostStore(s, "local").bytes);
  EXPECT_GT(r0.host_store, 0);
  EXPECT_EQ(r1.device_arena, arena1);
  EXPECT_EQ(r0.model_copies, TotalParams(s.model()) * 4);
  EXPECT_EQ(r1.model_copies, 0);  // rank 0 alone evaluates and saves
  // A GPU backend keeps the arena on the GPU; without final outputs no copy.
  const RankHostMemory gpu = HostMemoryOfRank(s, 0, false, false);
  EXPECT_EQ(gpu.device_arena, 0);
  EXPECT_EQ(gpu.model_copies, 0);
  EXPECT_EQ(gpu.Total(), r0.host_store);
}

TEST(CheckHostMemory, PassesWithRoom) {
  EXPECT_TRUE(CheckHostMemory(Lowered(ZO2, 1), -1, true, true, Plenty()).ok());
}

TEST(CheckHostMemory, NamesTheAddressSpaceShortfall) {
  const Schedule s = Lowered(ZO2, 1);
  const int64_t need = HostMemoryOfRank(s, 0, true, true).Total();
  MemoryHeadroom h;
  h.address_space = need - 1000;
  h.address_space_limit = 600000 * 1024LL;
  const absl::Status status = CheckHostMemory(s, -1, true, true, h);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(status.message(), "rank 0 needs about")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "ulimit -v is 0.61 GB")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "short by 0.00 GB")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "--final_outputs=false")) << status;
  // Without the fp32 copy it fits.
  h.address_space = need - HostMemoryOfRank(s, 0, true, true).model_copies;
  EXPECT_TRUE(CheckHostMemory(s, -1, true, false, h).ok());
}

TEST(CheckHostMemory, TheDataLimitCountsPrivateMemoryOnly) {
  const Schedule s = Lowered(ZO2, 1);
  const RankHostMemory m = HostMemoryOfRank(s, 0, true, true);
  MemoryHeadroom h;
  h.data = m.device_arena + m.model_copies;  // the store is shared: not counted
  EXPECT_TRUE(CheckHostMemory(s, 0, true, true, h).ok());
  h.data -= 1;
  const absl::Status status = CheckHostMemory(s, 0, true, true, h);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(status.message(), "ulimit -d")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "this rank needs about")) << status;
}

TEST(CheckHostMemory, TheNodeHoldsEachHostsStoreOnce) {
  const Schedule s = Lowered(DISTZO2, 2);
  const RankHostMemory r0 = HostMemoryOfRank(s, 0, true, true);
  const RankHostMemory r1 = HostMemoryOfRank(s, 1, true, true);
  const int64_t node = r0.Total() + r1.device_arena;  // one store for both ranks
  MemoryHeadroom h;
  h.node = node;
  h.node_source = "MemAvailable in /proc/meminfo";
  EXPECT_TRUE(CheckHostMemory(s, -1, true, true, h).ok());
  h.node = node - 1;
  const absl::Status status = CheckHostMemory(s, -1, true, true, h);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(status.message(), "the 2 ranks of this node need about")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "MemAvailable in /proc/meminfo")) << status;
}

// This process's address space in use (VmSize), in bytes.
int64_t VmSizeBytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  int64_t kb = 0;
  while (status >> key) {
    if (key == "VmSize:" && status >> kb) return kb * 1024;
  }
  return -1;
}

TEST(ReadMemoryHeadroom, SeesTheAddressSpaceLimit) {
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
  absl::StatusOr<MemoryHeadroom> before = ReadMemoryHeadroom();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_GT(before->node, 0);
  // 4 GiB more than this process maps now (a sanitizer's shadow memory
  // included), as the soft limit; restored after.
  const int64_t in_use = VmSizeBytes();
  ASSERT_GT(in_use, 0);
  const int64_t limit = in_use + (int64_t{4} << 30);
  if (old.rlim_max != RLIM_INFINITY && static_cast<int64_t>(old.rlim_max) < limit) {
    GTEST_SKIP() << "the hard limit is below what the test sets";
  }
  rlimit lower = old;
  lower.rlim_cur = static_cast<rlim_t>(limit);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &lower), 0);
  absl::StatusOr<MemoryHeadroom> limited = ReadMemoryHeadroom();
  ASSERT_EQ(setrlimit(RLIMIT_AS, &old), 0);
  ASSERT_TRUE(limited.ok()) << limited.status();
  EXPECT_EQ(limited->address_space_limit, limit);
  // The limit less what is mapped: about 4 GiB (reading /proc maps a little).
  EXPECT_LE(limited->address_space, int64_t{4} << 30);
  EXPECT_GT(limited->address_space, int64_t{3} << 30);
}

}  // namespace
}  // namespace zosched
