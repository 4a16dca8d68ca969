#include "runtime/host_list.h"

#include <fstream>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "schedule/cluster_lookup.h"

namespace zosched {
namespace {

constexpr int kMaxSlots = 4096;

absl::StatusOr<NodeSlots> ParseEntry(absl::string_view entry) {
  NodeSlots n;
  const std::vector<absl::string_view> parts = absl::StrSplit(entry, absl::MaxSplits(':', 1));
  n.node = std::string(absl::StripAsciiWhitespace(parts[0]));
  if (n.node.empty() || n.node.find_first_of(" \t") != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("'%s' is not a machine (expected name or name:slots)", entry));
  }
  if (parts.size() == 2 && (!absl::SimpleAtoi(parts[1], &n.slots) || n.slots < 1 ||
                            n.slots > kMaxSlots)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s': slots '%s' is not a whole number from 1 to %d", entry, parts[1], kMaxSlots));
  }
  return n;
}

absl::Status CheckDistinct(const std::vector<NodeSlots>& nodes) {
  std::set<std::string> seen;
  for (const NodeSlots& n : nodes) {
    if (!seen.insert(n.node).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "machine '%s' is listed twice (give it once, with all its slots)", n.node));
    }
  }
  return absl::OkStatus();
}

// The schedule's hosts in device order, each with its device count, as a
// host list that fits: "node1:2,node2:2".
std::string FittingList(const Schedule& schedule) {
  std::vector<NodeSlots> hosts;
  for (const ScheduleDevice& d : schedule.devices()) {
    const Device* device = FindDevice(schedule.cluster(), d.cluster_device());
    const std::string host = device != nullptr ? device->host() : "?";
    if (hosts.empty() || hosts.back().node != host) {
      hosts.push_back({host, 0});
    }
    ++hosts.back().slots;
  }
  return HostListFlag(hosts);
}

}  // namespace

absl::StatusOr<std::vector<NodeSlots>> ParseHostList(const std::string& text) {
  std::vector<NodeSlots> nodes;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    absl::StatusOr<NodeSlots> n = ParseEntry(entry);
    if (!n.ok()) return absl::InvalidArgumentError(absl::StrCat("--hosts: ", n.status().message()));
    nodes.push_back(*n);
  }
  if (absl::Status distinct = CheckDistinct(nodes); !distinct.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--hosts: ", distinct.message()));
  }
  return nodes;
}

absl::StatusOr<std::vector<NodeSlots>> ReadHostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrFormat("--hostfile '%s' cannot be read", path));
  std::vector<NodeSlots> nodes;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = absl::StrFormat("%s:%d", path, number);
    const absl::string_view content =
        absl::StripAsciiWhitespace(absl::string_view(line).substr(0, line.find('#')));
    if (content.empty()) continue;
    const std::vector<absl::string_view> words =
        absl::StrSplit(content, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    std::string entry(words[0]);
    for (size_t w = 1; w < words.size(); ++w) {
      if (!absl::StartsWith(words[w], "slots=") || w > 1) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: '%s' is not understood (expected 'name' or 'name slots=N')", where, words[w]));
      }
      absl::StrAppend(&entry, ":", words[w].substr(6));
    }
    absl::StatusOr<NodeSlots> n = ParseEntry(entry);
    if (!n.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", n.status().message()));
    nodes.push_back(*n);
  }
  if (nodes.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s lists no machine", path));
  }
  if (absl::Status distinct = CheckDistinct(nodes); !distinct.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", distinct.message()));
  }
  return nodes;
}

std::string HostListFlag(const std::vector<NodeSlots>& nodes) {
  return absl::StrJoin(nodes, ",", [](std::string* out, const NodeSlots& n) {
    absl::StrAppend(out, n.node, ":", n.slots);
  });
}

absl::Status CheckRanksOnHosts(const Schedule& schedule, const std::vector<NodeSlots>& nodes) {
  const int devices = schedule.devices_size();
  int slots = 0;
  for (const NodeSlots& n : nodes) slots += n.slots;
  const std::string fits = FittingList(schedule);
  if (slots != devices) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the machines give %d slots (%s) but the schedule '%s' has %d devices, a rank each: "
        "give each machine as many slots as the schedule puts devices on its host, in order "
        "(its hosts: %s)",
        slots, HostListFlag(nodes), schedule.name(), devices, fits));
  }
  std::vector<std::string> host_of(devices);
  for (int d = 0; d < devices; ++d) {
    const Device* device = FindDevice(schedule.cluster(), schedule.devices(d).cluster_device());
    host_of[d] = device != nullptr ? device->host() : "";
  }
  int rank = 0;
  std::set<std::string> placed;  // schedule hosts already given a machine
  for (const NodeSlots& n : nodes) {
    const std::string& host = host_of[rank];
    if (!placed.insert(host).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "rank %d (device '%s' of schedule host '%s') would start on '%s', but host '%s' "
          "already has ranks on an earlier machine: a host's devices share one machine's "
          "memory, so list the machines with each host's devices in schedule order (its "
          "hosts: %s)",
          rank, schedule.devices(rank).cluster_device(), host, n.node, host, fits));
    }
    for (int r = rank; r < rank + n.slots; ++r) {
      if (host_of[r] != host) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "rank %d (device '%s' of schedule host '%s') would start on '%s' beside rank %d "
            "of host '%s': the ranks of one machine must be the devices of one schedule host "
            "(they share its parameter store), so list the machines with each host's devices "
            "in schedule order (its hosts: %s)",
            r, schedule.devices(r).cluster_device(), host_of[r], n.node, rank, host, fits));
      }
    }
    rank += n.slots;
    if (rank < devices && host_of[rank] == host) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "'%s' gets %d of schedule host '%s''s devices and rank %d (device '%s', the same "
          "host) would start on the next machine: a host's devices share one machine's memory "
          "(its hosts: %s)",
          n.node, n.slots, host, rank, schedule.devices(rank).cluster_device(), fits));
    }
  }
  return absl::OkStatus();
}

}  // namespace zosched
