#include "runtime/host_memory_check.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "models/accounting.h"
#include "runtime/host_store_layout.h"
#include "schedule/cluster_lookup.h"

namespace zosched {
namespace {

constexpr int64_t kUnlimited = MemoryHeadroom::kUnlimited;

std::string Gb(int64_t bytes) { return absl::StrFormat("%.2f GB", bytes * 1e-9); }

// The value in kB of "Key:  123 kB" in a /proc file, in bytes; -1 if absent.
absl::StatusOr<int64_t> ProcKilobytes(const std::string& path, absl::string_view key) {
  std::ifstream in(path);
  if (!in) return absl::InternalError(absl::StrCat("cannot read ", path));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest(line);
    if (!absl::ConsumePrefix(&rest, key) || !absl::ConsumePrefix(&rest, ":")) continue;
    rest = absl::StripAsciiWhitespace(rest);
    absl::ConsumeSuffix(&rest, " kB");
    int64_t kb = 0;
    if (absl::SimpleAtoi(rest, &kb)) return kb * 1024;
  }
  return -1;
}

// A number in a cgroup file ("max" or a huge value: no limit); -1 if absent.
int64_t CgroupNumber(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return -1;
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value >= (int64_t{1} << 60)) return -1;
  return value;
}

// The memory cgroup's room (limit less usage) and the file it came from,
// for cgroup v2 and v1, at this process's cgroup path and at the mount's
// root (a container sees its own cgroup there); kUnlimited when none.
std::pair<int64_t, std::string> CgroupRoom() {
  std::vector<std::pair<std::string, std::string>> candidates;  // limit file, usage file
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line)) {
    const std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() != 3) continue;
    if (f[1].empty()) {
      candidates.push_back({"/sys/fs/cgroup" + f[2] + "/memory.max",
                            "/sys/fs/cgroup" + f[2] + "/memory.current"});
    } else if (absl::StrContains(f[1], "memory")) {
      candidates.push_back({"/sys/fs/cgroup/memory" + f[2] + "/memory.limit_in_bytes",
                            "/sys/fs/cgroup/memory" + f[2] + "/memory.usage_in_bytes"});
    }
  }
  candidates.push_back({"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"});
  candidates.push_back({"/sys/fs/cgroup/memory/memory.limit_in_bytes",
                        "/sys/fs/cgroup/memory/memory.usage_in_bytes"});
  std::pair<int64_t, std::string> room = {kUnlimited, ""};
  for (const auto& [limit_file, usage_file] : candidates) {
    const int64_t limit = CgroupNumber(limit_file), usage = CgroupNumber(usage_file);
    if (limit < 0 || usage < 0) continue;
    if (limit - usage < room.first) room = {std::max<int64_t>(0, limit - usage), limit_file};
  }
  return room;
}

// The room under rlimit `resource` given `used` bytes, and the limit.
std::pair<int64_t, int64_t> RlimitRoom(int resource, int64_t used) {
  rlimit limit{};
  if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return {kUnlimited, kUnlimited};
  }
  const int64_t cap = static_cast<int64_t>(limit.rlim_cur);
  return {std::max<int64_t>(0, cap - used), cap};
}

}  // namespace

RankHostMemory HostMemoryOfRank(const Schedule& schedule, int device, bool arena_in_host_memory,
                                bool fp32_copies) {
  RankHostMemory m;
  const Device* cluster_device =
      FindDevice(schedule.cluster(), schedule.devices(device).cluster_device());
  if (cluster_device != nullptr) {
    m.host_store = LayOutHostStore(schedule, cluster_device->host()).bytes;
  }
  if (arena_in_host_memory) {
    for (const Buffer& b : schedule.buffers()) {
      if (b.device() == device) m.device_arena += b.size_bytes();
    }
  }
  if (device == 0 && fp32_copies) m.model_copies = TotalParams(schedule.model()) * 4;
  return m;
}

absl::StatusOr<MemoryHeadroom> ReadMemoryHeadroom() {
  MemoryHeadroom h;
  absl::StatusOr<int64_t> vm_size = ProcKilobytes("/proc/self/status", "VmSize");
  absl::StatusOr<int64_t> vm_data = ProcKilobytes("/proc/self/status", "VmData");
  absl::StatusOr<int64_t> available = ProcKilobytes("/proc/meminfo", "MemAvailable");
  for (const auto* s : {&vm_size, &vm_data, &available}) {
    if (!s->ok()) return s->status();
  }
  std::tie(h.address_space, h.address_space_limit) =
      RlimitRoom(RLIMIT_AS, std::max<int64_t>(0, *vm_size));
  std::tie(h.data, h.data_limit) = RlimitRoom(RLIMIT_DATA, std::max<int64_t>(0, *vm_data));
  if (*available >= 0) {
    h.node = *available;
    h.node_source = "MemAvailable in /proc/meminfo";
  }
  const auto [room, file] = CgroupRoom();
  if (room < h.node) {
    h.node = room;
    h.node_source = absl::StrCat("the memory cgroup's limit less its usage (", file, ")");
  }
  return h;
}

absl::Status CheckHostMemory(const Schedule& schedule, int device, bool arena_in_host_memory,
                             bool fp32_copies, const MemoryHeadroom& headroom) {
  std::vector<int> ranks;
  if (device >= 0) {
    ranks.push_back(device);
  } else {
    for (int d = 0; d < schedule.devices_size(); ++d) ranks.push_back(d);
  }
  const std::string advice =
      "raise the limit, lower the schedule with a smaller model or --host_dtype, or (for the "
      "fp32 copy) train with --final_outputs=false and no --eval_every";
  int64_t node_need = 0;
  std::set<std::string> stores_counted;
  std::string node_parts;
  for (int r : ranks) {
    const RankHostMemory m = HostMemoryOfRank(schedule, r, arena_in_host_memory, fp32_copies);
    const std::string what = absl::StrFormat(
        "%s needs about %s of host memory (parameter store %s, device arena %s, fp32 model "
        "copy %s)",
        device >= 0 ? "this rank" : absl::StrFormat("rank %d", r), Gb(m.Total()),
        Gb(m.host_store), Gb(m.device_arena), Gb(m.model_copies));
    // The store is shared memory: it counts against the address space but
    // not against RLIMIT_DATA, which limits private memory.
    if (m.Total() > headroom.address_space) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "%s, but this process may map only %s more (ulimit -v is %s): short by %s; %s", what,
          Gb(headroom.address_space), Gb(headroom.address_space_limit),
          Gb(m.Total() - headroom.address_space), advice));
    }
    const int64_t private_need = m.device_arena + m.model_copies;
    if (private_need > headroom.data) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "%s, of which %s private, but this process may allocate only %s more (ulimit -d is "
          "%s): short by %s; %s",
          what, Gb(private_need), Gb(headroom.data), Gb(headroom.data_limit),
          Gb(private_need - headroom.data), advice));
    }
    node_need += private_need;
    const Device* cluster_device =
        FindDevice(schedule.cluster(), schedule.devices(r).cluster_device());
    if (cluster_device != nullptr && stores_counted.insert(cluster_device->host()).second) {
      node_need += m.host_store;
    }
  }
  if (node_need > headroom.node) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s need about %s of host memory (parameter stores, device arenas and rank 0's fp32 "
        "model copy), but %s is %s: short by %s; %s",
        device >= 0 ? "this rank's parameter store and arena"
                    : absl::StrFormat("the %d ranks of this node", static_cast<int>(ranks.size())),
        Gb(node_need), headroom.node_source, Gb(headroom.node), Gb(node_need - headroom.node),
        advice));
  }
  return absl::OkStatus();
}

}  // namespace zosched
