// What the GPU calibration (gpu_calibration.h) runs and writes, apart from
// CUDA so that CPU tests cover it: the schedules whose compute op shapes it
// measures, the views through which one device of a schedule runs alone in
// one process, the measured table taken from the executor's intervals, and
// the edits that turn the starting Cluster into the calibrated one.
//
// Units: seconds, bytes, GB/s (1e9 bytes per second), as in
// schedule/cluster.proto.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/model.pb.h"
#include "runtime/cuda/calibration/calibration_math.h"
#include "schedule/cluster.pb.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline.pb.h"

namespace zosched {

// The schedules to measure and those left out.
struct GpuTargets {
  std::vector<Schedule> schedules;
  // One line per schedule left out because its memory plan does not fit
  // (e.g. "mezo: <lowering's message>").
  std::vector<std::string> skipped;
};

// The schedules whose compute op shapes the GPU calibration measures, for
// `model` (validated) on `cluster` (validated): mezo (which one GPU runs),
// then the testbed's grids (schedule/testbed_grid.h: zo2, distzo2 P2xD1,
// P1xD2 and P2xD2, each sliced and naive), as the CPU calibration. Training settings: the
// defaults (DefaultTrainingSettings) with batch `batch`, sequence length
// `seq`, learning rate 1e-6, compute dtype `compute` (DTYPE_UNSPECIFIED:
// lowering's default, the model's weight dtype where the device has a peak
// for it, else FP32) and host and wire dtypes left to lowering (the host
// dtype is the model's and the wire dtype equals it, as the CUDA backend
// needs). Each is lowered on ClusterForLowering(cluster, its device count).
//
// Errors: InvalidArgument from lowering for settings it refuses (a batch not
// divisible by D, a sequence longer than the model's positions, a compute
// dtype the device has no peak for), naming the schedule; FailedPrecondition
// when no schedule fits. A schedule whose memory plan does not fit
// (ResourceExhausted) is left out and listed in `skipped`.
absl::StatusOr<GpuTargets> GpuTargetSchedules(const ModelSpec& model, const Cluster& cluster,
                                              int batch, int seq, DType compute);

// `cluster` (validated) with at least `devices` devices, for lowering only
// (the result is neither simulated nor written out): when it has fewer,
// copies of its first device (named "<first>+1", "<first>+2", ...; same
// host, same links) are appended, and the collective model gets a
// placeholder step latency for each link class it lacks (ValidateCluster
// asks for the classes the copies' collectives may cross). A schedule's op
// shapes depend only on its grid and on which devices share a host, so the
// shapes lowered here are those of a cluster that really has that many GPUs
// in one host.
Cluster ClusterForLowering(const Cluster& cluster, int devices);

// The two schedules through which device `device` of `schedule` runs its
// share alone, in one process, without collectives (its compute ops, copies,
// streams and their order as in `schedule`; what the collectives would have
// brought is left as it was, which does not change what an op costs).
struct DeviceTimingViews {
  // `schedule` with the device's collective ops moved after every other op,
  // in their order (stream order on every stream is unchanged): the CUDA
  // backend's schedule, whose op indices 0 .. k-1 are then the device's k
  // other ops (backend.h: indices name the device's ops in schedule order).
  Schedule backend;
  // `schedule` without the device's collective ops, each edge through a
  // removed op replaced by edges from its producers to its consumers: the
  // executor's schedule; its k ops on the device are the backend's first k.
  Schedule executor;
};
DeviceTimingViews TimingViews(const Schedule& schedule, int device);

// The MeasuredCompute key of compute op `op` of `schedule` (op_class, model,
// examples, seq_len, elements: the CPU calibration's; and the schedule's
// compute dtype, since a GPU's FP16 and FP32 kernels differ), seconds unset.
MeasuredCompute ComputeShape(const Schedule& schedule, const ComputeOp& op);

// The key as one string, "OP_CLASS/model/examples/seq_len/elements/DTYPE".
std::string ShapeKey(const MeasuredCompute& shape);

// One compute shape timed: its row (seconds = the median) and the
// statistics of its ops' durations.
struct ShapeTiming {
  MeasuredCompute row;
  Stats stats;     // seconds
  int samples = 0;  // op runs timed (ops of that shape × steps)
};

// The compute shapes of device `device` of `schedule`, in order of their
// first op, each timed over `intervals` (an executor's, for that schedule
// and device): the durations (end - start) of every op of that shape in
// every step >= `first_step`. Shapes without such an interval are left out.
std::vector<ShapeTiming> ComputeTimings(const Schedule& schedule, int device,
                                        const std::vector<OpInterval>& intervals,
                                        int64_t first_step);

// The MeasuredCollective rows (kind ALL_GATHER, `ranks`) of a collective
// probe's output: `numbers` holds per size "bytes median min max" (bytes:
// the whole gathered buffer, as CollectiveOp.bytes; seconds).
//
// Errors: InvalidArgument when `numbers` is not a whole number of rows, has
// none, or a row has bytes or a median <= 0.
absl::StatusOr<std::vector<MeasuredCollective>> CollectiveRows(int ranks,
                                                               const std::vector<double>& numbers);

// The distinct GEMM launches (dtype, m, n, k, batch) that zosched's CUDA
// backend makes for the compute ops of `schedules`, in order of first
// appearance (kernel_plans/zosched_cuda_plan.h, through ProfilePlan): the
// shapes the GPU calibration times into KernelModel.measured_gemms. The
// rows' seconds and source are left for it.
//
// Errors: ProfilePlan's, naming the schedule and the op.
absl::StatusOr<std::vector<MeasuredGemm>> GemmShapes(const std::vector<Schedule>& schedules);

// Writes what the GPU calibration measured into `cluster`:
// - measured_compute becomes `compute`;
// - every device with a kernel_model gets `gemms` as its measured_gemms (a
//   device without one is costed by the roofline, which takes no table);
// - device i's host_link gets host_links[i]'s down_gbps, up_gbps,
//   duplex_gbps and latency_s (host_links has one entry per device), and the
//   measured_transfers rows of "<device>/host_link" go (they would override
//   the figures in the simulator);
// - measured_collectives rows with the (kind, ranks) of a row of
//   `collectives` are replaced by `collectives`' rows.
void WriteGpuMeasurements(const std::vector<MeasuredCompute>& compute,
                          const std::vector<HostLinkFigures>& host_links,
                          const std::vector<MeasuredCollective>& collectives,
                          const std::vector<MeasuredGemm>& gemms, Cluster* cluster);

}  // namespace zosched
