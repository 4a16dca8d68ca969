// The schedule explorer: sweeps models, training settings, clusters you may
// not own (catalog clusters rewritten along axes) and strategies with their
// knobs; lowers, validates and simulates every configuration on all cores,
// under its compute profile (the sweep's compute_profile, else each
// strategy's kernel-level one: zosched_cuda for ZO, pytorch_first_order for
// first-order) and again at the roofline for its floor; ranks them by an
// objective (of the profiled step) under constraints.
//
//   bazel run //experiments:explore -- --sweep=experiments/sweeps/NAME.pbtxt
//       [--out_dir=out/explore/NAME] [--overwrite] [--threads=0] [--prune]
//
// The sweep is a textproto of zosched.Sweep (experiments/sweep.proto); it is
// checked whole, and its configurations counted, before any is built
// (experiments/sweep_space.h says what is refused). Writes, under the
// output directory (experiments/explore_outputs.h):
//   configurations.csv   every configuration: knobs and compute profile,
//                        state (fits, does not fit and why, invalid,
//                        pruned), step time and its roofline floor,
//                        tokens/s, cost, memory, overlap, exposed
//                        communication, binding, and the constraints one
//                        misses
//   best.md              the best `best` configurations with their profile,
//                        step and floor, counts, throughput;
//                        when none fits and meets the constraints, the most
//                        common reasons, each with an example
//   best/NN_*.pb         their schedules, with their compute profile, ready
//                        for simulate (and train)
//   clusters/*.pbtxt     every cluster the sweep built, for lower and simulate
//   pareto_gpus.png      tokens/s against GPUs used; pareto_cost.png against
//                        dollars per hour (priced sweeps); .csv and .gp beside
//   heatmap_X_by_Y.png   the best objective over two knobs, per heat map
// A picture with nothing to draw (no configuration fits and meets the
// constraints) is skipped, and the run says which.
//
// The output directory must be absent or empty, so that a run never mixes
// with an earlier one; with --overwrite, the explorer's own files there
// (whatever sweep wrote them) are removed once the sweep is evaluated, and
// every other file is left alone.
//
// A progress bar with configurations per second goes to a terminal's stderr.
// Exit status: 0 when the sweep was evaluated, including when no
// configuration fits or meets the constraints: that is an answer, printed
// with its most common reasons; 2 for bad flags, a bad sweep file (the
// error names it), a used --out_dir without --overwrite, or a sweep none of
// whose configurations can be lowered (every one invalid: the reasons are
// printed, the outputs written); 1 if a configuration's step floor or
// simulation failed (a bug, printed) or the outputs cannot be written.
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/command_line.h"
#include "base/files.h"
#include "base/flag_checks.h"
#include "base/output_dir.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/user_path.h"
#include "experiments/explore_outputs.h"
#include "experiments/sweep_evaluation.h"
#include "experiments/sweep_report.h"
#include "experiments/sweep_space.h"
#include "schedule/lowering.h"

ABSL_FLAG(std::string, sweep, "", "the Sweep textproto to explore (experiments/sweeps/*.pbtxt)");
ABSL_FLAG(std::string, out_dir, "",
          "where to write the results (default: out/explore/<sweep name> in the workspace)");
ABSL_FLAG(bool, overwrite, false,
          "a used --out_dir is refused; with this, the explorer's files there (an earlier "
          "run's) are replaced and every other file is kept");
ABSL_FLAG(int32_t, threads, 0, "threads evaluating configurations; 0: one per core");
ABSL_FLAG(bool, prune, false,
          "skip simulating configurations whose step floor shows they can neither win nor "
          "meet the constraints (the best configurations stay the same)");

namespace zosched {
namespace {

// "[#####.....] 1234/5000 configurations, 812/s" on one terminal line.
class ProgressBar {
 public:
  explicit ProgressBar(bool on) : on_(on), start_(std::chrono::steady_clock::now()) {}
  void Update(int done, int total) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(static_cast<int64_t>(kWidth) * done / total);
    std::fprintf(stderr, "\r[%s%s] %d/%d configurations, %.0f/s", std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, '.').c_str(), done, total,
                 seconds > 0 ? done / seconds : 0.0);
    if (done == total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  const bool on_;
  const std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

// Lowers the ranked configurations again and writes their schedules;
// returns their file names under `dir`.
absl::StatusOr<std::vector<std::string>> WriteBestSchedules(const SweepSpace& space,
                                                            const std::vector<int>& ranked,
                                                            const std::string& dir) {
  if (ranked.empty()) return std::vector<std::string>();
  RETURN_IF_ERROR(MakeDirectories(dir + "/" + kBestDir));
  std::vector<std::string> files;
  for (size_t k = 0; k < ranked.size(); ++k) {
    const SweepConfig& c = space.configs[ranked[k]];
    ASSIGN_OR_RETURN(Schedule schedule,
                     LowerSchedule(space.models[c.model], space.members[c.member].cluster,
                                   c.options));
    schedule.set_compute_profile(c.profile);
    const std::string file =
        BestScheduleFile(static_cast<int>(k) + 1, space.sweep.models(c.model) + " " +
                                    space.members[c.member].label + " " + StrategyLabel(c));
    RETURN_IF_ERROR(WriteProtoFile(dir + "/" + file, schedule));
    files.push_back(file);
  }
  return files;
}

absl::Status WriteClusters(const SweepSpace& space, const std::string& dir) {
  RETURN_IF_ERROR(MakeDirectories(dir + "/" + kClustersDir));
  for (const ClusterMember& m : space.members) {
    RETURN_IF_ERROR(WriteProtoFile(dir + "/" + ClusterFile(m.label), m.cluster));
  }
  return absl::OkStatus();
}

// Replaces an earlier run's files in `dir` (with --overwrite) by this run's;
// prints best.md and what was written. Returns the pictures.
absl::StatusOr<Pictures> WriteOutputs(const SweepSpace& space,
                                      const std::vector<ConfigResult>& results,
                                      const std::string& throughput, const std::string& dir) {
  if (absl::GetFlag(FLAGS_overwrite)) {
    ASSIGN_OR_RETURN(const int removed, RemoveExploreOutputs(dir));
    if (removed > 0) {
      std::printf("removed %d files of an earlier run from %s\n", removed, dir.c_str());
    }
  }
  RETURN_IF_ERROR(MakeDirectories(dir));
  const std::vector<int> ranked = RankConfigs(results, space.sweep.best());
  ASSIGN_OR_RETURN(const std::vector<std::string> files, WriteBestSchedules(space, ranked, dir));
  RETURN_IF_ERROR(WriteClusters(space, dir));
  RETURN_IF_ERROR(
      WriteFile(dir + "/" + kConfigurationsCsv, ConfigurationsCsv(space, results)));
  const std::string md = BestMarkdown(space, results, ranked, files, {throughput});
  RETURN_IF_ERROR(WriteFile(dir + "/" + kBestMarkdown, md));
  ASSIGN_OR_RETURN(const Pictures pictures, WritePictures(space, results, dir));

  std::vector<std::string> written = {kConfigurationsCsv, kBestMarkdown};
  if (!ranked.empty()) written.push_back(absl::StrCat(kBestDir, "/"));
  written.push_back(absl::StrCat(kClustersDir, "/"));
  written.insert(written.end(), pictures.drawn.begin(), pictures.drawn.end());
  std::printf("\n%s\nwrote %s/{%s}\n", md.c_str(), dir.c_str(),
              absl::StrJoin(written, ",").c_str());
  if (!pictures.skipped.empty()) {
    std::printf("not drawn, as no configuration fits and meets the constraints: %s\n",
                absl::StrJoin(pictures.skipped, ", ").c_str());
  }
  return pictures;
}

absl::StatusOr<int> Run() {
  if (absl::GetFlag(FLAGS_sweep).empty()) {
    return absl::InvalidArgumentError(
        "--sweep is required: a Sweep textproto, e.g. experiments/sweeps/slicing_vs_host_link.pbtxt");
  }
  RETURN_IF_ERROR(CheckFlagRange("threads", absl::GetFlag(FLAGS_threads), 0, 1024,
                                 "threads (0: one per core)"));
  ASSIGN_OR_RETURN(const SweepSpace space,
                   LoadSweep(ResolveUserPath(absl::GetFlag(FLAGS_sweep))));
  // ExpandSweep allows only plain directory names.
  const std::string dir =
      OutputDir(absl::GetFlag(FLAGS_out_dir), "explore/" + space.sweep.name());
  RETURN_IF_ERROR(CheckOutputDirectory(dir, absl::GetFlag(FLAGS_overwrite)));
  int threads = absl::GetFlag(FLAGS_threads);
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::printf("sweep %s: %zu configurations (%zu clusters), %d threads%s\n",
              space.sweep.name().c_str(), space.configs.size(), space.members.size(), threads,
              absl::GetFlag(FLAGS_prune) ? ", pruning" : "");
  std::fflush(stdout);

  ProgressBar bar(isatty(STDERR_FILENO) != 0);
  EvaluationOptions options;
  options.threads = threads;
  options.prune = absl::GetFlag(FLAGS_prune);
  options.progress = [&bar](int done, int total) { bar.Update(done, total); };
  const auto start = std::chrono::steady_clock::now();
  const std::vector<ConfigResult> results = EvaluateSweep(space, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  double lower_s = 0, simulate_s = 0;
  int simulated = 0, failed = 0, invalid = 0, ranked = 0;
  for (const ConfigResult& r : results) {
    lower_s += r.lower_s;
    simulate_s += r.simulate_s;
    simulated += r.state == ConfigState::kFits;
    invalid += r.state == ConfigState::kInvalid;
    ranked += r.state == ConfigState::kFits && r.meets_constraints;
    if (r.state == ConfigState::kFailed) {
      if (failed++ == 0) std::fprintf(stderr, "explore: %s\n", r.reason.c_str());
    }
  }
  const double busy = lower_s + simulate_s;
  const std::string throughput = absl::StrFormat(
      "Evaluated %zu configurations in %.2f s on %d threads: %.0f configurations per second "
      "(lowering and validation %.0f%%, floor and simulation %.0f%% of the threads' time; "
      "%d simulated).",
      results.size(), seconds, threads, results.size() / std::max(seconds, 1e-9),
      100 * lower_s / std::max(busy, 1e-9), 100 * simulate_s / std::max(busy, 1e-9), simulated);

  const absl::StatusOr<Pictures> written = WriteOutputs(space, results, throughput, dir);
  if (!written.ok()) {
    std::fprintf(stderr, "explore: writing the results to %s: %s\n", dir.c_str(),
                 std::string(written.status().message()).c_str());
    return 1;
  }
  if (failed > 0) {
    std::fprintf(stderr, "explore: %d configurations failed their step floor or simulation (a bug; "
                         "their reasons are in configurations.csv)\n", failed);
    return 1;
  }
  if (invalid == static_cast<int>(results.size())) {
    std::fprintf(stderr, "explore: none of the %d configurations can be lowered (every one is "
                         "invalid; the most common reasons are above, each one's in %s/%s): "
                         "fix the sweep\n",
                 invalid, dir.c_str(), kConfigurationsCsv);
    return 2;
  }
  if (ranked == 0) {
    std::fprintf(stderr, "explore: no configuration fits and meets the constraints (the most "
                         "common reasons are above and in %s/%s)\n",
                 dir.c_str(), kBestMarkdown);
  }
  return 0;
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  // Every configuration allocates and frees the same large buffers (its
  // schedule's arena blocks, validation's tables, the simulated timeline).
  // glibc maps those of 128 KiB or more afresh and unmaps them when freed,
  // so each configuration would fault them in again page by page (a fault
  // costs microseconds on a virtual machine: cheapest_opt66b ran 386
  // configurations per second that way, 467 with this); below 32 MiB they
  // come from the heap and are reused.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"explore", "",
       "The schedule explorer: sweeps models, training settings, clusters and strategies with\n"
       "their knobs (--sweep, a zosched.Sweep textproto); lowers, validates and simulates every\n"
       "configuration on all cores and ranks them by an objective under constraints."});
  absl::StatusOr<int> rc = zosched::Run();
  if (!rc.ok()) return zosched::ReportError("explore", rc.status());
  return *rc;
}
