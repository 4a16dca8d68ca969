// `calibrate --backend=cuda` (--config=cuda builds): the GPU machine's
// calibration (gpu_calibration.h) behind the interface calibrate picks its
// backend by (runtime/calibration/calibration_backend.h).
#pragma once

#include "runtime/calibration/calibration_backend.h"

namespace zosched {

// The GPU calibration. Its prepare reads the schedules to measure: those of
// settings.schedules (comma-separated schedule files, each validated), or
// those GpuTargetSchedules lowers on the cluster for settings.model, batch,
// seq and compute_dtype (printing each one left out because its memory
// plan does not fit); then it checks that a GPU is visible. Errors:
// InvalidArgument for a bad --compute_dtype, an empty file name, or a file
// that does not validate (naming it); the files' (NotFound, ...);
// GpuTargetSchedules'; CheckGpuVisible's (FailedPrecondition). Its measure
// runs GpuCollectiveProbe among 2 and 4 ranks under mpirun, then
// CalibrateGpu; its probe is GpuCollectiveProbe.
const CalibrationBackend& GpuCalibration();

}  // namespace zosched
