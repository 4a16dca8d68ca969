#include "runtime/calibration/nic_calibration.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/line_fit.h"
#include "base/median.h"
#include "base/status_macros.h"
#include "runtime/calibration/collective_calibration.h"
#include "runtime/calibration/probe_runner.h"

namespace zosched {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One message of `bytes` from rank `from` to the other, answered by a
// 1-byte reply: the sender's seconds from sending to the reply (the
// receiver returns 0).
double TimeMessage(int rank, int from, std::vector<char>& buffer, int64_t bytes) {
  const int other = 1 - rank;
  char reply = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const Clock::time_point start = Clock::now();
  if (rank == from) {
    MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_CHAR, other, 0, MPI_COMM_WORLD);
    MPI_Recv(&reply, 1, MPI_CHAR, other, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return Since(start);
  }
  MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_CHAR, from, 0, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  MPI_Send(&reply, 1, MPI_CHAR, from, 1, MPI_COMM_WORLD);
  return 0;
}

// The NIC of host `host` in `out`, or nullptr.
Nic* NicOf(Cluster* out, const std::string& host) {
  for (Nic& n : *out->mutable_nics()) {
    if (n.host() == host) return &n;
  }
  return nullptr;
}

}  // namespace

absl::Status CheckNicHosts(const CalibrationSettings& settings, const Cluster& cluster) {
  const int given = static_cast<int>(settings.hosts.size());
  if (cluster.nics_size() == 0) {
    if (given == 0) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "--hosts: cluster '%s' has no NICs between hosts; --hosts is for clusters whose hosts "
        "are (two_node_cpu), or leave it out",
        cluster.name()));
  }
  if (given != cluster.hosts_size()) {
    std::vector<std::string> names;
    for (const Host& h : cluster.hosts()) names.push_back(h.name());
    return absl::InvalidArgumentError(absl::StrFormat(
        "cluster '%s' has %d hosts joined by NICs (%s): --hosts must name one machine for each, "
        "in that order (%d given), e.g. --hosts=node1,node2 on the two-node testbed "
        "(tools/two_node_testbed.sh up)",
        cluster.name(), cluster.hosts_size(), absl::StrJoin(names, ", "), given));
  }
  for (int a = 0; a < given; ++a) {
    for (int b = a + 1; b < given; ++b) {
      if (settings.hosts[a] == settings.hosts[b]) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--hosts names machine '%s' for both host '%s' and host '%s': each host needs a "
            "machine of its own, or its NIC is not crossed",
            settings.hosts[a], cluster.hosts(a).name(), cluster.hosts(b).name()));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status NicProbe(const CalibrationSettings& settings, const std::string& path) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world != 2) {
    return absl::InternalError(absl::StrFormat("the NIC probe runs on 2 ranks, not %d", world));
  }
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  char names[2][MPI_MAX_PROCESSOR_NAME] = {};
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                MPI_COMM_WORLD);
  if (std::string(names[0]) == names[1]) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the NIC probe's two ranks both ran on machine '%s': --hosts must name a different "
        "machine for each host of the cluster",
        names[0]));
  }
  std::vector<int64_t> sizes;
  for (int64_t bytes = 4 << 10; bytes <= 16 << 20; bytes *= 4) sizes.push_back(bytes);
  std::vector<char> buffer(sizes.back(), static_cast<char>(rank));
  // seconds[direction][size] on the sending rank; round trips of 1 byte.
  std::vector<std::vector<std::vector<double>>> seconds(
      2, std::vector<std::vector<double>>(sizes.size()));
  std::vector<double> round_trips;
  for (int round = 0; round <= settings.repeats; ++round) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      for (int from : {0, 1}) {
        const double t = TimeMessage(rank, from, buffer, sizes[i]);
        if (round > 0 && rank == from) seconds[from][i].push_back(t);
      }
    }
    const double t = TimeMessage(rank, 0, buffer, 1);
    if (round > 0 && rank == 0) round_trips.push_back(t);
  }
  // Rank 1's medians of its own direction to rank 0.
  std::vector<double> from_one(sizes.size());
  if (rank == 1) {
    for (size_t i = 0; i < sizes.size(); ++i) from_one[i] = Median(seconds[1][i]);
    MPI_Send(from_one.data(), static_cast<int>(from_one.size()), MPI_DOUBLE, 0, 2,
             MPI_COMM_WORLD);
    return absl::OkStatus();
  }
  MPI_Recv(from_one.data(), static_cast<int>(from_one.size()), MPI_DOUBLE, 1, 2, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  // The reply's own share of a message's time: half a 1-byte round trip.
  const double reply = Median(round_trips) / 2;
  std::ostringstream lines;
  for (size_t i = 0; i < sizes.size(); ++i) {
    lines << sizes[i] << " " << Median(seconds[0][i]) - reply << " " << from_one[i] - reply
          << "\n";
  }
  std::ofstream(path) << lines.str();
  return absl::OkStatus();
}

absl::Status MeasureNics(const CalibrationSettings& settings, Cluster* out) {
  std::printf("NICs: one MPI message each way between two machines (one-way seconds, median)\n");
  if (static_cast<int>(settings.hosts.size()) < out->hosts_size()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cluster '%s' has %d hosts joined by NICs: --hosts must name a machine for each, in the "
        "cluster's order (%d given)",
        out->name(), out->hosts_size(), settings.hosts.size()));
  }
  const std::string& first = out->hosts(0).name();
  if (NicOf(out, first) == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrFormat("cluster '%s': host '%s' has no NIC", out->name(), first));
  }
  for (int k = 1; k < out->hosts_size(); ++k) {
    const std::string& host = out->hosts(k).name();
    if (NicOf(out, host) == nullptr) continue;
    const std::string label =
        absl::StrFormat("%s (%s) <-> %s (%s)", first, settings.hosts[0], host, settings.hosts[k]);
    Line there, back;
    double out_first = 0, back_first = 0;  // the smallest message's one-way seconds
    for (int attempt = 1;; ++attempt) {
      ASSIGN_OR_RETURN(const std::vector<double> numbers,
                       RunProbe(settings, 2, "nic_probe",
                                absl::StrCat(settings.hosts[0], ":1,", settings.hosts[k], ":1")));
      std::vector<std::pair<double, double>> out_points, back_points;
      if (numbers.size() >= 3) {
        out_first = numbers[1];
        back_first = numbers[2];
      }
      for (size_t i = 0; i + 3 <= numbers.size(); i += 3) {
        std::printf("  %s %9ld B: %.6f there, %.6f back\n", label.c_str(),
                    static_cast<long>(numbers[i]), numbers[i + 1], numbers[i + 2]);
        out_points.push_back({numbers[i], numbers[i + 1]});
        back_points.push_back({numbers[i], numbers[i + 2]});
      }
      if (out_points.size() < 2) return absl::InternalError("the NIC probe wrote no results");
      ASSIGN_OR_RETURN(there, RobustLineFit(out_points));
      ASSIGN_OR_RETURN(back, RobustLineFit(back_points));
      if (there.slope > 0 && back.slope > 0) break;
      if (attempt == 3) {
        return absl::UnavailableError(absl::StrFormat(
            "the messages between %s took no longer for more bytes in 3 measurements: other "
            "processes are taking the cores or the link; calibrate on a quiet machine",
            label));
      }
      std::printf("  %s: the time did not grow with the bytes; measuring again\n", label.c_str());
    }
    // A link's bucket lets a short message through at once (the testbed's
    // tc tbf: 64 KiB), so the line through every size can cross zero: a
    // message's fixed cost is the smallest message's one-way time.
    const double there_gbps = 1 / there.slope / 1e9, back_gbps = 1 / back.slope / 1e9;
    const double there_s = std::max(0.0, out_first), back_s = std::max(0.0, back_first);
    std::printf("  %s: there %.1f us + bytes / %.4f GB/s, back %.1f us + bytes / %.4f GB/s\n",
                label.c_str(), there_s * 1e6, there_gbps, back_s * 1e6, back_gbps);
    Nic* remote = NicOf(out, host);
    remote->set_gbps(back_gbps);
    remote->set_in_gbps(there_gbps);
    remote->set_latency_s(back_s);
    if (k == 1) {
      Nic* local = NicOf(out, first);
      local->set_gbps(there_gbps);
      local->set_in_gbps(back_gbps);
      local->set_latency_s(there_s);
    }
  }
  // The runtime's all-gather between the first two machines.
  int per_host = out->devices_size();
  for (int h = 0; h < 2; ++h) {
    int devices = 0;
    for (const Device& d : out->devices()) devices += d.host() == out->hosts(h).name();
    per_host = std::min(per_host, devices);
  }
  per_host = std::max(1, per_host);
  const int ranks = 2 * per_host;
  std::pair<double, double> smallest;  // received bytes, seconds
  ASSIGN_OR_RETURN(
      const Line line,
      MeasureAllGather(settings, ranks,
                       absl::StrFormat("%s:%d,%s:%d", settings.hosts[0], per_host,
                                       settings.hosts[1], per_host),
                       absl::StrFormat("%d ranks on 2 machines", ranks), &smallest));
  // The fixed cost from the smallest all-gather less its bytes at the
  // fitted rate: the line's intercept swings with a few slow large ones
  // (15 to 810 us over six runs where ranks share cores).
  const double fixed = std::max(0.0, smallest.second - smallest.first * line.slope);
  CollectiveModel* model = out->mutable_collectives();
  const double step = std::max(0.0, (fixed - model->ring_base_latency_s()) / (ranks - 1));
  CollectiveModel::StepLatency* network = nullptr;
  for (CollectiveModel::StepLatency& s : *model->mutable_step_latencies()) {
    if (s.link_class() == NETWORK) network = &s;
  }
  if (network == nullptr) {
    network = model->add_step_latencies();
    network->set_link_class(NETWORK);
  }
  network->set_ring_s(step);
  network->set_tree_s(step);
  std::printf("  collective model: %.1f us per step across the NIC\n", step * 1e6);
  return absl::OkStatus();
}

}  // namespace zosched
