// Measures this machine and writes a calibrated Cluster: as the CPU testbed
//
//   bazel run //runtime:calibrate -- --out=clusters/local_cpu.calibrated.pbtxt
//       [--model=opt-tiny --batch=16 --seq=32 --repeats=7 --data=synthetic --task=sst2]
//
// (compute op costs on every core, throttled copies, all-gathers, stream
// wake-ups and transfer interruptions: runtime/calibration/cpu_calibration.h),
// or with --backend=cuda (a --config=cuda build) its NVIDIA GPUs
//
//   bazel-bin/runtime/calibrate --backend=cuda --out=clusters/h100.calibrated.pbtxt
//       [--cluster=h100_sxm_x1 --model=opt-tiny --batch=16 --seq=32
//        --compute_dtype=FP16 --tf32 --repeats=7 --data=synthetic --task=sst2]
//       [--schedules=a.pb,b.pb]
//
// (compute op shapes through the CUDA backend, the host link, all-gathers:
// runtime/cuda/calibration/gpu_calibration_backend.h). Both time compute
// ops on the batches train draws from --data: attention's cost follows the
// examples' lengths. Prints every measurement with its min, median and max.
//
// --cluster must describe the machine the backend measures: the CPU
// testbed's devices (Device.shares_host_cores, as local_cpu's) for cpu, GPUs
// for cuda, of GPU 0's model; its figures are written under its name.
// --cluster defaults to local_cpu on the CPU; with cuda to the catalog's
// one-GPU cluster of GPU 0's model (h100_sxm_x1 on an H100, h200_x1 on an
// H200), else h100_sxm_x1, which another GPU refuses, naming what to pass;
// --out to clusters/<cluster name>.calibrated.pbtxt. Exit status 0; 2 for
// bad flags or inputs (a cluster of the other kind, one whose plans do not
// fit its memory, an --out that cannot be written, unreadable data), all
// found before anything is measured; 1 when a measurement fails.
//
// This file reads the flags, checks them and the cluster, picks the
// backend's calibration library (runtime/calibration/calibration_backend.h)
// and writes the result; the probes that need several processes run as this
// program again under mpirun (runtime/calibration/probe_runner.h).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "base/command_line.h"
#include "base/status_macros.h"
#include "runtime/calibration/calibrated_output.h"
#include "runtime/calibration/calibration_backend.h"
#include "runtime/calibration/calibration_choice.h"
#include "runtime/calibration/calibration_settings.h"
#include "runtime/calibration/cluster_kind.h"
#include "runtime/calibration/cpu_calibration.h"
#include "runtime/mpi_world.h"
#include "schedule/cluster_catalog.h"
// --config=cuda links the GPU calibration in (BUILD: a select() on
// //tools:cuda_enabled, which also defines ZOSCHED_WITH_CUDA).
#ifdef ZOSCHED_WITH_CUDA
#include "runtime/cuda/calibration/gpu_calibration_backend.h"
constexpr auto kGpuCalibration = &zosched::GpuCalibration;
#else
constexpr const zosched::CalibrationBackend& (*kGpuCalibration)() = nullptr;
#endif

ABSL_FLAG(std::string, backend, "cpu",
          "cpu (this machine as the CPU testbed) or cuda (its NVIDIA GPUs; --config=cuda builds)");
ABSL_FLAG(std::string, out, "",
          "the calibrated Cluster (default: clusters/<cluster name>.calibrated.pbtxt)");
ABSL_FLAG(std::string, cluster, "",
          "the cluster to calibrate, catalog name or path (default: local_cpu; with "
          "--backend=cuda the catalog's one-GPU cluster of GPU 0's model)");
ABSL_FLAG(std::string, model, "opt-tiny", "the model whose op shapes to measure");
ABSL_FLAG(int32_t, batch, 16, "examples per step of the schedules to calibrate for");
ABSL_FLAG(int32_t, seq, 32, "sequence length of the schedules to calibrate for");
ABSL_FLAG(int32_t, directions, 1,
          "cpu: perturbation directions a step (n-SPSA q) of the schedules to calibrate for: "
          "their updates' cost grows with it");
ABSL_FLAG(std::string, peft, "none",
          "cpu: what the schedules to calibrate for train, none, lora or prefix (their forwards "
          "perturb the adapters or the prefix, not the block)");
ABSL_FLAG(int32_t, lora_rank, 8, "cpu, --peft=lora: the adapters' rank");
ABSL_FLAG(double, lora_alpha, 16, "cpu, --peft=lora: the adapters' α");
ABSL_FLAG(std::vector<std::string>, lora_targets, std::vector<std::string>({"query", "value"}),
          "cpu, --peft=lora: the adapted projections (query, key, value, output, gate, up, down)");
ABSL_FLAG(int32_t, prefix_tokens, 5, "cpu, --peft=prefix: the prefix's virtual tokens");
ABSL_FLAG(int32_t, threads, 1,
          "cpu: cores each device computes on, as train --threads will run it");
ABSL_FLAG(int32_t, repeats, 7,
          "timed runs per measurement (compute shapes: 4x as many rounds, over every shape and "
          "core)");
ABSL_FLAG(std::string, data, "synthetic",
          "the training data the compute ops are timed on, as train's --data ('synthetic' or a "
          "task directory): attention's cost follows the examples' lengths");
ABSL_FLAG(std::string, task, "sst2", "the task in --data (sst2 or boolq)");
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
ABSL_FLAG(std::vector<std::string>, hosts, {},
          "cpu: comma-separated machines, one for each host of --cluster in its order, where its "
          "hosts are joined by NICs (e.g. the two-node testbed's node1,node2): the NICs and the "
          "all-gather across them are measured between them; run calibrate on the first");
ABSL_FLAG(std::string, nic_probe, "",
          "internal: run the NIC probe under mpirun and write results here");

namespace zosched {
namespace {

// The calibration backends this program knows, in the order --backend's
// error lists them: the CPU testbed's, and the GPUs' (linked in
// --config=cuda builds only). A build without the GPUs' still knows what
// they measure, so that their flags and clusters are checked as in one
// with it.
const std::vector<KnownCalibration>& KnownCalibrations() {
  static const auto* known = new std::vector<KnownCalibration>{
      {"cpu", /*devices_share_host_cores=*/true, {"local_cpu"}, &CpuCalibration},
      // The measured H100 machine, or the closest catalog cluster in a
      // checkout without its file.
      {"cuda", /*devices_share_host_cores=*/false, {"h100_sxm_x1", "h100_sxm_x2"},
       kGpuCalibration},
  };
  return *known;
}

// The flags as values (--cluster as given: "" for the backend's default).
CalibrationSettings SettingsFromFlags() {
  CalibrationSettings s;
  s.backend = absl::GetFlag(FLAGS_backend);
  s.cluster = absl::GetFlag(FLAGS_cluster);
  s.out = absl::GetFlag(FLAGS_out);
  s.model = absl::GetFlag(FLAGS_model);
  s.batch = absl::GetFlag(FLAGS_batch);
  s.seq = absl::GetFlag(FLAGS_seq);
  s.directions = absl::GetFlag(FLAGS_directions);
  s.peft.kind = absl::GetFlag(FLAGS_peft);
  s.peft.lora_rank = absl::GetFlag(FLAGS_lora_rank);
  s.peft.lora_alpha = absl::GetFlag(FLAGS_lora_alpha);
  s.peft.lora_targets = absl::GetFlag(FLAGS_lora_targets);
  s.peft.prefix_tokens = absl::GetFlag(FLAGS_prefix_tokens);
  s.repeats = absl::GetFlag(FLAGS_repeats);
  s.threads = absl::GetFlag(FLAGS_threads);
  s.data = absl::GetFlag(FLAGS_data);
  s.task = absl::GetFlag(FLAGS_task);
  s.compute_dtype = absl::GetFlag(FLAGS_compute_dtype);
  s.tf32 = absl::GetFlag(FLAGS_tf32);
  s.schedules = absl::GetFlag(FLAGS_schedules);
  s.collective_probe = absl::GetFlag(FLAGS_collective_probe);
  s.compute_probe = absl::GetFlag(FLAGS_compute_probe);
  s.hosts = absl::GetFlag(FLAGS_hosts);
  s.nic_probe = absl::GetFlag(FLAGS_nic_probe);
  return s;
}

// The library of `calibration`. Errors: InvalidArgument where this build
// does not link it (only the GPUs' can be missing: a build without
// --config=cuda).
absl::StatusOr<const CalibrationBackend*> LinkedBackend(const KnownCalibration& calibration) {
  if (calibration.library == nullptr) {
    return absl::InvalidArgumentError(
        "--backend=cuda: this build has no CUDA backend; build with --config=cuda "
        "(./bazelw build --config=cuda //runtime:calibrate)");
  }
  return &calibration.library();
}

// A calibration ready to measure, and where its result goes (OutPath).
struct Checked {
  std::unique_ptr<PreparedCalibration> calibration;
  std::string out_path;
};

// Every flag and input read and checked, nothing measured yet, so any error
// is bad usage or a bad input (exit 2); an empty settings.cluster is the
// backend's default. Errors: ChooseCalibration's, LinkedBackend's,
// CheckCountSettings', the cluster file's, CheckClusterKind's,
// CheckOutPath's, and the backend's prepare's (cpu: lowering's,
// ResourceExhausted for a memory plan that does not fit, the training
// data's; cuda: the schedule files', FailedPrecondition for a machine
// without a GPU, and InvalidArgument for a cluster whose devices are not of
// this GPU's model).
absl::StatusOr<Checked> CheckInputs(CalibrationSettings settings) {
  ASSIGN_OR_RETURN(const KnownCalibration* calibration,
                   ChooseCalibration(settings, KnownCalibrations()));
  ASSIGN_OR_RETURN(const CalibrationBackend* backend, LinkedBackend(*calibration));
  if (settings.cluster.empty() && backend->machines_cluster != nullptr) {
    settings.cluster = backend->machines_cluster();
  }
  if (settings.cluster.empty()) settings.cluster = DefaultCluster(*calibration);
  RETURN_IF_ERROR(CheckCountSettings(settings));
  ASSIGN_OR_RETURN(const Cluster cluster, LoadCluster(settings.cluster));
  RETURN_IF_ERROR(CheckClusterKind(settings, *calibration, cluster));
  Checked checked;
  checked.out_path = OutPath(settings, cluster);
  RETURN_IF_ERROR(CheckOutPath(settings, checked.out_path));
  ASSIGN_OR_RETURN(checked.calibration, backend->prepare(settings, cluster));
  return checked;
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
  const zosched::CalibrationSettings settings = zosched::SettingsFromFlags();
  if (!settings.collective_probe.empty() || !settings.compute_probe.empty() ||
      !settings.nic_probe.empty()) {
    // A probe RunProbe started under mpirun.
    int rank = 0, world = 1;
    absl::Status s = zosched::InitMpi(&argc, &argv, &rank, &world);
    absl::StatusOr<const zosched::KnownCalibration*> calibration =
        zosched::ChooseCalibration(settings, zosched::KnownCalibrations());
    absl::StatusOr<const zosched::CalibrationBackend*> backend =
        calibration.ok() ? zosched::LinkedBackend(**calibration) : calibration.status();
    if (s.ok()) s = backend.status();
    if (s.ok()) s = (*backend)->run_probe(settings);
    if (!s.ok()) zosched::AbortWorld("calibrate probe: " + std::string(s.message()), 1);
    MPI_Finalize();
    return 0;
  }
  absl::StatusOr<zosched::Checked> checked = zosched::CheckInputs(settings);
  if (!checked.ok()) {
    std::fprintf(stderr, "calibrate: %s\n", std::string(checked.status().message()).c_str());
    return 2;
  }
  absl::StatusOr<zosched::Cluster> calibrated = checked->calibration->Measure(&argc, &argv);
  absl::Status status = calibrated.status();
  if (status.ok()) status = zosched::WriteCalibrated(*calibrated, checked->out_path);
  if (!status.ok()) {
    std::fprintf(stderr, "calibrate: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  MPI_Finalize();
  return 0;
}
