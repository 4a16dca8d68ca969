#include "experiments/sweep_evaluation.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <queue>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/arena.h"
#include "schedule/lowering.h"
#include "schedule/timeline_metrics.h"
#include "sim/roofline_floor.h"
#include "sim/simulator.h"
#include "sim/step_floor.h"

namespace zosched {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Each thread lowers its configurations' schedules into one block it keeps
// for the whole sweep, so that a schedule finds its memory already faulted
// in; the block is on huge pages where the kernel offers them (madvise), as
// faulting in 4 KiB pages is slow (a 10,000-op schedule takes 11 MiB).
// Larger schedules go on in blocks of up to 1 MiB.
constexpr size_t kScheduleBlockBytes = 16 << 20;
constexpr size_t kHugePageBytes = 2 << 20;
constexpr size_t kArenaMaxBlockBytes = 1 << 20;

// One thread's kScheduleBlockBytes, aligned to a huge page.
class ScheduleBlock {
 public:
  ScheduleBlock() : memory_(new char[kScheduleBlockBytes + kHugePageBytes]) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(memory_.get());
    block_ = memory_.get() + (kHugePageBytes - at % kHugePageBytes) % kHugePageBytes;
#ifdef MADV_HUGEPAGE
    madvise(block_, kScheduleBlockBytes, MADV_HUGEPAGE);  // advice: its failure is harmless
#endif
  }
  char* get() const { return block_; }

 private:
  std::unique_ptr<char[]> memory_;
  char* block_;
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The plan's memory: the fullest device, the least headroom, the busiest host.
void FillMemory(const Schedule& schedule, ConfigResult& r) {
  std::vector<int64_t> device_bytes(schedule.devices_size());
  std::map<std::string, int64_t> host_bytes;
  for (const Buffer& b : schedule.buffers()) {
    if (b.device() >= 0) {
      device_bytes[b.device()] += b.size_bytes();
    } else {
      host_bytes[b.host()] += b.size_bytes();
    }
  }
  std::map<std::string, int64_t> capacity;
  for (const Device& d : schedule.cluster().devices()) capacity[d.name()] = d.memory_bytes();
  double headroom = std::numeric_limits<double>::infinity();
  for (int d = 0; d < schedule.devices_size(); ++d) {
    r.peak_device_gib = std::max(r.peak_device_gib, device_bytes[d] / kGiB);
    headroom = std::min(
        headroom, (capacity[schedule.devices(d).cluster_device()] - device_bytes[d]) / kGiB);
  }
  r.headroom_gib = schedule.devices_size() > 0 ? headroom : 0;
  for (const auto& [host, bytes] : host_bytes) r.host_gib = std::max(r.host_gib, bytes / kGiB);
}

void FillMetrics(const StepMetrics& m, ConfigResult& r) {
  r.step_ms = m.step_ns / 1e6;
  r.tokens_per_s = m.tokens_per_s;
  r.binding = BindingResourceName(m.binding);
  int64_t overlap_ns = 0, comm_ns = 0, exposed_ns = 0;
  for (const DeviceMetrics& d : m.devices) {
    overlap_ns += d.overlap_ns;
    comm_ns += d.comm_ns;
    exposed_ns = std::max(exposed_ns, d.exposed_comm_ns);
  }
  r.overlap = comm_ns > 0 ? static_cast<double>(overlap_ns) / comm_ns : 0;
  r.exposed_comm_ms = exposed_ns / 1e6;
}

// The objective as a score (higher is better) of a configuration taking
// `step_ms` per step, or of its floor.
double Score(Objective objective, const SweepConfig& config, double price_per_gpu_hour,
             double step_ms, double headroom_gib) {
  const TrainingSettings& t = config.options.training;
  const double tokens_per_s = step_ms > 0 ? t.batch_size() * t.seq_len() * 1e3 / step_ms : 0;
  switch (objective) {
    case STEP_TIME:
      return -step_ms;
    case TOKENS_PER_DOLLAR:
      return tokens_per_s * 3600 / (price_per_gpu_hour * config.gpus);
    case MEMORY_HEADROOM:
      return headroom_gib;
    default:
      return tokens_per_s;
  }
}

// The constraints the plan alone decides (GPUs, price, headroom) that it
// misses, e.g. "4 GPUs above max_gpus 2"; empty when it meets them all.
std::vector<std::string> PlanConstraintMisses(const Constraints& c, const SweepConfig& config,
                                              const ConfigResult& r) {
  std::vector<std::string> misses;
  if (c.max_gpus() > 0 && config.gpus > c.max_gpus()) {
    misses.push_back(absl::StrFormat("%d GPUs above max_gpus %d", config.gpus, c.max_gpus()));
  }
  if (c.max_dollars_per_hour() > 0 && r.dollars_per_hour > c.max_dollars_per_hour()) {
    misses.push_back(absl::StrFormat("$%.2f per hour above max_dollars_per_hour %g",
                                     r.dollars_per_hour, c.max_dollars_per_hour()));
  }
  if (c.min_headroom_gib() > 0 && r.headroom_gib < c.min_headroom_gib()) {
    misses.push_back(absl::StrFormat("%.2f GiB free below min_headroom_gib %g", r.headroom_gib,
                                     c.min_headroom_gib()));
  }
  return misses;
}

// The `keep` best scores seen so far, shared by the threads.
class BestScores {
 public:
  explicit BestScores(int keep) : keep_(keep) {}
  void Add(double score) {
    std::lock_guard<std::mutex> lock(mu_);
    lowest_kept_.push(score);
    if (static_cast<int>(lowest_kept_.size()) > keep_) lowest_kept_.pop();
  }
  // Whether a configuration whose score is at most `bound` cannot enter the
  // best (strictly worse than the last kept, so ties are never pruned).
  bool CannotEnter(double bound) {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(lowest_kept_.size()) == keep_ && bound < lowest_kept_.top();
  }

 private:
  const int keep_;
  std::mutex mu_;
  std::priority_queue<double, std::vector<double>, std::greater<double>> lowest_kept_;
};

// `schedule_block` (kScheduleBlockBytes for the schedule), `simulator` and
// `sim`: the calling thread's own, reused from one configuration to the
// next.
ConfigResult Evaluate(const SweepSpace& space, const SweepConfig& config, bool prune,
                      BestScores& best, char* schedule_block, Simulator& simulator,
                      SimResult& sim) {
  ConfigResult r;
  const ClusterMember& member = space.members[config.member];
  const Sweep& sweep = space.sweep;
  r.dollars_per_hour = member.price_per_gpu_hour * config.gpus;

  auto start = std::chrono::steady_clock::now();
  // The schedule's thousands of small messages live on an arena, freed at
  // once when the configuration is done.
  google::protobuf::ArenaOptions arena_options;
  arena_options.initial_block = schedule_block;
  arena_options.initial_block_size = kScheduleBlockBytes;
  arena_options.max_block_size = kArenaMaxBlockBytes;
  google::protobuf::Arena arena(arena_options);
  Schedule* schedule = google::protobuf::Arena::CreateMessage<Schedule>(&arena);
  const absl::Status lowered =
      LowerScheduleInto(space.models[config.model], member.cluster, config.options, schedule);
  r.lower_s = SecondsSince(start);
  if (!lowered.ok()) {
    const bool too_big = absl::IsResourceExhausted(lowered);
    r.state = too_big ? ConfigState::kDoesNotFit : ConfigState::kInvalid;
    r.reason = std::string(lowered.message());
    return r;
  }
  FillMemory(*schedule, r);
  // The step floor and the simulation cost compute under the profile.
  schedule->set_compute_profile(config.profile);

  start = std::chrono::steady_clock::now();
  const absl::StatusOr<int64_t> floor_ns = StepFloorNs(*schedule);
  if (!floor_ns.ok()) {
    r.reason = absl::StrCat("step floor: ", floor_ns.status().message());
    return r;
  }
  r.floor_ms = *floor_ns / 1e6;
  std::vector<std::string> misses = PlanConstraintMisses(sweep.constraints(), config, r);
  const double min_tokens = sweep.constraints().min_tokens_per_s();
  if (prune) {
    const double bound =
        Score(sweep.objective(), config, member.price_per_gpu_hour, r.floor_ms, r.headroom_gib);
    const TrainingSettings& t = config.options.training;
    const double most_tokens_per_s = t.batch_size() * t.seq_len() * 1e3 / r.floor_ms;
    if (min_tokens > 0 && most_tokens_per_s < min_tokens) {
      misses.push_back(absl::StrFormat("at most %.0f tokens/s by its floor, below "
                                       "min_tokens_per_s %g",
                                       most_tokens_per_s, min_tokens));
    }
    if (!misses.empty()) {
      r.state = ConfigState::kPruned;
      r.reason = absl::StrCat("pruned: misses the constraints: ", absl::StrJoin(misses, "; "));
      r.simulate_s = SecondsSince(start);
      return r;
    }
    if (best.CannotEnter(bound)) {
      r.state = ConfigState::kPruned;
      r.reason = "pruned: its floor cannot beat the best found";
      r.simulate_s = SecondsSince(start);
      return r;
    }
  }
  const absl::StatusOr<StepWithFloor> step = SimulateWithFloor(schedule, simulator, &sim);
  r.simulate_s = SecondsSince(start);
  if (!step.ok()) {
    r.reason = absl::StrCat("simulation: ", step.status().message());
    return r;
  }
  r.state = ConfigState::kFits;
  FillMetrics(step->metrics, r);
  r.roofline_step_ms = step->floor_ns / 1e6;
  if (r.dollars_per_hour > 0) r.tokens_per_dollar = r.tokens_per_s * 3600 / r.dollars_per_hour;
  if (min_tokens > 0 && r.tokens_per_s < min_tokens) {
    misses.push_back(absl::StrFormat("%.0f tokens/s below min_tokens_per_s %g", r.tokens_per_s,
                                     min_tokens));
  }
  r.meets_constraints = misses.empty();
  if (!r.meets_constraints) {
    r.reason = absl::StrCat("misses the constraints: ", absl::StrJoin(misses, "; "));
  }
  r.score = Score(sweep.objective(), config, member.price_per_gpu_hour, r.step_ms,
                  r.headroom_gib);
  if (r.meets_constraints) best.Add(r.score);
  return r;
}

}  // namespace

const char* ConfigStateName(ConfigState s) {
  switch (s) {
    case ConfigState::kFits:
      return "fits";
    case ConfigState::kDoesNotFit:
      return "does not fit";
    case ConfigState::kInvalid:
      return "invalid";
    case ConfigState::kPruned:
      return "pruned";
    case ConfigState::kFailed:
      return "failed";
  }
  return "failed";
}

std::vector<ConfigResult> EvaluateSweep(const SweepSpace& space,
                                        const EvaluationOptions& options) {
  const int total = static_cast<int>(space.configs.size());
  std::vector<ConfigResult> results(total);
  BestScores best(space.sweep.best());
  // The largest schedules first (devices × layers: validation grows faster
  // than linearly in the devices), so that no thread is left with a large
  // one at the end while the others idle.
  std::vector<int> order(total);
  std::iota(order.begin(), order.end(), 0);
  auto size = [&](int i) {
    return static_cast<int64_t>(space.configs[i].gpus) *
           space.models[space.configs[i].model].num_layers();
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return size(a) > size(b); });
  std::atomic<int> next{0};
  std::mutex progress_mu;
  int done = 0;
  auto work = [&] {
    const ScheduleBlock schedule_block;
    Simulator simulator;
    SimResult sim;
    for (int k = next++; k < total; k = next++) {
      const int i = order[k];
      results[i] = Evaluate(space, space.configs[i], options.prune, best, schedule_block.get(),
                            simulator, sim);
      std::lock_guard<std::mutex> lock(progress_mu);
      ++done;
      if (options.progress) options.progress(done, total);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < std::min(options.threads, total); ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  return results;
}

std::vector<int> RankConfigs(const std::vector<ConfigResult>& results, int limit) {
  std::vector<int> ranked;
  for (int i = 0; i < static_cast<int>(results.size()); ++i) {
    if (results[i].state == ConfigState::kFits && results[i].meets_constraints) {
      ranked.push_back(i);
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](int a, int b) { return results[a].score > results[b].score; });
  if (static_cast<int>(ranked.size()) > limit) ranked.resize(limit);
  return ranked;
}

}  // namespace zosched
