// Whether a cluster describes the GPU a calibration measures. A cluster's
// devices name their model ("H100-SXM5-80GB"); CUDA names the GPU it runs
// on ("NVIDIA H100 80GB HBM3"). A calibration keeps every figure it does
// not measure (peaks, memory, HBM bandwidth) from the cluster it starts
// from, so an H200 calibrated as h100_sxm_x1 would be filed with an H100's
// 80 GB and 3.35 TB/s.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "schedule/cluster.pb.h"

namespace zosched {

// Whether the GPU CUDA calls `gpu_name` is of the model `cluster_model`
// (a Device.model): the model's leading words up to the first with a digit,
// split at '-', spaces and '_' ("H100", "RTX 4090", "GB200"), appear as
// whole consecutive words of the GPU's name, case aside. "H100-SXM5-80GB"
// names "NVIDIA H100 80GB HBM3", not "NVIDIA H200"; "H200-141GB" does not
// name "NVIDIA GH200 480GB". A model with no digit names nothing. Form
// factor and memory size are not compared: "H100-PCIe-80GB" names an H100
// SXM5 too.
bool ModelNamesGpu(const std::string& cluster_model, const std::string& gpu_name);

// The catalog clusters with exactly `devices` devices, every one of a model
// that names `gpu_name`, sorted (e.g. {"h200_x1"} for "NVIDIA H200" and 1).
std::vector<std::string> CatalogClustersOfGpu(const std::string& gpu_name, int devices);

// OK when every device of `cluster` is of a model that names `gpu_name`.
// Errors: InvalidArgument naming the cluster, its first other device and
// model, the GPU, and the catalog clusters of this GPU with as many
// devices as `cluster` (or that none exists and a cluster file for it is
// what to pass).
absl::Status CheckClusterDescribesGpu(const Cluster& cluster, const std::string& gpu_name);

}  // namespace zosched
