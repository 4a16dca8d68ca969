#include "runtime/calibration/collective_calibration.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/line_fit.h"
#include "base/median.h"
#include "base/status_macros.h"
#include "runtime/calibration/probe_runner.h"
#include "runtime/link_throttle.h"
#include "runtime/mpi_world.h"
#include "runtime/real_time_thread.h"
#include "runtime/threaded_backend.h"
#include "schedule/cluster_catalog.h"

namespace zosched {

absl::Status CollectiveProbe(const CalibrationSettings& settings, const std::string& path) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(settings.cluster));
  std::vector<int> group(world);
  for (int r = 0; r < world; ++r) group[r] = r;
  ASSIGN_OR_RETURN(std::unique_ptr<MpiCollectives> comm,
                   MpiCollectives::Create({group}, std::chrono::seconds(60)));
  const PeerDomain& peer = cluster.peer_domains(0);
  EmulatedLink link(peer.gbps_per_device(), static_cast<int64_t>(peer.latency_s() * 1e9));
  std::vector<int64_t> sizes;
  for (int64_t bytes = 4 << 10; bytes <= 4 << 20; bytes *= 4) sizes.push_back(bytes);
  std::vector<char> buffer(sizes.back(), static_cast<char>(rank));
  // Per size: each all-gather's time, and its thread CPU time (the copies
  // through the staging slots and the wake-ups, not the throttle's sleep).
  std::vector<std::vector<double>> seconds(sizes.size()), cpu(sizes.size());
  // Round 0 warms up; all-gathers are short, so 3x the repeats.
  const int rounds = 1 + 3 * settings.repeats;
  for (int round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      const int64_t chunk = sizes[i] / world;
      MPI_Barrier(MPI_COMM_WORLD);
      // The all-gather as the runtime's collective threads run it:
      // real-time. At the fair class its sleeps (the group's futex, the
      // throttle) ended up to the 50 µs timer slack late, and the 2-rank
      // fixed cost came out 92 µs where it is 41 µs (the runs' all-gathers
      // took 60 µs, not 140). Not during the barrier, which spins: a
      // spinning real-time rank starves the threads the others need (MPI's
      // own, the kernel's network work across emulated nodes).
      SetCallerRealTime(true);
      const auto start = EmulatedLink::Clock::now();
      const int64_t cpu_start = ThreadCpuNs();
      const absl::Status gathered = comm->AllGather(group, buffer.data(), chunk);
      const int64_t cpu_ns = ThreadCpuNs() - cpu_start;
      if (gathered.ok()) EmulatedLink::SleepUntil(link.Reserve(start, chunk * (world - 1)));
      const double elapsed =
          std::chrono::duration<double>(EmulatedLink::Clock::now() - start).count();
      SetCallerRealTime(false);
      RETURN_IF_ERROR(gathered);
      if (round > 0) {
        seconds[i].push_back(elapsed);
        cpu[i].push_back(1e-9 * cpu_ns);
      }
    }
  }
  std::ostringstream lines;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto [min, max] = std::minmax_element(seconds[i].begin(), seconds[i].end());
    lines << sizes[i] << " " << Median(seconds[i]) << " " << *min << " " << *max << " "
          << Median(cpu[i]) << "\n";
  }
  if (rank == 0) {
    std::ofstream(path) << lines.str();
  }
  return absl::OkStatus();
}

absl::StatusOr<Line> MeasureAllGather(const CalibrationSettings& settings, int ranks,
                                      const std::string& hosts, const std::string& label,
                                      std::pair<double, double>* smallest, Line* cpu) {
  for (int attempt = 1;; ++attempt) {
    ASSIGN_OR_RETURN(std::vector<double> numbers,
                     RunProbe(settings, ranks, "collective_probe", hosts));
    std::vector<std::pair<double, double>> points, cpu_points;
    for (size_t i = 0; i + 5 <= numbers.size(); i += 5) {
      const int64_t bytes = numbers[i];
      std::printf("  %s %8ld B: %.6f / %.6f / %.6f, thread CPU %.6f\n", label.c_str(),
                  static_cast<long>(bytes), numbers[i + 1], numbers[i + 2], numbers[i + 3],
                  numbers[i + 4]);
      // Bytes each rank receives: (n-1)/n of the gathered buffer.
      points.push_back({static_cast<double>(bytes) * (ranks - 1) / ranks, numbers[i + 1]});
      cpu_points.push_back({static_cast<double>(bytes), numbers[i + 4]});
    }
    if (points.size() < 2) return absl::InternalError("the collective probe wrote no results");
    ASSIGN_OR_RETURN(const Line line, RobustLineFit(points));
    if (line.slope > 0) {
      if (smallest != nullptr) *smallest = points.front();
      if (cpu != nullptr) {
        ASSIGN_OR_RETURN(*cpu, RobustLineFit(cpu_points));
        std::printf("  %s thread CPU: %.1f us + gathered bytes / %.2f GB/s\n", label.c_str(),
                    cpu->intercept * 1e6, cpu->slope > 0 ? 1 / cpu->slope / 1e9 : 0.0);
      }
      std::printf("  %s fit: %.1f us + received bytes / %.3f GB/s\n", label.c_str(),
                  line.intercept * 1e6, 1 / line.slope / 1e9);
      return line;
    }
    if (attempt == 3) {
      return absl::UnavailableError(absl::StrFormat(
          "the all-gather among %s took no longer for more bytes in 3 measurements "
          "(the last fit: %.1f us + received bytes / %.3f GB/s): other processes are taking "
          "the cores; calibrate on a quiet machine",
          label, line.intercept * 1e6, 1 / line.slope / 1e9));
    }
    std::printf(
        "  %s: the time did not grow with the bytes (other processes on the cores?); "
        "measuring again\n",
        label.c_str());
  }
}

absl::Status MeasureCollectives(const CalibrationSettings& settings, Cluster* out) {
  std::printf("collectives: the runtime's all-gather (seconds: median, min, max)\n");
  const PeerDomain& peer = out->peer_domains(0);
  std::vector<double> fixed(5, 0);
  std::vector<double> rates;
  double cpu_seconds_per_byte = 0;  // the mean over 2 and 4 ranks
  for (int ranks : {2, 4}) {
    Line cpu;
    ASSIGN_OR_RETURN(const Line line,
                     MeasureAllGather(settings, ranks, "", absl::StrFormat("%d ranks", ranks),
                                      /*smallest=*/nullptr, &cpu));
    fixed[ranks] = std::max(0.0, line.intercept);
    rates.push_back(1 / line.slope / 1e9);
    cpu_seconds_per_byte += std::max(0.0, cpu.slope) / 2;
  }
  // fixed(n) = base + (n - 1) · step, from n = 2 and n = 4.
  const double step = std::max(0.0, (fixed[4] - fixed[2]) / 2);
  const double base = std::max(0.0, fixed[2] - step);
  const double efficiency = std::min(1.0, (rates[0] + rates[1]) / 2 / peer.gbps_per_device());
  CollectiveModel* model = out->mutable_collectives();
  model->set_source("measured by //runtime:calibrate (MPI all-gather + peer throttle)");
  model->set_ring_base_latency_s(base);
  model->set_tree_base_latency_s(base);
  model->set_bus_bandwidth_efficiency(efficiency);
  for (CollectiveModel::StepLatency& s : *model->mutable_step_latencies()) {
    if (s.link_class() == peer.link_class()) {
      s.set_ring_s(step);
      s.set_tree_s(step);
    }
  }
  // The host CPU of a collective's bytes, where the copies' figure
  // (transfer_cpu_gbps) would say less: the staging slots' copies.
  const double cpu_gbps = cpu_seconds_per_byte > 0 ? 1 / cpu_seconds_per_byte / 1e9 : 0;
  for (Device& d : *out->mutable_devices()) d.set_collective_cpu_gbps(cpu_gbps);
  std::printf(
      "  collective model: base %.1f us, %.1f us per step, bus efficiency %.3f; host CPU per "
      "gathered byte: 1 / %.2f GB/s\n",
      base * 1e6, step * 1e6, efficiency, cpu_gbps);
  return absl::OkStatus();
}

}  // namespace zosched
