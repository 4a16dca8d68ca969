// What one run of `calibrate` is asked to do: its flags as values, so that
// the calibration libraries (cpu_calibration.h, and under --config=cuda
// runtime/cuda/calibration/gpu_calibration_backend.h) read no flags, and the
// check of the counts among them. Which flags apply to which backend is
// calibration_choice.h's to check.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "schedule/peft_choice.h"

namespace zosched {

struct CalibrationSettings {
  std::string backend;  // --backend: a KnownCalibration's name (calibration_choice.h)
  // The cluster to calibrate, catalog name or path as given (the --cluster
  // flag, or the backend's DefaultCluster, calibration_choice.h); messages
  // name it so.
  std::string cluster;
  std::string out;  // --out as given; "" for clusters/<cluster name>.calibrated.pbtxt
  std::string model = "opt-tiny";  // whose op shapes to measure
  int32_t batch = 16;              // examples per step of the schedules measured
  int32_t seq = 32;                // their sequence length, tokens
  int32_t directions = 1;          // their perturbation directions a step (n-SPSA q)
  // What they train (schedule/peft_choice.h ParsePeft): every parameter,
  // LoRA adapters or a prefix.
  PeftFlags peft;
  int32_t repeats = 7;             // timed runs per measurement
  // cpu:
  int32_t threads = 1;             // cores each device computes on
  std::string data = "synthetic";  // training data the compute ops run on
  std::string task = "sst2";       // the task in `data`
  // The machines of the cluster's hosts, in its order (--hosts), where its
  // hosts are joined by NICs (nic_calibration.h); empty for one machine.
  std::vector<std::string> hosts;
  // cuda:
  std::string compute_dtype;  // FP32, FP16 or BF16; "" for lowering's default
  bool tf32 = false;          // FP32 GEMMs may use TF32 tensor cores
  std::string schedules;      // comma-separated schedule files to measure instead
  // Internal, set when this process is a probe under mpirun: the file its
  // results go to.
  std::string collective_probe;
  std::string compute_probe;
  std::string nic_probe;
};

// The counts in their ranges (--repeats 1 to 1000, --batch, --threads 1 to
// 256, --seq). Errors: InvalidArgument naming the flag.
absl::Status CheckCountSettings(const CalibrationSettings& settings);

}  // namespace zosched
