// What one run of `calibrate` is asked to do: its flags as values, so that
// the calibration libraries (cpu_calibration.h, and under --config=cuda
// runtime/cuda/calibration/gpu_calibration_backend.h) read no flags, and the
// checks of those that need no file.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace zosched {

struct CalibrationSettings {
  std::string backend = "cpu";  // "cpu" (the CPU testbed) or "cuda" (NVIDIA GPUs)
  // The cluster to calibrate, catalog name or path as given (the --cluster
  // flag, or DefaultCluster(backend)); messages name it so.
  std::string cluster;
  std::string out;  // --out as given; "" for clusters/<cluster name>.calibrated.pbtxt
  std::string model = "opt-tiny";  // whose op shapes to measure
  int32_t batch = 16;              // examples per step of the schedules measured
  int32_t seq = 32;                // their sequence length, tokens
  int32_t repeats = 7;             // timed runs per measurement
  // cpu:
  int32_t threads = 1;             // cores each device computes on
  std::string data = "synthetic";  // training data the compute ops run on
  std::string task = "sst2";       // the task in `data`
  // cuda:
  std::string compute_dtype;  // FP32, FP16 or BF16; "" for lowering's default
  bool tf32 = false;          // FP32 GEMMs may use TF32 tensor cores
  std::string schedules;      // comma-separated schedule files to measure instead
  // Internal, set when this process is a probe under mpirun: the file its
  // results go to.
  std::string collective_probe;
  std::string compute_probe;
};

// The cluster calibrated when --cluster is not given: local_cpu for cpu; for
// cuda the measured H100 machine (h100_sxm_x1), or the closest catalog
// cluster (h100_sxm_x2) in a checkout without its file.
std::string DefaultCluster(const std::string& backend);

// OK when `settings.backend` is a backend's name and no flag of the other
// backend is given. Errors: InvalidArgument for an unknown backend, for
// --threads with cuda, and for --compute_dtype, --tf32 or --schedules with
// cpu.
absl::Status CheckBackendSettings(const CalibrationSettings& settings);

// The counts in their ranges (--repeats 1 to 1000, --batch, --threads 1 to
// 256, --seq). Errors: InvalidArgument naming the flag.
absl::Status CheckCountSettings(const CalibrationSettings& settings);

}  // namespace zosched
