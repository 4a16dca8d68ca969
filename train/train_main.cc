// ZO fine-tuning executed from the schedule IR, on the CPU testbed or on
// NVIDIA GPUs (--backend=cuda, in a --config=cuda build).
//
//   bazel run //train -- --model=opt-tiny --strategy=distzo2 --pertp=2 --dp=2 --ranks=4
//   mpirun -np 4 bazel-bin/train/train ...   (one machine or several)
//   bazel run --config=cuda //train -- --backend=cuda --cluster=h100_sxm_x1 ...
//
// On CUDA, ranks map to the visible GPUs round-robin, so several ranks may
// share one GPU (their collectives then go through pinned host memory).
//
// One process per schedule device. --ranks=N runs this program again under
// `mpirun -np N` and waits for it; one rank needs no launcher. The lowering flags
// (schedule/lower_flags.h) are lower's too, with the same defaults. Before
// any rank starts, the flags are range-checked, the schedule is lowered or
// read and validated, and the rank count is checked against it; the ranks
// receive that schedule and the wait limit (runtime/rank_schedule.h) and
// neither lower nor simulate. Exit
// status: 0 on success, 2 for bad flags or inputs, 1 when a step fails
// or a wait times out (every rank stops), 128 + N when signal N stopped
// the run (after a checkpoint: --resume continues it).
//
// Ctrl-C or SIGTERM stops the run cleanly after the current step: the
// launcher (--ranks) passes it to the ranks as SIGUSR1 through mpirun; a
// second one ends them at once. Under a hand-started mpirun, send SIGUSR1
// to mpirun for the same (mpirun kills its ranks on SIGINT/SIGTERM).
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/command_line.h"
#include "base/directory_lock.h"
#include "base/flag_checks.h"
#include "base/output_dir.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/user_path.h"
#include "runtime/backend_registry.h"
#include "runtime/checkpoint/init_file.h"
#include "runtime/host_list.h"
#include "runtime/host_memory_check.h"
#include "runtime/launcher.h"
#include "runtime/mpi_world.h"
#include "runtime/nn/decoder_forward.h"
#include "runtime/rank_schedule.h"
#include "runtime/run_checkpointing.h"
#include "runtime/stop_signals.h"
#include "runtime/task.h"
#include "runtime/train_options.h"
#include "runtime/train_schedule.h"
#include "runtime/trainer.h"
#include "runtime/watchdog.h"
#include "schedule/lower_flags.h"
#include "train/wait_limit.h"

ABSL_FLAG(std::string, backend, "cpu", "cpu (the testbed) or cuda (NVIDIA GPUs; --config=cuda builds)");
ABSL_FLAG(bool, tf32, false, "cuda: let FP32 GEMMs use TF32 tensor cores (changes the numbers)");
ABSL_FLAG(int32_t, threads, 1,
          "cpu: cores each device computes on (the result is bitwise the same for any count)");
ABSL_FLAG(int32_t, ranks, 0,
          "start this many ranks through mpirun; must equal the schedule's devices (0: as "
          "launched)");
ABSL_FLAG(std::string, hosts, "",
          "start the ranks on these machines, as mpirun's --host list (e.g. node1:2,node2:2): "
          "each machine's slots are one schedule host's devices, in schedule order; the list "
          "is checked against the schedule, and each machine reached, before any rank starts");
ABSL_FLAG(std::string, hostfile, "",
          "the machines as an Open MPI hostfile ('name slots=N' a line), instead of --hosts");
ABSL_FLAG(std::string, schedule, "",
          "run this Schedule file instead of lowering (lowering flags given too must agree)");
ABSL_FLAG(double, h2d_gbps, 0, "emulated host->device rate, GB/s (0: the cluster's)");
ABSL_FLAG(double, d2h_gbps, 0, "emulated device->host rate, GB/s (0: the cluster's)");
ABSL_FLAG(double, peer_gbps, 0, "emulated peer link rate, GB/s (0: the cluster's)");
ABSL_FLAG(std::string, data, "synthetic", "'synthetic' or a task directory");
ABSL_FLAG(std::string, task, "sst2", "sst2 or boolq");
ABSL_FLAG(int32_t, steps, 100, "total training steps");
ABSL_FLAG(int32_t, eval_every, 0, "evaluate every N steps (0: at the end only)");
ABSL_FLAG(int32_t, eval_examples, 256, "dev examples per evaluation (0: all)");
ABSL_FLAG(std::string, init, "random",
          "'random', a .safetensors file, or a Hugging Face checkpoint directory or its index.json");
ABSL_FLAG(uint64_t, init_seed, 1, "seed of the random initialisation");
ABSL_FLAG(std::string, init_adapters, "",
          "--peft=lora: a PEFT adapter directory (adapter_config.json, "
          "adapter_model.safetensors) the adapters start from, e.g. an earlier run's "
          "OUT_DIR/adapter (default: A random, B = 0)");
ABSL_FLAG(bool, resume, false,
          "continue the run in --out_dir from its checkpoint and trajectory.log, bit for bit");
ABSL_FLAG(bool, overwrite, false, "a fresh run may replace the run in a non-empty --out_dir");
ABSL_FLAG(std::string, out_dir, "", "outputs (default: out/train in the workspace)");
ABSL_FLAG(int32_t, checkpoint_every, 1000,
          "write a checkpoint every N steps (also at the start, at the end and on "
          "Ctrl-C/SIGTERM); 0: never");
ABSL_FLAG(std::string, collective_timeout_s, "auto",
          "seconds any wait for other ranks may last (a collective, the per-step meeting, "
          "start-up, teardown) before the job ends with an error naming the rank, the op "
          "and the step; 10x that where ranks wait for rank 0's evaluation or checkpoint, "
          "at least 120 s at start-up. "
          "'auto': 10x the schedule's predicted step, at least 60 s");
ABSL_FLAG(bool, final_outputs, true,
          "evaluate, print the checksum and save the weights at the end (false: logs and "
          "timeline only, e.g. to benchmark a model whose fp32 copy would not fit)");
ABSL_FLAG(int32_t, speed_probe_every, 0,
          "cpu: before every N-th step, time a fixed piece of compute on each device's core "
          "(the timeline's speed_probes: how fast the cores ran, for predict_vs_measure); "
          "0: never");
ABSL_FLAG(std::string, timeline_out, "", "the measured Timeline (default: OUT_DIR/timeline.pb)");
ABSL_FLAG(std::string, trace_out, "", "its Chrome trace JSON (default: OUT_DIR/trace.json)");
ABSL_FLAG(std::string, rank_schedule, "",
          "set by train's launcher for the ranks it starts: the schedule file it prepared; not "
          "to be given by hand");
ABSL_FLAG(int32_t, rank_wait_limit_s, 0,
          "set by train's launcher for the ranks it starts: the wait limit, seconds; not to be "
          "given by hand");

namespace zosched {
namespace {

// The error of flag --`flag`, given for a backend without `capability`.
absl::Status FlagAppliesOnlyTo(const char* flag, bool BackendCapabilities::*capability) {
  return absl::InvalidArgumentError(absl::StrCat(
      "--", flag, " applies to --backend=", BackendNamesWith(capability, " or --backend="),
      " only"));
}

absl::StatusOr<TrainOptions> OptionsFromFlags() {
  TrainOptions o;
  o.backend.name = absl::GetFlag(FLAGS_backend);
  o.backend.allow_tf32 = absl::GetFlag(FLAGS_tf32);
  RETURN_IF_ERROR(CheckBackendAvailable(o.backend.name));
  const BackendCapabilities backend = CapabilitiesOf(o.backend);
  o.backend.compute_threads = absl::GetFlag(FLAGS_threads);
  RETURN_IF_ERROR(
      CheckFlagRange("threads", o.backend.compute_threads, 1, 256, "cores per device"));
  if (o.backend.compute_threads != 1 && !backend.computes_on_host_threads) {
    return FlagAppliesOnlyTo("threads", &BackendCapabilities::computes_on_host_threads);
  }
  if (o.backend.allow_tf32 && !backend.tf32_gemms) {
    return FlagAppliesOnlyTo("tf32", &BackendCapabilities::tf32_gemms);
  }
  o.model = absl::GetFlag(FLAGS_model);
  o.cluster = absl::GetFlag(FLAGS_cluster);
  if (!absl::GetFlag(FLAGS_schedule).empty()) {
    o.schedule = ResolveUserPath(absl::GetFlag(FLAGS_schedule));
  }
  // With --schedule the file's strategy and settings win; the flags given
  // with it are checked against the file below.
  if (o.schedule.empty()) {
    ASSIGN_OR_RETURN(o.lowering, LowerOptionsFromFlags());
  }
  o.h2d_gbps = absl::GetFlag(FLAGS_h2d_gbps);
  o.d2h_gbps = absl::GetFlag(FLAGS_d2h_gbps);
  o.peer_gbps = absl::GetFlag(FLAGS_peer_gbps);
  RETURN_IF_ERROR(CheckFlagFinite("h2d_gbps", o.h2d_gbps, false, "GB/s; 0 keeps the cluster's"));
  RETURN_IF_ERROR(CheckFlagFinite("d2h_gbps", o.d2h_gbps, false, "GB/s; 0 keeps the cluster's"));
  RETURN_IF_ERROR(CheckFlagFinite("peer_gbps", o.peer_gbps, false, "GB/s; 0 keeps the cluster's"));
  o.data = absl::GetFlag(FLAGS_data) == "synthetic" ? "synthetic"
                                                    : ResolveUserPath(absl::GetFlag(FLAGS_data));
  o.task = absl::GetFlag(FLAGS_task);
  o.steps = absl::GetFlag(FLAGS_steps);
  o.eval_every = absl::GetFlag(FLAGS_eval_every);
  o.eval_examples = absl::GetFlag(FLAGS_eval_examples);
  RETURN_IF_ERROR(CheckFlagRange("steps", o.steps, 1, 1000000000, "training steps"));
  RETURN_IF_ERROR(CheckFlagRange("eval_every", o.eval_every, 0, 1000000000, "steps; 0: at the end"));
  RETURN_IF_ERROR(
      CheckFlagRange("eval_examples", o.eval_examples, 0, 1000000000, "dev examples; 0: all"));
  o.init = absl::GetFlag(FLAGS_init) == "random" ? "random"
                                                 : ResolveUserPath(absl::GetFlag(FLAGS_init));
  o.init_seed = absl::GetFlag(FLAGS_init_seed);
  if (!absl::GetFlag(FLAGS_init_adapters).empty()) {
    o.init_adapters = ResolveUserPath(absl::GetFlag(FLAGS_init_adapters));
  }
  o.resume = absl::GetFlag(FLAGS_resume);
  o.overwrite = absl::GetFlag(FLAGS_overwrite);
  if (o.resume && o.overwrite) {
    return absl::InvalidArgumentError(
        "--resume continues the run in --out_dir and --overwrite replaces it: give one");
  }
  if (o.resume && (o.init != "random" || !o.init_adapters.empty())) {
    const std::string flag = o.init != "random" ? "--init" : "--init_adapters";
    return absl::InvalidArgumentError(absl::StrCat(
        flag, " chooses the starting weights of a fresh run; --resume continues from the run's "
              "checkpoint: drop ", flag));
  }
  o.out_dir = absl::GetFlag(FLAGS_out_dir);
  o.checkpoint_every = absl::GetFlag(FLAGS_checkpoint_every);
  RETURN_IF_ERROR(CheckFlagRange("checkpoint_every", o.checkpoint_every, 0, 1000000000,
                                 "steps; 0: no checkpoints"));
  if (const std::string timeout = absl::GetFlag(FLAGS_collective_timeout_s); timeout != "auto") {
    if (!absl::SimpleAtoi(timeout, &o.collective_timeout_s)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--collective_timeout_s=%s: expected a number of seconds (1 to 86400) or 'auto'",
          timeout));
    }
    RETURN_IF_ERROR(
        CheckFlagRange("collective_timeout_s", o.collective_timeout_s, 1, 86400, "seconds"));
  }
  o.final_outputs = absl::GetFlag(FLAGS_final_outputs);
  o.speed_probe_every = absl::GetFlag(FLAGS_speed_probe_every);
  RETURN_IF_ERROR(CheckFlagRange("speed_probe_every", o.speed_probe_every, 0, 1000000000,
                                 "steps; 0: no speed probe"));
  if (o.speed_probe_every > 0 && !backend.probes_compute_speed) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--speed_probe_every times the CPU testbed's cores; the %s backend computes elsewhere: "
        "drop it or use --backend=%s",
        o.backend.name,
        BackendNamesWith(&BackendCapabilities::probes_compute_speed, " or --backend=")));
  }
  if (!absl::GetFlag(FLAGS_timeline_out).empty()) {
    o.timeline_out = ResolveUserPath(absl::GetFlag(FLAGS_timeline_out));
  }
  if (!absl::GetFlag(FLAGS_trace_out).empty()) {
    o.trace_out = ResolveUserPath(absl::GetFlag(FLAGS_trace_out));
  }
  return o;
}

// What the launcher (or a run of one rank) holds for the whole run.
struct Launch {
  TrainOptions options;
  // What every rank runs: the schedule, validated, and the wait limit.
  Schedule schedule;
  std::chrono::seconds wait_limit{0};
  // The output directory's lock: held by this process and inherited by
  // mpirun, so that it stays held until the last rank has ended.
  std::optional<DirectoryLock> out_dir_lock;
  // The ranks to start (one per schedule device), and the machines for
  // mpirun's --host ("" for this one).
  int ranks = 1;
  std::string hosts;
  // A rank train's launcher started: whether it read the launcher's
  // schedule file (else it is on another machine, and receives it over MPI
  // once MPI is up: runtime/rank_schedule.h ShareRankSchedule).
  bool read_schedule = false;
};

// The machines --hosts or --hostfile name; none for this one.
absl::StatusOr<std::vector<NodeSlots>> NodesFromFlags() {
  const std::string hosts = absl::GetFlag(FLAGS_hosts), file = absl::GetFlag(FLAGS_hostfile);
  if (!hosts.empty() && !file.empty()) {
    return absl::InvalidArgumentError("--hosts and --hostfile both name the machines: give one");
  }
  if (!hosts.empty()) return ParseHostList(hosts);
  if (!file.empty()) return ReadHostfile(ResolveUserPath(file));
  return std::vector<NodeSlots>();
}

// A rank that train's launcher started: what the launcher prepared for it
// (--rank_schedule, --rank_wait_limit_s), checked there already.
absl::Status ReceivePreparedRun(Launch* launch) {
  const std::string schedule = absl::GetFlag(FLAGS_rank_schedule);
  const int wait_limit_s = absl::GetFlag(FLAGS_rank_wait_limit_s);
  if (schedule.empty() || wait_limit_s <= 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "this rank was started by train's launcher (ZOSCHED_LAUNCHER is set) but without the "
        "schedule and the wait limit the launcher gives its ranks (--rank_schedule='%s', "
        "--rank_wait_limit_s=%d): start the run through train (--ranks=N), or start mpirun by "
        "hand without ZOSCHED_LAUNCHER",
        schedule, wait_limit_s));
  }
  absl::StatusOr<Schedule> read = ReadRankSchedule(schedule);
  if (read.ok()) {
    launch->schedule = *std::move(read);
    launch->read_schedule = true;
  } else if (!absl::IsNotFound(read.status())) {
    return read.status();
  }
  launch->wait_limit = std::chrono::seconds(wait_limit_s);
  return absl::OkStatus();
}

// Checks everything that needs no rank before any rank starts, so that a
// bad flag or input is reported once, here: the flags; the schedule
// (lowered or read, validated, a model the runtime runs); the rank count
// against its devices; the host memory the ranks will need against what
// this machine gives; and a fresh run's empty output directory or the run
// --resume continues (runtime/run_checkpointing.h: CheckResumable). Then
// locks the output directory and sets the wait limit. The ranks of a
// hand-started mpirun check and prepare again, each; those train's
// launcher starts receive what it prepared.
absl::StatusOr<Launch> CheckBeforeLaunch(int ranks) {
  RETURN_IF_ERROR(CheckFlagRange("ranks", ranks, 0, 4096, "ranks; 0: as launched"));
  Launch launch;
  ASSIGN_OR_RETURN(launch.options, OptionsFromFlags());
  TrainOptions& options = launch.options;
  if (StartedByZoschedLauncher()) {
    RETURN_IF_ERROR(ReceivePreparedRun(&launch));
    return launch;
  }
  if (!absl::GetFlag(FLAGS_rank_schedule).empty() || absl::GetFlag(FLAGS_rank_wait_limit_s) != 0) {
    return absl::InvalidArgumentError(
        "--rank_schedule and --rank_wait_limit_s are what train's launcher gives the ranks it "
        "starts: drop them (--schedule=FILE runs a schedule file, --collective_timeout_s sets "
        "the wait limit)");
  }
  if (!options.schedule.empty()) {
    // The schedule wins; flags that disagree with it are an error.
    Schedule file;
    RETURN_IF_ERROR(ReadProtoFile(options.schedule, &file));
    RETURN_IF_ERROR(CheckFlagsAgreeWithSchedule(file, options.schedule));
  }
  ASSIGN_OR_RETURN(launch.schedule, PrepareSchedule(options));
  const Schedule& schedule = launch.schedule;
  RETURN_IF_ERROR(CheckRuntimeSupports(schedule.model()));
  // A file --init cannot start from (a run checkpoint, NaN or Inf weights,
  // a directory or device, a missing tensor) is refused before any rank
  // starts, and by every rank of a hand-started mpirun.
  if (options.init != "random") RETURN_IF_ERROR(CheckInitFile(options.init, schedule.model()));
  ASSIGN_OR_RETURN(const std::vector<NodeSlots> nodes, NodesFromFlags());
  if (StartedByMpiLauncher()) {
    if (!nodes.empty()) {
      return absl::InvalidArgumentError(
          "--hosts and --hostfile are for train's launcher (train --hosts=... starts mpirun): "
          "under a hand-started mpirun, give mpirun the machines (--host or --hostfile)");
    }
    // A hand-started mpirun's rank 0 locks the directory itself.
    options.lock_out_dir = true;
    ASSIGN_OR_RETURN(launch.wait_limit, WaitLimit(options, schedule));
    return launch;
  }
  const int devices = schedule.devices_size();
  int slots = 0;
  for (const NodeSlots& n : nodes) slots += n.slots;
  if (!nodes.empty() && ranks != 0 && ranks != slots) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--ranks=%d but the machines give %d slots (%s): leave --ranks out with --hosts or "
        "--hostfile (a rank a slot)",
        ranks, slots, HostListFlag(nodes)));
  }
  const int started = !nodes.empty() ? slots : std::max(ranks, 1);
  launch.ranks = started;
  if (!nodes.empty()) {
    RETURN_IF_ERROR(CheckRanksOnHosts(schedule, nodes));
    std::vector<std::string> names;
    for (const NodeSlots& n : nodes) names.push_back(n.node);
    RETURN_IF_ERROR(CheckNodesReachable(names, std::chrono::seconds(30)));
    launch.hosts = HostListFlag(nodes);
  }
  if (started != devices) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the schedule '%s' has %d devices but %s: pass --ranks=%d (or start %d ranks with "
        "mpirun -np %d)",
        schedule.name(), devices,
        ranks == 0 ? std::string("no --ranks was given (one rank)")
                   : absl::StrFormat("--ranks=%d", ranks),
        devices, devices, devices));
  }
  if (nodes.empty()) {
    // This machine runs every rank. (On several, each rank checks its own
    // machine when it starts: runtime/trainer.h.)
    ASSIGN_OR_RETURN(const MemoryHeadroom headroom, ReadMemoryHeadroom());
    RETURN_IF_ERROR(CheckHostMemory(schedule, /*device=*/-1,
                                    CapabilitiesOf(options.backend).arena_in_host_memory,
                                    RankZeroCopiesModel(options), headroom));
  }
  RETURN_IF_ERROR(CheckOutputDirectory(options));
  const std::string out = OutputDir(options.out_dir, "train");
  RETURN_IF_ERROR(MakeDirectories(out));
  ASSIGN_OR_RETURN(launch.out_dir_lock, DirectoryLock::Acquire(out, "--out_dir"));
  // Checked again under the lock: a run that started meanwhile is seen.
  RETURN_IF_ERROR(CheckOutputDirectory(options));
  // The data, read as the ranks will read it, and the run to resume on it.
  ASSIGN_OR_RETURN(const TrainingTask task,
                   LoadTaskElsewhere(options.data, options.task, schedule.model(),
                                     schedule.training().seq_len()));
  if (options.resume) RETURN_IF_ERROR(CheckResumable(options, schedule, DataOf(options, task)));
  ASSIGN_OR_RETURN(launch.wait_limit, WaitLimit(options, schedule));
  return launch;
}

}  // namespace
}  // namespace zosched

// Runs the rank's training; a run out of host memory despite the checks
// (their estimate was short) is reported as such, not as a crash.
absl::StatusOr<zosched::TrainEnd> TrainRank(const zosched::Launch& launch, int rank, int world) {
  try {
    return zosched::Train(launch.options, launch.schedule, launch.wait_limit, rank, world);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        "ran out of host memory (std::bad_alloc) although the run's plan fitted the limits "
        "checked at start; lower the schedule with a smaller model or --host_dtype, or raise "
        "the limit (ulimit -v, the memory cgroup)");
  }
}

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"train", "",
       "ZO fine-tuning executed from the schedule IR (lowered from the lowering flags, or\n"
       "--schedule=FILE) on the CPU testbed or on NVIDIA GPUs (--backend=cuda), one process per\n"
       "schedule device (--ranks=N starts them through mpirun). Exit status 128 + N: signal N\n"
       "stopped the run after a checkpoint (--resume continues it)."});
  const int ranks = absl::GetFlag(FLAGS_ranks);
  if (zosched::StartedByMpiLauncher()) {
    // A rank dies with mpirun, however mpirun ends.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) return 1;  // mpirun is already gone
  }
  absl::StatusOr<zosched::Launch> launch = zosched::CheckBeforeLaunch(ranks);
  // Bad flags or inputs, no GPU for --backend=cuda: 2 (base/command_line.h).
  if (!launch.ok()) return zosched::ReportError("train", launch.status());
  if ((launch->ranks > 1 || !launch->hosts.empty()) && !zosched::StartedByMpiLauncher()) {
    // The ranks run the schedule prepared here, from a file in the job's
    // directory (flags first: what follows a "--" is not a flag).
    absl::StatusOr<zosched::MpiJobDirectory> job_directory = zosched::MpiJobDirectory::Create();
    if (!job_directory.ok()) return zosched::ReportError("train", job_directory.status());
    const absl::StatusOr<std::string> schedule_file =
        zosched::WriteRankSchedule(job_directory->path(), launch->schedule);
    if (!schedule_file.ok()) return zosched::ReportError("train", schedule_file.status());
    std::vector<std::string> args = zosched::ArgsWithoutRanks(argc, argv);
    args.insert(args.begin(),
                {absl::StrCat("--rank_schedule=", *schedule_file),
                 absl::StrCat("--rank_wait_limit_s=", launch->wait_limit.count())});
    // The ranks report their own errors; mpirun's status is the run's.
    int stop_signal = 0;
    const absl::StatusOr<int> status =
        zosched::RunUnderMpirun(launch->ranks, args, &stop_signal, &*job_directory,
                                launch->hosts);
    if (!status.ok()) {
      std::fprintf(stderr, "train: %s\n", std::string(status.status().message()).c_str());
      return 1;
    }
    if (stop_signal != 0) {
      const bool clean = *status == 128 + SIGUSR1;
      std::fprintf(stderr, "train: SIG%s: %s\n", sigabbrev_np(stop_signal),
                   clean ? "the ranks stopped after the current step"
                         : absl::StrFormat("the ranks ended with status %d", *status).c_str());
      return clean ? 128 + stop_signal : *status;
    }
    return *status;
  }
  zosched::InstallStopSignalHandlers();
  // A run of one rank without mpirun: Open MPI's files in a directory of
  // its own (as the launcher gives mpirun's ranks), and no Open MPI notice
  // after its error (runtime/mpirun_output.h does that for mpirun's ranks).
  std::optional<zosched::MpiJobDirectory> job_directory;
  if (!zosched::StartedByMpiLauncher()) {
    absl::StatusOr<zosched::MpiJobDirectory> created = zosched::MpiJobDirectory::Create();
    if (!created.ok()) return zosched::ReportError("train", created.status());
    job_directory.emplace(std::move(*created));
    for (const auto& [name, value] : job_directory->Environment()) {
      setenv(name.c_str(), value.c_str(), 1);
    }
    setenv("OMPI_MCA_orte_execute_quiet", "1", 0);
  }
  int rank = 0, world = 1;
  {
    zosched::Watch watch("MPI start-up (MPI_Init)", std::chrono::seconds(120));
    if (absl::Status s = zosched::InitMpi(&argc, &argv, &rank, &world); !s.ok()) {
      std::fprintf(stderr, "train: %s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
  if (zosched::StartedByZoschedLauncher()) {
    // Ranks on machines without the launcher's file receive the schedule
    // from one that read it; once every rank has it, that one removes the
    // file (runtime/rank_schedule.h).
    const std::string& file = absl::GetFlag(FLAGS_rank_schedule);
    absl::StatusOr<bool> sender = [&]() -> absl::StatusOr<bool> {
      zosched::Watch watch("sharing the launcher's schedule", std::chrono::seconds(120));
      return zosched::ShareRankSchedule(file, launch->read_schedule, &launch->schedule);
    }();
    absl::Status read = sender.status();
    if (read.ok()) {
      read = zosched::MeetAll("receiving the launcher's schedule", 0, std::chrono::seconds(120),
                              std::chrono::microseconds(1000))
                 .status();
    }
    if (read.ok() && *sender) read = zosched::RemoveRankSchedule(file);
    if (!read.ok()) zosched::AbortWorld(std::string(read.message()), zosched::ExitStatusFor(read));
  }
  const absl::StatusOr<zosched::TrainEnd> end = TrainRank(*launch, rank, world);
  if (!end.ok()) {
    // Stop every rank: one failing rank must not leave the others waiting.
    const absl::Status& status = end.status();
    if (job_directory.has_value()) {  // one rank, no other to stop
      const int code = zosched::ReportError("train", status);
      job_directory.reset();
      std::_Exit(code);
    }
    zosched::AbortWorld(std::string(status.message()), zosched::ExitStatusFor(status));
  }
  {
    zosched::Watch watch("the end of the run (MPI_Finalize)", std::chrono::seconds(120));
    MPI_Finalize();
  }
  return end->stop_signal != 0 ? 128 + end->stop_signal : 0;
}
