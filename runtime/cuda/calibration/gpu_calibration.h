// Measures the NVIDIA GPU machine this process runs on and writes the
// figures into a Cluster (`calibrate --backend=cuda`: gpu_calibration_backend.h),
// as the CPU calibration does for the testbed:
//
// 1. Compute: for each schedule (calibration_plan.h GpuTargetSchedules) and
//    each of its devices with a compute op shape not yet measured, the
//    device's share runs alone in this process, whole steps through the
//    executor (runtime/executor.h) on the CUDA backend
//    (runtime/cuda/cuda_backend.h), on GPU `device mod visible GPUs`:
//    kComputeWarmupSteps warm-up steps, then `repeats` timed steps, on
//    parameters initialised as a run's (model_state.h InitialiseParts:
//    some kernels' speed depends on the values, fp16 subnormals) and on
//    the batches a run's first steps draw (the causal softmax skips the
//    rows of padding positions, so a forward on short padded examples
//    takes less than one on full-length ones). The
//    device's collectives are left out (calibration_plan.h TimingViews), its
//    copies run as in training. An op's time is the backend's, CUDA events
//    around the op on its stream; each shape's row (op_class, model,
//    examples, seq_len, elements: the CPU calibration's keys) is the median
//    over every op of that shape in every timed step. A device whose plan
//    does not fit its GPU's free memory is left out, saying so.
// 2. GEMMs: every distinct GEMM shape the CUDA backend launches for the
//    schedules' compute ops (calibration_plan.h GemmShapes), on GPU 0, one
//    strided-batched cuBLAS call as the backend makes it, on operands of
//    random values: 3 warm-ups, then `repeats` timings of 10 launches
//    queued behind a held stream and run back to back between CUDA events
//    (the GPU's time, not the host's enqueueing), the median per launch ->
//    every kernel-modelled device's KernelModel.measured_gemms
//    (which win over the GEMM efficiency model: sim/kernel_cost.h).
// 3. Host link, per GPU that backs a cluster device (device i on GPU
//    i mod visible GPUs): host memory as the runtime's host store is
//    (node-shared, registered with cudaHostRegister), cudaMemcpyAsync,
//    CUDA events; one warm-up then `repeats` runs, median. Host to device and
//    device to host alone at 4 KiB, 64 KiB, 1 MiB (they fix the latency) and
//    4 MiB .. 1 GiB (×4; the rates), fitted to latency + bytes / rate
//    (calibration_math.h FitLatencyAndRate) -> the device's host_link
//    down_gbps, up_gbps and latency_s (the mean of the two directions'); then
//    both directions at once on two streams started together, 1 GiB each ->
//    duplex_gbps = the sum of the two directions' rates (the H100 machine:
//    45 + 45 = 90, not 2 × 54).
// 4. Collectives: rows measured beforehand by GpuCollectiveProbe, one run per
//    rank count under mpirun (before MPI starts in this process; mpirun cannot
//    be started from inside an MPI process), written as MeasuredCollective
//    rows (calibration_plan.h CollectiveRows). The probe's ranks sit on the
//    visible GPUs round-robin, as the CUDA backend places them, and gather
//    through the communicator the backend would choose: NCCL when every rank
//    has its own GPU (runtime/cuda/comm/nccl_communicator.h), else MPI over
//    pinned host memory (host_staged_communicator.h; ranks sharing a GPU,
//    which NCCL refuses). On one GPU every row is host-staged.
//
// Units: seconds, bytes, GB/s (1e9 bytes per second, never Gbit/s).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/task.h"
#include "schedule/cluster.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Steps run before the timed ones: the first has no pending update (its
// UPDATE ops change nothing) and pays one-time costs (cuBLAS heuristics,
// first launches); the second is a whole steady-state step.
inline constexpr int kComputeWarmupSteps = 2;

struct GpuCalibrationOptions {
  // The cluster to calibrate (validated); the result starts from it.
  Cluster cluster;
  // The schedules whose compute op shapes to time (validated; e.g.
  // GpuTargetSchedules's).
  std::vector<Schedule> schedules;
  // Per schedule, the batches of its first kComputeWarmupSteps + repeats
  // steps as train draws them (timing_inputs.h TimingBatches), one a step.
  std::vector<std::vector<StepBatch>> batches;
  int repeats = 7;          // timed steps and copies per measurement, >= 1
  bool allow_tf32 = false;  // FP32 GEMMs may use TF32 tensor cores
  // Collective rows to write in (CollectiveRows of GpuCollectiveProbe
  // runs), and how they were measured, for the description (e.g.
  // "host-staged all-gathers among 2 and 4 ranks on 1 GPU").
  std::vector<MeasuredCollective> collectives;
  std::string collectives_how;
};

// OK when a CUDA GPU is visible. Errors: RequireVisibleGpus's
// (runtime/cuda/cuda_backend.h).
absl::Status CheckGpuVisible();

// The number of visible CUDA GPUs (0 when none or on a CUDA error).
int VisibleGpus();

// OK when `cluster`'s devices are of GPU 0's model
// (runtime/calibration/gpu_model_match.h). Errors: CheckGpuVisible's;
// CheckClusterDescribesGpu's InvalidArgument naming the cluster to pass
// instead; Internal for a CUDA error.
absl::Status CheckClusterIsThisGpu(const Cluster& cluster);

// The catalog's one-device cluster of GPU 0's model (the first by name),
// or "" when no GPU is visible or the catalog has none.
std::string CatalogClusterOfThisGpu();

// Measures compute and the host links as the file comment says, printing
// each measurement (min / median / max) to stdout, and returns
// `options.cluster` named "<name>_calibrated" with (calibration_plan.h
// WriteGpuMeasurements) measured_compute replaced by the measured shapes,
// every device's host_link figures replaced by its GPU's, the collective
// rows written in, and a description saying what was measured by which GPU
// (cudaGetDeviceProperties name) and when (UTC). MPI must be initialised
// (InitMpi; one process: the host stores are node-shared memory).
//
// Errors: FailedPrecondition when no GPU is visible; those of
// CudaBackend::Create (but for a plan that does not fit: left out), of
// running a step, and of the host-link fit; Internal for CUDA errors.
absl::StatusOr<Cluster> CalibrateGpu(const GpuCalibrationOptions& options);

// The collective probe, run on every rank under mpirun (MPI initialised with
// InitMpi): all ranks all-gather, in place, buffers of 4 KiB .. 64 MiB (×4;
// the whole gathered buffer, as CollectiveOp.bytes), rank r on GPU r mod
// visible GPUs, over NCCL when every rank has its own GPU
// (GroupsHaveDistinctGpus), else host-staged; each size one warm-up then
// `repeats` runs, each started together (MPI_Barrier), timed with CUDA
// events on the rank's stream. Rank 0 prints which communicator ran and
// writes one line per size to `path`: "bytes median min max" (seconds), as
// CollectiveRows reads them.
//
// Errors: FailedPrecondition when no GPU is visible; those of
// MpiCollectives, GroupsHaveDistinctGpus and the communicator
// (DeadlineExceeded when a rank does not take part within 60 s); Internal
// for CUDA errors or when `path` cannot be written.
absl::Status GpuCollectiveProbe(int repeats, const std::string& path);

}  // namespace zosched
