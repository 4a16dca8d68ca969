// Measures this machine as the CPU testbed and writes a calibrated Cluster:
//
//   bazel run //runtime:calibrate -- --out=clusters/local_cpu.calibrated.pbtxt
//       [--model=opt-tiny --batch=16 --seq=32 --repeats=7]
//
// 1. Compute: every compute op shape (op class, micro-batch, seq_len,
//    elements) of the schedules predict_vs_measure and the quickstart run
//    for --model (zo2; distzo2 P2xD1, P1xD2, P2xD2, sliced and naive), each
//    executed by the real CPU backend in this one process, in rounds that
//    run every shape once on each core the cluster's devices compute on
//    -> measured_compute entries (the medians on core 0) and each device's
//    compute_time_scale (its core's total against core 0's); each round
//    also times the speed probe on each core -> Device.speed_probe_s.
//    Then, under mpirun -np 2, the largest ops timed alone and while the
//    other process computes too, in rounds that alternate the two ->
//    Host.shared_core_slowdown.
// 2. Throttled copies: upload and offload of 64 KiB .. 4 MiB through the
//    backend's throttled copy at the cluster's link rate -> fixed cost +
//    bytes / rate (a line that one slow size does not bend: base/line_fit.h), written as the host links' latency_s (the
//    rate stays the throttle's setting, which a run may override).
// 3. Collectives: the runtime's all-gather (runtime/mpi_world.h + peer
//    throttle) among 2 and 4 ranks (this program re-run under mpirun; the
//    sizes take turns, so a busy spell slows some samples of each) -> the
//    collective model's base and per-step latency (from the 2- and 4-rank
//    fixed costs) and the bus-bandwidth efficiency (measured rate / the peer
//    link's rate).
//    The copies' thread CPU time, fitted the same way -> Device.transfer_cpu_s
//    (fixed part) and transfer_cpu_gbps (the bytes moved), for copies and
//    collectives alike (a collective's thread does the same: it wakes,
//    copies its bytes through memory and sleeps out the throttle).
// 4. Stream wake-up: one of the runtime's host streams records each op, the
//    other waits for it -> Device.stream_wake_latency_s (the waiter's delay)
//    and stream_signal_cost_s (the recorder's); the waiter's CPU time
//    between its ops is added to transfer_cpu_s (a transfer thread wakes so for
//    each copy).
// 5. Transfer interruption: a step of zo2 compute on core 0, alone and while
//    uploads run back to back on that core (each throttled long enough for
//    its thread to sleep most of the time, whatever the link's rate), in
//    thread CPU time -> the compute's extra CPU per upload (one wake-up of
//    the copy thread), Device.interrupt_cpu_s.
// Prints every measurement with its min, median and max.
//
// --cluster must describe the machine the backend measures: the CPU
// testbed's devices (Device.shares_host_cores, as local_cpu's) for cpu, GPUs
// for cuda; its figures are written under its name. Exit status 0; 2 for
// bad flags or inputs (a cluster of the other kind, one whose plans do not
// fit its memory, an --out that cannot be written, unreadable data), all
// found before anything is measured; 1 when a measurement fails.
//
// --backend=cuda (a --config=cuda build) measures the NVIDIA GPU machine
// instead (runtime/cuda/calibration/gpu_calibration.h):
//
//   bazel-bin/runtime/calibrate --backend=cuda --out=clusters/h100.calibrated.pbtxt
//       [--cluster=h100_sxm_x1 --model=opt-tiny --batch=16 --seq=32
//        --compute_dtype=FP16 --tf32 --repeats=7] [--schedules=a.pb,b.pb]
//
// the compute op shapes (each row keyed by its compute dtype too) of mezo,
// zo2 and the distzo2 grids above, or of the --schedules files, through the
// CUDA backend and the executor, the host link alone and both directions at
// once (-> down_gbps, up_gbps, duplex_gbps, latency_s), and the runtime's
// all-gathers among 2 and 4 ranks (this program under mpirun; NCCL where
// each rank has its own GPU, else host-staged) as measured_collectives
// rows. --cluster defaults to h100_sxm_x1 (the measured H100 machine) there,
// local_cpu on the CPU; --out to clusters/<cluster name>.calibrated.pbtxt.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/command_line.h"
#include "base/flag_checks.h"
#include "base/line_fit.h"
#include "base/median.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/user_path.h"
#include "models/model_spec.h"
#include "models/model_zoo.h"
#include "runtime/core_sharing_probe.h"
#include "runtime/cpu_backend.h"
#include "runtime/host_store_layout.h"
#include "runtime/host_streams.h"
#include "runtime/launcher.h"
#include "runtime/mpi_world.h"
#include "runtime/precise_sleep.h"
#include "runtime/speed_probe.h"
#include "runtime/task.h"
#include "schedule/cluster_catalog.h"
#include "schedule/cluster_lookup.h"
#include "schedule/cluster_validate.h"
#include "schedule/lowering.h"
#include "schedule/training_settings.h"
#include "schedule/validate.h"
#ifdef ZOSCHED_WITH_CUDA
#include "runtime/cuda/calibration/calibration_plan.h"
#include "runtime/cuda/calibration/gpu_calibration.h"
#endif

ABSL_FLAG(std::string, backend, "cpu",
          "cpu (this machine as the CPU testbed) or cuda (its NVIDIA GPUs; --config=cuda builds)");
ABSL_FLAG(std::string, out, "",
          "the calibrated Cluster (default: clusters/<cluster name>.calibrated.pbtxt)");
ABSL_FLAG(std::string, cluster, "",
          "the cluster to calibrate, catalog name or path (default: local_cpu; with "
          "--backend=cuda h100_sxm_x1)");
ABSL_FLAG(std::string, model, "opt-tiny", "the model whose op shapes to measure");
ABSL_FLAG(int32_t, batch, 16, "examples per step of the schedules to calibrate for");
ABSL_FLAG(int32_t, seq, 32, "sequence length of the schedules to calibrate for");
ABSL_FLAG(int32_t, threads, 1,
          "cpu: cores each device computes on, as train --threads will run it");
ABSL_FLAG(int32_t, repeats, 7,
          "timed runs per measurement (compute shapes: 4x as many rounds, over every shape and "
          "core)");
ABSL_FLAG(std::string, data, "synthetic",
          "cpu: the training data the compute ops are timed on, as train's --data "
          "('synthetic' or a task directory): attention's cost follows the examples' lengths");
ABSL_FLAG(std::string, task, "sst2", "cpu: the task in --data (sst2 or boolq)");
ABSL_FLAG(std::string, compute_dtype, "",
          "cuda: FP32, FP16 or BF16 (default: lowering's, the model's weight dtype)");
ABSL_FLAG(bool, tf32, false, "cuda: let FP32 GEMMs use TF32 tensor cores");
ABSL_FLAG(std::string, collective_probe, "",
          "internal: run the collective probe under mpirun and write results here");
ABSL_FLAG(std::string, schedules, "",
          "cuda: comma-separated schedule files (schedule.pb, e.g. the ones predict_vs_measure "
          "lowers) whose compute op shapes to measure, instead of those --model, --batch, --seq "
          "and --compute_dtype lower to");
ABSL_FLAG(std::string, compute_probe, "",
          "internal: run the compute-sharing probe under mpirun and write results here");

namespace zosched {
namespace {

using Clock = std::chrono::steady_clock;

// --cluster, or its default for --backend.
std::string ClusterFlag() {
  const std::string flag = absl::GetFlag(FLAGS_cluster);
  if (!flag.empty()) return flag;
  if (absl::GetFlag(FLAGS_backend) != "cuda") return "local_cpu";
  // The measured H100 machine; before its catalog file existed, the closest.
  return CatalogClusterPath("h100_sxm_x1").empty() ? "h100_sxm_x2" : "h100_sxm_x1";
}

// --out, or clusters/<name of the cluster calibrated>.calibrated.pbtxt.
std::string OutPath(const Cluster& cluster) {
  const std::string flag = absl::GetFlag(FLAGS_out);
  return ResolveUserPath(flag.empty() ? "clusters/" + cluster.name() + ".calibrated.pbtxt" : flag);
}

// OK when this build can calibrate --backend (the CUDA part is linked in by
// --config=cuda, which defines ZOSCHED_WITH_CUDA here). Errors:
// InvalidArgument (exit 2) for an unknown backend, for cuda in a build
// without it, and for the cuda-only flags given to cpu.
absl::Status CheckBackend() {
  const std::string backend = absl::GetFlag(FLAGS_backend);
  if (backend == "cuda") {
    if (absl::GetFlag(FLAGS_threads) != 1) {
      return absl::InvalidArgumentError("--threads applies to --backend=cpu only");
    }
#ifdef ZOSCHED_WITH_CUDA
    return absl::OkStatus();
#else
    return absl::InvalidArgumentError(
        "--backend=cuda: this build has no CUDA backend; build with --config=cuda "
        "(./bazelw build --config=cuda //runtime:calibrate)");
#endif
  }
  if (backend != "cpu") {
    return absl::InvalidArgumentError("--backend='" + backend + "': expected cpu or cuda");
  }
  if (!absl::GetFlag(FLAGS_compute_dtype).empty() || absl::GetFlag(FLAGS_tf32)) {
    return absl::InvalidArgumentError(
        "--compute_dtype and --tf32 apply to --backend=cuda only (the CPU testbed computes in "
        "FP32)");
  }
  if (!absl::GetFlag(FLAGS_schedules).empty()) {
    return absl::InvalidArgumentError(
        "--schedules applies to --backend=cuda only (the CPU testbed measures the shapes of "
        "--model, --batch and --seq)");
  }
  return absl::OkStatus();
}

// OK when --backend measures the kind of device `cluster` describes: cpu
// the CPU testbed's (every device shares_host_cores, and a peer domain the
// all-gathers are throttled to), cuda GPUs (no device shares_host_cores).
// A calibration times this machine through its backend and writes the
// figures under the cluster's name: this CPU's timings filed as an H100's
// would mislead every prediction made from them. Errors: InvalidArgument
// naming the cluster, a device of the wrong kind and what to calibrate
// instead.
absl::Status CheckClusterKind(const Cluster& cluster) {
  const bool cpu = absl::GetFlag(FLAGS_backend) == "cpu";
  const std::string which =
      ClusterFlag() == cluster.name()
          ? absl::StrCat("--cluster=", cluster.name())
          : absl::StrFormat("--cluster=%s (cluster '%s')", ClusterFlag(), cluster.name());
  std::vector<const Device*> wrong_kind;
  for (const Device& d : cluster.devices()) {
    if (d.shares_host_cores() != cpu) wrong_kind.push_back(&d);
  }
  if (wrong_kind.empty()) {
    if (cpu && cluster.peer_domains().empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s has no peer_domains; the CPU testbed needs the one its devices share, whose "
          "gbps_per_device the runtime throttles all-gathers to (as local_cpu's peer_domains { "
          "name: \"mpi\" link_class: EMULATED gbps_per_device: 4 latency_s: 2e-5 })",
          which));
    }
    return absl::OkStatus();
  }
  const std::string devices = absl::StrFormat(
      "device '%s' (%s)%s", wrong_kind[0]->name(), wrong_kind[0]->model(),
      wrong_kind.size() > 1 ? absl::StrFormat(" and %d more", wrong_kind.size() - 1) : "");
  if (cpu) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s not the CPU testbed's (shares_host_cores is not set), and --backend=cpu "
        "measures this machine's CPU as the testbed: its timings would be written as that "
        "hardware's. Calibrate a GPU cluster with --backend=cuda on its GPU machine (a "
        "--config=cuda build); here, calibrate a CPU testbed cluster (local_cpu, or a copy of "
        "clusters/local_cpu.pbtxt)",
        which, devices + (wrong_kind.size() > 1 ? " are" : " is")));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: %s the CPU testbed's (shares_host_cores: true), and --backend=cuda measures this "
      "machine's NVIDIA GPUs: calibrate the testbed with --backend=cpu, or name a GPU cluster "
      "(e.g. --cluster=h100_sxm_x1)",
      which, devices + (wrong_kind.size() > 1 ? " are" : " is")));
}

// OK when the calibrated cluster can be written to `path` (OutPath): it is
// not a directory, and its directory exists and this process may write
// there. Checked before measuring, so that a calibration is not lost at its
// end. Errors: InvalidArgument naming --out, the path and the reason.
absl::Status CheckOutPath(const std::string& path) {
  const std::string flag = absl::GetFlag(FLAGS_out);
  const std::string where = flag.empty() ? absl::StrCat("--out (default ", path, ")")
                                         : absl::StrCat("--out=", flag);
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is a directory (expected the file to write)", where));
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (!std::filesystem::is_directory(dir, error)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the directory %s does not exist (create it, or choose another --out)", where, dir));
  }
  if (access(dir.c_str(), W_OK) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: cannot write in %s: %s (choose another --out)", where, dir, std::strerror(errno)));
  }
  return absl::OkStatus();
}

struct Stats {
  double min = 0, median = 0, max = 0;  // seconds
};

template <typename F>
absl::StatusOr<Stats> Time(int repeats, F&& f) {
  RETURN_IF_ERROR(f());  // warm-up
  std::vector<double> s;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    RETURN_IF_ERROR(f());
    s.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(s.begin(), s.end());
  return Stats{s.front(), s[s.size() / 2], s.back()};
}

// What waking a stream costs, in the runtime's common case: the stream that
// records goes on working (a copy stream starts its next copy, compute its
// next op), and the waiting one has slept for a while (an op's length: a
// millisecond), so it is woken on another, idle core. One stream runs 1 ms
// ops back to back, each recorded; the other waits for each and runs a
// short op. Medians over the handoffs:
//   the waiting stream's start - the recorded op's end
//     -> every device's stream_wake_latency_s;
//   the recording stream's next start - its recorded op's end
//     -> every device's stream_signal_cost_s.
// (On this project's VMs 70-80 us and about 30 us, against 5-8 us and
// nothing when the waiting stream slept only ~200 us: a virtual CPU idle
// for longer has halted, and waking it is what costs.)
absl::Status MeasureStreamWakeUp(Cluster* out) {
  constexpr int kHandoffs = 200;
  std::vector<Clock::time_point> started(kHandoffs), recorded(kHandoffs), woken(kHandoffs);
  // The waiting stream's thread CPU time at the start and end of each of
  // its ops: what it spends between them is its wake-up.
  std::vector<double> cpu_in(kHandoffs), cpu_out(kHandoffs);
  // Both streams free to run on any core (threads would inherit this
  // thread's pinning): the waiting one then wakes on an idle core, as the
  // runtime's transfer threads do on the cores no device computes on.
  HostStreams streams(2, /*events=*/kHandoffs, [](int) {
    cpu_set_t all;
    CPU_ZERO(&all);
    for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; ++c) CPU_SET(c, &all);
    sched_setaffinity(0, sizeof(all), &all);
  });
  auto work = [](Clock::time_point from, std::chrono::microseconds how_long) {
    while (Clock::now() - from < how_long) {
    }
  };
  for (int i = 0; i < kHandoffs; ++i) {
    streams.Enqueue(0, [&, i] {
      started[i] = Clock::now();
      work(started[i], std::chrono::microseconds(1000));
      recorded[i] = Clock::now();
      return absl::OkStatus();
    });
    streams.Record(0, i);
    streams.Wait(1, i);
    streams.Enqueue(1, [&, i] {
      woken[i] = Clock::now();
      cpu_in[i] = 1e-9 * ThreadCpuNs();
      work(woken[i], std::chrono::microseconds(20));
      cpu_out[i] = 1e-9 * ThreadCpuNs();
      return absl::OkStatus();
    });
  }
  RETURN_IF_ERROR(streams.WaitFence(streams.Fence()));
  std::vector<double> wake, signal, wake_cpu;
  for (int i = 0; i < kHandoffs; ++i) {
    wake.push_back(std::chrono::duration<double, std::micro>(woken[i] - recorded[i]).count());
    if (i > 0) wake_cpu.push_back((cpu_in[i] - cpu_out[i - 1]) * 1e6);
    if (i + 1 < kHandoffs) {
      signal.push_back(
          std::chrono::duration<double, std::micro>(started[i + 1] - recorded[i]).count());
    }
  }
  const double wake_us = Median(wake), signal_us = Median(signal);
  const double wake_cpu_us = std::max(0.0, Median(wake_cpu));
  std::printf("stream wake-up (median of %d handoffs): the waiting stream starts %.1f us after "
              "the op it waits for, its wake-up taking %.1f us of CPU; the recording stream "
              "starts its next op %.1f us late\n",
              kHandoffs, wake_us, wake_cpu_us, signal_us);
  for (Device& d : *out->mutable_devices()) {
    d.set_stream_wake_latency_s(wake_us * 1e-6);
    d.set_stream_signal_cost_s(signal_us * 1e-6);
    // A transfer thread wakes for each copy or collective it waits for.
    d.set_transfer_cpu_s(d.transfer_cpu_s() + wake_cpu_us * 1e-6);
  }
  return absl::OkStatus();
}

// The schedules whose compute shapes get measured. Errors: lowering's
// (InvalidArgument, or ResourceExhausted for a memory plan that does not
// fit the cluster), naming the schedule.
absl::StatusOr<std::vector<Schedule>> TargetSchedules(const Cluster& cluster) {
  ASSIGN_OR_RETURN(ModelSpec model, LoadModelSpec(absl::GetFlag(FLAGS_model)));
  std::vector<Schedule> schedules;
  for (auto [strategy, p, d] : std::vector<std::tuple<StrategyKind, int, int>>{
           {ZO2, 1, 1}, {DISTZO2, 2, 1}, {DISTZO2, 1, 2}, {DISTZO2, 2, 2}}) {
    for (bool slicing : {true, false}) {
      if (strategy == ZO2 && !slicing) continue;
      LowerOptions o;
      o.strategy = strategy;
      o.pertp = p;
      o.dp = d;
      o.slicing = slicing;
      o.training = DefaultTrainingSettings();
      o.training.set_batch_size(absl::GetFlag(FLAGS_batch));
      o.training.set_seq_len(absl::GetFlag(FLAGS_seq));
      o.training.set_compute_dtype(FP32);
      o.training.set_host_dtype(FP32);
      o.training.set_learning_rate(1e-6);
      absl::StatusOr<Schedule> s = LowerSchedule(model, cluster, o);
      if (!s.ok()) {
        return absl::Status(
            s.status().code(),
            absl::StrFormat("lowering %s on --cluster=%s (one of the schedules whose op shapes "
                            "are timed: zo2, distzo2 P2xD1, P1xD2 and P2xD2, at --batch=%d "
                            "--seq=%d): %s",
                            strategy == ZO2 ? "zo2"
                                            : absl::StrFormat("distzo2 P%dxD%d%s", p, d,
                                                              slicing ? "" : " (naive)"),
                            ClusterFlag(), o.training.batch_size(), o.training.seq_len(),
                            s.status().message()));
      }
      schedules.push_back(*std::move(s));
    }
  }
  return schedules;
}

// The batches the compute ops are timed on: the first steps of --data as
// train draws them for `s` (the synthetic task is written to a temporary
// directory first and removed after reading).
absl::StatusOr<std::vector<StepBatch>> TimingBatches(const Schedule& s, int count) {
  std::string dir = absl::GetFlag(FLAGS_data);
  std::string temporary;
  if (dir == "synthetic") {
    char name[] = "/tmp/zosched_calibrate_XXXXXX";
    if (mkdtemp(name) == nullptr) {
      return absl::InternalError(absl::StrCat("cannot create a temporary directory in /tmp: ",
                                              std::strerror(errno)));
    }
    temporary = dir = name;
    if (absl::Status written = WriteSyntheticTask(dir); !written.ok()) {
      std::filesystem::remove_all(temporary);
      return written;
    }
  }
  absl::StatusOr<TrainingTask> task =
      LoadTask(dir, absl::GetFlag(FLAGS_task), s.model(), s.training().seq_len());
  if (!temporary.empty()) std::filesystem::remove_all(temporary);
  if (!task.ok()) return task.status();
  std::vector<StepBatch> batches(count);
  for (int step = 0; step < count; ++step) {
    task->FillStep(step, s.training().batch_size(), s.training().base_seed(), &batches[step]);
  }
  return batches;
}

// The cores the runtime pins compute to for `cluster`'s core-sharing
// devices (CpuBackend::ComputeCores): the i-th such device of a host on
// cores i*threads .. i*threads+threads-1, mod the online cores. Per device
// (empty for the others).
std::vector<std::vector<int>> DeviceComputeCores(const Cluster& cluster, int threads) {
  std::vector<std::vector<int>> cores(cluster.devices_size());
  absl::flat_hash_map<std::string, int> position;  // per host
  for (int d = 0; d < cluster.devices_size(); ++d) {
    const Device& device = cluster.devices(d);
    if (!device.shares_host_cores()) continue;
    const int i = position[device.host()]++;
    for (int w = 0; w < threads; ++w) cores[d].push_back((i * threads + w) % OnlineCores());
  }
  return cores;
}

// Device `device` of `s` as calibrate runs its ops: a CPU backend over a
// host store of its own, its updates doing their full work (a pending
// update is set), label words 10, 11, ... Errors: those of allocating the
// host store and of CpuBackend::Create.
struct TimingDevice {
  std::unique_ptr<NodeSharedMemory> host;
  std::unique_ptr<CpuBackend> backend;
};
absl::StatusOr<TimingDevice> MakeTimingDevice(const Schedule& s, int device, int threads = 1) {
  std::vector<int32_t> words(s.training().num_label_words());
  for (size_t k = 0; k < words.size(); ++k) words[k] = 10 + static_cast<int32_t>(k);
  const std::string& host_name = FindDevice(s.cluster(), s.devices(device).cluster_device())->host();
  TimingDevice d;
  ASSIGN_OR_RETURN(d.host, NodeSharedMemory::Allocate(LayOutHostStore(s, host_name).bytes));
  ASSIGN_OR_RETURN(d.backend, CpuBackend::Create(s, device, words, d.host.get(), nullptr, threads));
  d.backend->set_pending({12345, 0.5f, 1e-6f});
  return d;
}

// The inputs calibrate runs compute ops on: `batch`, a fixed seed and a small
// learning rate.
StepInputs TimingInputs(const StepBatch& batch) {
  StepInputs inputs;
  inputs.seed = 7;
  inputs.learning_rate = 1e-6f;
  inputs.tokens = batch.tokens.data();
  inputs.lengths = batch.lengths.data();
  inputs.labels = batch.labels.data();
  return inputs;
}

// Every compute op shape of `schedules`, run by the CPU backend of the
// device it first appears on, timed in rounds: each round runs every shape
// once on each core the devices compute on (a burst of outside load on the
// VM then lands on all shapes and cores alike instead of on one shape's
// runs). The medians on core 0 become the measured_compute table; each
// core's total over the shapes, against core 0's, becomes the
// compute_time_scale of the devices computing there, and the speed probe's
// median on it their speed_probe_s. With --threads > 1 (a device's ops on
// the backend's own team of cores) only core 0's placement is timed and
// both stay unset.
absl::Status MeasureCompute(const std::vector<Schedule>& schedules,
                            const std::vector<StepBatch>& batches, Cluster* out) {
  const int threads = absl::GetFlag(FLAGS_threads);
  const std::vector<std::vector<int>> device_cores = DeviceComputeCores(*out, threads);
  std::vector<int> cores = {0};
  if (threads == 1) {
    for (const std::vector<int>& c : device_cores) {
      for (int core : c) {
        if (std::find(cores.begin(), cores.end(), core) == cores.end()) cores.push_back(core);
      }
    }
  }
  struct Shape {
    CpuBackend* backend;
    const Op* op;
    std::vector<std::vector<double>> seconds;  // per entry of `cores`
  };
  std::vector<Shape> shapes;
  std::vector<TimingDevice> devices;
  absl::flat_hash_set<std::string> seen;
  for (const Schedule& s : schedules) {
    for (int device = 0; device < s.devices_size(); ++device) {
      CpuBackend* backend = nullptr;
      for (const Op& op : s.ops()) {
        if (op.device() != device || !op.has_compute()) continue;
        const ComputeOp& c = op.compute();
        const std::string key = absl::StrCat(ComputeKind_Name(c.kind()), "/", c.examples(), "/",
                                             c.seq_len(), "/", c.params().elements());
        if (!seen.insert(key).second) continue;
        if (backend == nullptr) {
          ASSIGN_OR_RETURN(TimingDevice created, MakeTimingDevice(s, device, threads));
          backend = created.backend.get();
          devices.push_back(std::move(created));
        }
        shapes.push_back({backend, &op, std::vector<std::vector<double>>(cores.size())});
      }
    }
  }
  const int rounds = 4 * absl::GetFlag(FLAGS_repeats);
  std::printf("compute ops on the first steps of --data=%s, timed in %d rounds over %zu shapes "
              "and %zu cores (seconds on core 0: min / median / max)\n",
              absl::GetFlag(FLAGS_data).c_str(), rounds, shapes.size(), cores.size());
  SpeedProbe probe;
  std::vector<std::vector<double>> probe_seconds(cores.size());  // per entry of `cores`
  StepResult result;
  int run = 0;  // each run on the next batch
  for (int round = 0; round < rounds; ++round) {
    for (size_t k = 0; k < cores.size(); ++k) {
      // On the core the runtime's compute stream is pinned to (at normal
      // priority: the op's own cost, not what else runs on the machine).
      // Each shape runs once untimed first: the thread has just moved, and
      // the core's caches hold the other core's round (cold, every op timed
      // 10 % slower than the runtime's compute thread, which stays put).
      PinThreadToCore(cores[k]);
      for (const bool timed : {false, true}) {
        for (Shape& shape : shapes) {
          const StepInputs inputs = TimingInputs(batches[run++ % batches.size()]);
          const auto start = Clock::now();
          RETURN_IF_ERROR(shape.backend->RunCompute(*shape.op, inputs, &result));
          const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
          if (timed) shape.seconds[k].push_back(seconds);
        }
      }
      probe_seconds[k].push_back(probe.CpuNs() * 1e-9);
    }
  }
  std::vector<double> core_total(cores.size(), 0);
  for (const Shape& shape : shapes) {
    const ComputeOp& c = shape.op->compute();
    MeasuredCompute* m = out->add_measured_compute();
    m->set_op_class(ComputeKind_Name(c.kind()));
    m->set_model(schedules[0].model().name());
    m->set_examples(c.examples());
    m->set_seq_len(c.seq_len());
    m->set_elements(c.params().elements());
    m->set_seconds(Median(shape.seconds[0]));
    for (size_t k = 0; k < cores.size(); ++k) core_total[k] += Median(shape.seconds[k]);
    std::printf("  %-18s examples %3d seq %4d elements %9ld: %.6f / %.6f / %.6f\n",
                m->op_class().c_str(), c.examples(), c.seq_len(), c.params().elements(),
                *std::min_element(shape.seconds[0].begin(), shape.seconds[0].end()), m->seconds(),
                *std::max_element(shape.seconds[0].begin(), shape.seconds[0].end()));
  }
  if (threads > 1) {
    std::printf("  per-core speed: not measured with --threads=%d (compute_time_scale and "
                "speed_probe_s unset)\n",
                threads);
    return absl::OkStatus();
  }
  for (size_t k = 1; k < cores.size(); ++k) {
    std::printf("  core %d: the shapes take %.3fx as long as on core 0 (medians summed)\n",
                cores[k], core_total[k] / core_total[0]);
  }
  for (size_t k = 0; k < cores.size(); ++k) {
    std::printf("  core %d: the speed probe takes %.6f s (median)\n", cores[k],
                Median(probe_seconds[k]));
  }
  for (int d = 0; d < out->devices_size(); ++d) {
    if (device_cores[d].empty()) continue;
    const size_t k = std::find(cores.begin(), cores.end(), device_cores[d][0]) - cores.begin();
    out->mutable_devices(d)->set_compute_time_scale(core_total[k] / core_total[0]);
    out->mutable_devices(d)->set_speed_probe_s(Median(probe_seconds[k]));
  }
  return absl::OkStatus();
}

// Upload and offload through the backend's own throttled copy.
absl::Status MeasureCopies(const Schedule& zo2, Cluster* out) {
  std::printf("throttled copies at the cluster's rates (seconds: min / median / max)\n");
  ASSIGN_OR_RETURN(const TimingDevice device, MakeTimingDevice(zo2, 0));
  CpuBackend* backend = device.backend.get();
  UsePreciseSleeps();  // as the runtime's copy streams sleep
  const Op* upload = nullptr;
  const Op* offload = nullptr;
  for (const Op& op : zo2.ops()) {
    if (op.has_copy() && op.copy().direction() == HOST_TO_DEVICE && !upload) upload = &op;
    if (op.has_copy() && op.copy().direction() == DEVICE_TO_HOST && !offload) offload = &op;
  }
  if (upload == nullptr || offload == nullptr) return absl::InternalError("no copies to time");
  double latency_sum = 0;
  // The host CPU of each copy: its thread's CPU time against the bytes it
  // moves (the throttle's sleep is part of the fixed cost: arming the timer
  // and waking take a few tens of µs of a virtual CPU).
  std::vector<std::pair<double, double>> cpu_points;
  for (const Op* base : {upload, offload}) {
    std::vector<std::pair<double, double>> points;
    for (int64_t bytes = 64 << 10; bytes <= 4 << 20; bytes *= 4) {
      Op op = *base;
      const int64_t n = std::min<int64_t>(bytes, op.copy().src().size_bytes());
      op.mutable_copy()->mutable_src()->set_size_bytes(n);
      op.mutable_copy()->mutable_dst()->set_size_bytes(n);
      op.mutable_copy()->set_bytes(bytes);  // throttled as `bytes`
      std::vector<double> cpu;
      ASSIGN_OR_RETURN(Stats t, Time(absl::GetFlag(FLAGS_repeats), [&] {
        const double before = 1e-9 * ThreadCpuNs();
        const absl::Status s = backend->RunCopy(op);
        cpu.push_back(1e-9 * ThreadCpuNs() - before);
        return s;
      }));
      std::sort(cpu.begin(), cpu.end());
      cpu_points.push_back({static_cast<double>(n), cpu[cpu.size() / 2]});
      points.push_back({static_cast<double>(bytes), t.median});
      std::printf("  %s %8ld B: %.6f / %.6f / %.6f\n",
                  base == upload ? "upload " : "offload", bytes, t.min, t.median, t.max);
    }
    ASSIGN_OR_RETURN(const Line line, RobustLineFit(points));
    const double fixed = line.intercept, per_byte = line.slope;
    std::printf("  %s fit: %.1f us + bytes / %.3f GB/s\n", base == upload ? "upload" : "offload",
                fixed * 1e6, 1 / per_byte / 1e9);
    latency_sum += fixed;
  }
  ASSIGN_OR_RETURN(const Line cpu_line, RobustLineFit(cpu_points));
  const double cpu_fixed = cpu_line.intercept;
  const double cpu_gbps = cpu_line.slope > 0 ? 1 / cpu_line.slope / 1e9 : 0;
  std::printf("  host CPU per copy (thread CPU time): %.1f us + bytes moved / %.2f GB/s\n",
              cpu_fixed * 1e6, cpu_gbps);
  for (Device& d : *out->mutable_devices()) {
    d.mutable_host_link()->set_latency_s(std::max(0.0, latency_sum / 2));
    // MeasureStreamWakeUp adds the copy thread's wake-up.
    d.set_transfer_cpu_s(std::max(0.0, cpu_fixed));
    d.set_transfer_cpu_gbps(cpu_gbps);
  }
  return absl::OkStatus();
}

// What a transfer thread's wake-up costs a device's compute on its core
// (runtime/core_sharing_probe.h): the zo2 schedule's step of compute ops on
// device 0, on the core and at the priority the runtime gives it, alone and
// while a second device's thread uploads block after block on that core
// (each upload sleeps out its throttle and wakes once, at its end; the next
// starts at once) -> every device's interrupt_cpu_s, the cost of one
// wake-up. Each upload is throttled as a transfer at least three times as
// long as its own thread CPU (the median of a few uploads timed first), so
// that its thread sleeps two thirds of each run or more whatever the
// cluster's link rate: a copy thread that never sleeps would take the core
// from the compute, which yields to it. An upload costs more CPU beside the
// compute than alone (cold caches; much more in a sanitized build), so
// when the probe stops a copy that sleeps less than a third of the time,
// the throttle doubles and the probe runs again, four times at most.
absl::Status MeasureTransferInterruption(const Schedule& zo2,
                                         const std::vector<StepBatch>& batches, Cluster* out) {
  ASSIGN_OR_RETURN(const TimingDevice computing, MakeTimingDevice(zo2, 0));
  ASSIGN_OR_RETURN(const TimingDevice copying, MakeTimingDevice(zo2, 0));
  const Stream* compute_stream = nullptr;
  for (const Stream& stream : zo2.devices(0).streams()) {
    if (stream.kind() == COMPUTE && compute_stream == nullptr) compute_stream = &stream;
  }
  const Op* upload = nullptr;
  std::vector<const Op*> step;
  for (const Op& op : zo2.ops()) {
    if (op.device() != 0) continue;
    if (op.has_compute()) step.push_back(&op);
    if (op.has_copy() && op.copy().direction() == HOST_TO_DEVICE && upload == nullptr) upload = &op;
  }
  if (compute_stream == nullptr || upload == nullptr || step.empty()) {
    return absl::InternalError("the zo2 schedule has no compute stream, upload or compute op");
  }
  CpuBackend* copier = copying.backend.get();
  std::vector<double> upload_cpu_s;  // an upload's own thread CPU, 9 times
  for (int i = 0; i < 9; ++i) {
    const int64_t start_ns = ThreadCpuNs();
    RETURN_IF_ERROR(copier->RunCopy(*upload));
    upload_cpu_s.push_back(1e-9 * (ThreadCpuNs() - start_ns));
  }
  const double down_gbps =
      FindDevice(zo2.cluster(), zo2.devices(0).cluster_device())->host_link().down_gbps();
  Op timed_upload = *upload;
  const StepInputs inputs = TimingInputs(batches[0]);
  CpuBackend* computer = computing.backend.get();
  const CoreWork compute{
      [computer, compute_stream] { computer->PrepareStreamThread(*compute_stream); },
      [computer, &step, &inputs]() -> absl::Status {
        StepResult result;
        for (const Op* op : step) RETURN_IF_ERROR(computer->RunCompute(*op, inputs, &result));
        return absl::OkStatus();
      }};
  const CoreWork copy{[] {
                        PinThreadToCore(0);  // where device 0 computes
                        UsePreciseSleeps();  // as the runtime's copy streams sleep
                      },
                      [copier, &timed_upload] { return copier->RunCopy(timed_upload); }};
  const int rounds = 2 * absl::GetFlag(FLAGS_repeats), passes = 2;
  absl::StatusOr<double> per_copy;
  for (double times_cpu = 3;; times_cpu *= 2) {
    const auto sleeping_bytes =
        static_cast<int64_t>(std::ceil(times_cpu * Median(upload_cpu_s) * down_gbps * 1e9));
    timed_upload.mutable_copy()->set_bytes(std::max(upload->copy().bytes(), sleeping_bytes));
    per_copy = PerCopyComputeCpuSeconds(compute, copy, rounds, passes);
    if (!absl::IsResourceExhausted(per_copy.status()) || times_cpu >= 24) break;
    std::printf("  the uploads kept their thread too busy (%s); throttled twice as long\n",
                std::string(per_copy.status().message()).c_str());
  }
  if (!per_copy.ok()) {
    return absl::Status(per_copy.status().code(),
                        absl::StrCat("timing a transfer thread's wake-ups on a device's core: ",
                                     per_copy.status().message()));
  }
  std::printf("a transfer thread waking on a device's core: its compute takes %.1f us more CPU "
              "(median of %d rounds of %d zo2 steps alone and with uploads of %ld B, each "
              "throttled to %.1f us, back to back)\n",
              *per_copy * 1e6, rounds, passes,
              static_cast<long>(upload->copy().src().size_bytes()),
              timed_upload.copy().bytes() / (down_gbps * 1e3));
  for (Device& d : *out->mutable_devices()) d.set_interrupt_cpu_s(*per_copy);
  return absl::OkStatus();
}

// Under mpirun: all-gathers of several sizes among all ranks through the
// runtime's path (MpiCollectives + peer-link throttle); rank 0 writes
// "bytes median min max" (seconds) per size. The sizes take turns, one
// all-gather of each per round, so that a busy spell of the machine slows a
// few samples of every size rather than most samples of one (which bent the
// fitted line: a 2-rank fixed cost of 233 us where runs took 120 us).
absl::Status CollectiveProbe(const std::string& path) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(ClusterFlag()));
  std::vector<int> group(world);
  for (int r = 0; r < world; ++r) group[r] = r;
  ASSIGN_OR_RETURN(std::unique_ptr<MpiCollectives> comm,
                   MpiCollectives::Create({group}, std::chrono::seconds(60)));
  const PeerDomain& peer = cluster.peer_domains(0);
  EmulatedLink link(peer.gbps_per_device(), static_cast<int64_t>(peer.latency_s() * 1e9));
  std::vector<int64_t> sizes;
  for (int64_t bytes = 4 << 10; bytes <= 4 << 20; bytes *= 4) sizes.push_back(bytes);
  std::vector<char> buffer(sizes.back(), static_cast<char>(rank));
  std::vector<std::vector<double>> seconds(sizes.size());
  // Round 0 warms up; all-gathers are short, so 3x the repeats.
  const int rounds = 1 + 3 * absl::GetFlag(FLAGS_repeats);
  for (int round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      const int64_t chunk = sizes[i] / world;
      MPI_Barrier(MPI_COMM_WORLD);
      const auto start = EmulatedLink::Clock::now();
      RETURN_IF_ERROR(comm->AllGather(group, buffer.data(), chunk));
      EmulatedLink::SleepUntil(link.Reserve(start, chunk * (world - 1)));
      const double elapsed =
          std::chrono::duration<double>(EmulatedLink::Clock::now() - start).count();
      if (round > 0) seconds[i].push_back(elapsed);
    }
  }
  std::ostringstream lines;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto [min, max] = std::minmax_element(seconds[i].begin(), seconds[i].end());
    lines << sizes[i] << " " << Median(seconds[i]) << " " << *min << " " << *max << "\n";
  }
  if (rank == 0) {
    std::ofstream(path) << lines.str();
  }
  return absl::OkStatus();
}

// Re-runs this program under `mpirun -np ranks` with `--<probe>=FILE` and
// returns FILE's whitespace-separated numbers.
absl::StatusOr<std::vector<double>> RunProbe(int ranks, const std::string& probe) {
  const std::string results =
      absl::StrFormat("/tmp/zosched_calibrate_%d_%s_%d.txt", getpid(), probe, ranks);
  ASSIGN_OR_RETURN(
      const int status,
      RunUnderMpirun(ranks, {absl::StrCat("--backend=", absl::GetFlag(FLAGS_backend)),
                             absl::StrCat("--cluster=", ClusterFlag()),
                             absl::StrCat("--model=", absl::GetFlag(FLAGS_model)),
                             absl::StrCat("--batch=", absl::GetFlag(FLAGS_batch)),
                             absl::StrCat("--seq=", absl::GetFlag(FLAGS_seq)),
                             absl::StrCat("--repeats=", absl::GetFlag(FLAGS_repeats)),
                             absl::StrCat("--", probe, "=", results)}));
  if (status != 0) {
    return absl::InternalError(
        absl::StrFormat("the %s probe on %d ranks exited %d", probe, ranks, status));
  }
  std::ifstream in(results);
  std::vector<double> numbers;
  for (double x; in >> x;) numbers.push_back(x);
  std::remove(results.c_str());
  return numbers;
}

// Under mpirun -np 2: how much slower a device computes while another
// device (process) computes at once. Each rank runs the zo2 schedule's
// largest compute ops in rounds: in each round every op is timed on rank 0
// alone (rank 1 waits, sleeping) and then with both ranks running it, so a
// busy spell of the machine lands on one round's ratios, not on all of an
// op's runs alone or together (one calibration put the slowdown at 1.21
// from 5 ratios of one pass, the machine's own being 1.00). Rank 0 writes
// one ratio (together / alone, medians of the round's passes) per op and
// round.
absl::Status ComputeProbe(const std::string& path) {
  constexpr int kPasses = 3;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto barrier = [] { return SleepingBarrier(std::chrono::microseconds(50)); };
  ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(ClusterFlag()));
  ASSIGN_OR_RETURN(std::vector<Schedule> schedules, TargetSchedules(cluster));
  const Schedule& s = schedules[0];
  ASSIGN_OR_RETURN(const TimingDevice device, MakeTimingDevice(s, 0));
  CpuBackend* backend = device.backend.get();
  // Each rank on its own core, as the runtime pins device d's compute to
  // core d mod cores.
  PinThreadToCore(rank);
  const int batch = s.training().batch_size(), seq = s.training().seq_len();
  const StepBatch same_tokens{std::vector<int32_t>(batch * seq, 5),
                              std::vector<int32_t>(batch, seq), std::vector<int32_t>(batch, 0)};
  const StepInputs inputs = TimingInputs(same_tokens);
  std::vector<const Op*> ops;
  for (const Op& op : s.ops()) {
    if (!op.has_compute()) continue;
    const ComputeKind kind = op.compute().kind();
    if (kind != UPDATE && kind != BLOCK_FORWARD && kind != EMBED) continue;
    if (op.compute().params().part() != DECODER_BLOCK && kind == UPDATE) continue;
    if (op.compute().params().block() != 0) continue;
    ops.push_back(&op);
  }
  StepResult result;
  std::ostringstream ratios;
  for (int round = 0; round < absl::GetFlag(FLAGS_repeats) + 2; ++round) {
    for (const Op* op : ops) {
      auto run = [&] { return backend->RunCompute(*op, inputs, &result); };
      RETURN_IF_ERROR(barrier());
      absl::StatusOr<Stats> alone = Stats{};
      if (rank == 0) alone = Time(kPasses, run);
      RETURN_IF_ERROR(alone.status());
      RETURN_IF_ERROR(barrier());
      // Rank 1 runs two passes more, so that rank 0's last timed pass
      // still has company when rank 1's core is the faster one.
      ASSIGN_OR_RETURN(Stats together, Time(rank == 0 ? kPasses : kPasses + 2, run));
      if (rank == 0) ratios << together.median / alone->median << "\n";
    }
  }
  RETURN_IF_ERROR(barrier());
  if (rank == 0) std::ofstream(path) << ratios.str();
  return absl::OkStatus();
}

absl::Status MeasureCollectives(Cluster* out) {
  std::printf("collectives: the runtime's all-gather (seconds: median, min, max)\n");
  const PeerDomain& peer = out->peer_domains(0);
  std::vector<double> fixed(5, 0);
  std::vector<double> rates;
  for (int ranks : {2, 4}) {
    // A time that does not grow with the bytes is noise (other processes
    // took the cores): measured again, at most three times in all.
    Line line;
    for (int attempt = 1;; ++attempt) {
      ASSIGN_OR_RETURN(std::vector<double> numbers, RunProbe(ranks, "collective_probe"));
      std::vector<std::pair<double, double>> points;
      for (size_t i = 0; i + 4 <= numbers.size(); i += 4) {
        const int64_t bytes = numbers[i];
        std::printf("  %d ranks %8ld B: %.6f / %.6f / %.6f\n", ranks, bytes, numbers[i + 1],
                    numbers[i + 2], numbers[i + 3]);
        // Bytes each rank receives: (n-1)/n of the gathered buffer.
        points.push_back({static_cast<double>(bytes) * (ranks - 1) / ranks, numbers[i + 1]});
      }
      if (points.size() < 2) return absl::InternalError("the collective probe wrote no results");
      ASSIGN_OR_RETURN(line, RobustLineFit(points));
      if (line.slope > 0) break;
      if (attempt == 3) {
        return absl::UnavailableError(absl::StrFormat(
            "the all-gather among %d ranks took no longer for more bytes in 3 measurements "
            "(the last fit: %.1f us + received bytes / %.3f GB/s): other processes are taking "
            "the cores; calibrate on a quiet machine",
            ranks, line.intercept * 1e6, 1 / line.slope / 1e9));
      }
      std::printf("  %d ranks: the time did not grow with the bytes (other processes on the "
                  "cores?); measuring again\n",
                  ranks);
    }
    fixed[ranks] = std::max(0.0, line.intercept);
    rates.push_back(1 / line.slope / 1e9);
    std::printf("  %d ranks fit: %.1f us + received bytes / %.3f GB/s\n", ranks,
                line.intercept * 1e6,
                rates.back());
  }
  // fixed(n) = base + (n - 1) · step, from n = 2 and n = 4.
  const double step = std::max(0.0, (fixed[4] - fixed[2]) / 2);
  const double base = std::max(0.0, fixed[2] - step);
  const double efficiency =
      std::min(1.0, (rates[0] + rates[1]) / 2 / peer.gbps_per_device());
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
  std::printf("  collective model: base %.1f us, %.1f us per step, bus efficiency %.3f\n",
              base * 1e6, step * 1e6, efficiency);
  return absl::OkStatus();
}

// The count flags in their ranges. Errors: InvalidArgument naming the flag.
absl::Status CheckCountFlags() {
  RETURN_IF_ERROR(
      CheckFlagRange("repeats", absl::GetFlag(FLAGS_repeats), 1, 1000, "timed runs"));
  RETURN_IF_ERROR(CheckFlagRange("batch", absl::GetFlag(FLAGS_batch), 1, kMaxBatchSize,
                                 "examples per step"));
  RETURN_IF_ERROR(
      CheckFlagRange("threads", absl::GetFlag(FLAGS_threads), 1, 256, "cores per device"));
  return CheckFlagRange("seq", absl::GetFlag(FLAGS_seq), 1, kMaxPositions, "tokens");
}

// A calibration's inputs, read and checked before anything is measured.
struct Inputs {
  Cluster cluster;                  // the cluster calibrated (--cluster)
  std::vector<Schedule> schedules;  // those whose compute op shapes are measured
  std::vector<StepBatch> batches;   // cpu: the data the compute ops run on
};

// Validates the calibrated cluster and writes it to OutPath(`calibrated`).
absl::Status WriteCalibrated(const Cluster& out, const Cluster& calibrated) {
  RETURN_IF_ERROR(ValidateCluster(out, "calibrated"));
  const std::string path = OutPath(calibrated);
  RETURN_IF_ERROR(WriteProtoFile(path, out));
  std::printf("wrote %s\n", path.c_str());
  return absl::OkStatus();
}

// The CPU calibration: the probes under mpirun first (mpirun cannot be
// started from inside an MPI process), then MPI here (`argc`/`argv`) and
// the rest.
absl::Status MeasureCpu(const Inputs& in, int* argc, char*** argv) {
  const std::vector<Schedule>& schedules = in.schedules;
  Cluster out = in.cluster;
  out.set_name(in.cluster.name() + "_calibrated");
  out.set_description(in.cluster.description() + " (calibrated by //runtime:calibrate)");
  out.clear_measured_compute();
  RETURN_IF_ERROR(MeasureCollectives(&out));
  ASSIGN_OR_RETURN(std::vector<double> sharing, RunProbe(2, "compute_probe"));
  std::sort(sharing.begin(), sharing.end());
  const double slowdown = sharing.empty() ? 1 : std::max(1.0, sharing[sharing.size() / 2]);
  std::printf("two devices (processes) computing at once: each %.3fx slower (median of %zu "
              "ratios: the largest ops in %d rounds; min %.3f, max %.3f)\n",
              slowdown, sharing.size(), absl::GetFlag(FLAGS_repeats) + 2,
              sharing.empty() ? 1.0 : sharing.front(),
              sharing.empty() ? 1.0 : sharing.back());
  for (Host& h : *out.mutable_hosts()) h.set_shared_core_slowdown(slowdown);
  int rank = 0, world = 1;
  RETURN_IF_ERROR(InitMpi(argc, argv, &rank, &world));
  RETURN_IF_ERROR(MeasureCompute(schedules, in.batches, &out));
  RETURN_IF_ERROR(MeasureCopies(schedules[0], &out));
  RETURN_IF_ERROR(MeasureStreamWakeUp(&out));
  RETURN_IF_ERROR(MeasureTransferInterruption(schedules[0], in.batches, &out));
  return WriteCalibrated(out, in.cluster);
}

#ifdef ZOSCHED_WITH_CUDA
// The schedules of --schedules (comma-separated files), each validated.
// Errors: the file's (NotFound, ...); InvalidArgument naming the file for
// one that does not validate, or for an empty entry.
absl::StatusOr<std::vector<Schedule>> ScheduleFiles(const std::string& files) {
  std::vector<Schedule> schedules;
  const std::vector<std::string> paths = absl::StrSplit(files, ',');
  for (const std::string& path : paths) {
    if (path.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--schedules='%s': an empty file name (expected comma-separated schedule files)",
          files));
    }
    Schedule schedule;
    RETURN_IF_ERROR(ReadProtoFile(ResolveUserPath(path), &schedule));
    if (absl::Status valid = ValidateSchedule(schedule); !valid.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--schedules: %s: %s", path, valid.message()));
    }
    schedules.push_back(std::move(schedule));
  }
  return schedules;
}

// The schedules the GPU calibration measures: those of --schedules, or those
// GpuTargetSchedules lowers on `cluster` for --model, --batch, --seq and
// --compute_dtype (printing each one left out because its memory plan does
// not fit). Errors: the flags', the files', GpuTargetSchedules'.
absl::StatusOr<std::vector<Schedule>> GpuSchedules(const Cluster& cluster) {
  ASSIGN_OR_RETURN(const DType compute,
                   ParseDTypeFlag("compute_dtype", absl::GetFlag(FLAGS_compute_dtype)));
  if (const std::string files = absl::GetFlag(FLAGS_schedules); !files.empty()) {
    return ScheduleFiles(files);
  }
  ASSIGN_OR_RETURN(const ModelSpec model, LoadModelSpec(absl::GetFlag(FLAGS_model)));
  ASSIGN_OR_RETURN(GpuTargets targets,
                   GpuTargetSchedules(model, cluster, absl::GetFlag(FLAGS_batch),
                                      absl::GetFlag(FLAGS_seq), compute));
  for (const std::string& why : targets.skipped) {
    std::printf("left out, its memory plan does not fit: %s\n", why.c_str());
  }
  return std::move(targets.schedules);
}

// The GPU calibration (gpu_calibration.h): the collective probes under
// mpirun first, then MPI here and the rest.
absl::Status MeasureGpu(const Inputs& in, int* argc, char*** argv) {
  GpuCalibrationOptions options;
  options.cluster = in.cluster;
  options.schedules = in.schedules;
  options.repeats = absl::GetFlag(FLAGS_repeats);
  options.allow_tf32 = absl::GetFlag(FLAGS_tf32);

  const int gpus = VisibleGpus();
  std::printf("collectives: the runtime's all-gathers, rank r on GPU r mod %d: NCCL where each "
              "rank has its own GPU, else host-staged MPI (seconds: median / min / max)\n",
              gpus);
  for (int ranks : {2, 4}) {
    ASSIGN_OR_RETURN(const std::vector<double> numbers, RunProbe(ranks, "collective_probe"));
    ASSIGN_OR_RETURN(const std::vector<MeasuredCollective> rows, CollectiveRows(ranks, numbers));
    for (size_t i = 0; i < rows.size(); ++i) {
      std::printf("  %d ranks %9ld B: %.6f / %.6f / %.6f\n", ranks,
                  static_cast<long>(rows[i].bytes()), numbers[4 * i + 1], numbers[4 * i + 2],
                  numbers[4 * i + 3]);
    }
    options.collectives.insert(options.collectives.end(), rows.begin(), rows.end());
  }
  auto how = [gpus](int ranks) { return ranks <= gpus ? "NCCL" : "host-staged MPI"; };
  options.collectives_how = absl::StrFormat("all-gathers among 2 ranks (%s) and 4 ranks (%s)",
                                            how(2), how(4));

  int rank = 0, world = 1;
  RETURN_IF_ERROR(InitMpi(argc, argv, &rank, &world));
  ASSIGN_OR_RETURN(const Cluster out, CalibrateGpu(options));
  return WriteCalibrated(out, in.cluster);
}
#endif

// Every flag and input read and checked, nothing measured yet: any error
// is bad usage or a bad input (exit 2). Errors: the flags' (CheckBackend,
// CheckCountFlags), the cluster file's, CheckClusterKind's, CheckOutPath's,
// lowering's for the schedules (ResourceExhausted for a memory plan that
// does not fit the cluster), the training data's; with --backend=cuda the
// schedule files' and FailedPrecondition for a machine without a GPU.
absl::StatusOr<Inputs> CheckInputs() {
  RETURN_IF_ERROR(CheckBackend());
  RETURN_IF_ERROR(CheckCountFlags());
  Inputs in;
  ASSIGN_OR_RETURN(in.cluster, LoadCluster(ClusterFlag()));
  RETURN_IF_ERROR(CheckClusterKind(in.cluster));
  RETURN_IF_ERROR(CheckOutPath(OutPath(in.cluster)));
#ifdef ZOSCHED_WITH_CUDA
  if (absl::GetFlag(FLAGS_backend) == "cuda") {
    ASSIGN_OR_RETURN(in.schedules, GpuSchedules(in.cluster));
    RETURN_IF_ERROR(CheckGpuVisible());
    return in;
  }
#endif
  ASSIGN_OR_RETURN(in.schedules, TargetSchedules(in.cluster));
  ASSIGN_OR_RETURN(in.batches,
                   TimingBatches(in.schedules[0], absl::GetFlag(FLAGS_repeats) + 1));
  return in;
}

// Measures what `in` asks for with --backend and writes the calibrated
// cluster; `argc`/`argv` initialise MPI. Any error is a failure while
// measuring (exit 1).
absl::Status Calibrate(const Inputs& in, int* argc, char*** argv) {
#ifdef ZOSCHED_WITH_CUDA
  if (absl::GetFlag(FLAGS_backend) == "cuda") return MeasureGpu(in, argc, argv);
#endif
  return MeasureCpu(in, argc, argv);
}

// The probe this process was started for by RunProbe (under mpirun, MPI
// initialised).
absl::Status RunProbeHere(const std::string& collective_probe, const std::string& compute_probe) {
#ifdef ZOSCHED_WITH_CUDA
  if (absl::GetFlag(FLAGS_backend) == "cuda") {
    return GpuCollectiveProbe(absl::GetFlag(FLAGS_repeats), collective_probe);
  }
#endif
  return collective_probe.empty() ? ComputeProbe(compute_probe) : CollectiveProbe(collective_probe);
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"calibrate", "",
       "Measures this machine as the CPU testbed (or a GPU, --backend=cuda) and writes a\n"
       "calibrated Cluster (--out): compute op costs, throttled copies and collectives."});
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::string collective_probe = absl::GetFlag(FLAGS_collective_probe);
  const std::string compute_probe = absl::GetFlag(FLAGS_compute_probe);
  if (!collective_probe.empty() || !compute_probe.empty()) {
    int rank = 0, world = 1;
    absl::Status s = zosched::InitMpi(&argc, &argv, &rank, &world);
    if (s.ok()) s = zosched::RunProbeHere(collective_probe, compute_probe);
    if (!s.ok()) zosched::AbortWorld("calibrate probe: " + std::string(s.message()), 1);
    MPI_Finalize();
    return 0;
  }
  const absl::StatusOr<zosched::Inputs> inputs = zosched::CheckInputs();
  if (!inputs.ok()) {
    std::fprintf(stderr, "calibrate: %s\n", std::string(inputs.status().message()).c_str());
    return 2;
  }
  if (const absl::Status status = zosched::Calibrate(*inputs, &argc, &argv); !status.ok()) {
    std::fprintf(stderr, "calibrate: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  MPI_Finalize();
  return 0;
}
