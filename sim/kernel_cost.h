// What a kernel plan (kernel_plans/kernel.h) costs on a GPU, kernel by
// kernel, where the roofline costs a whole op at once. A plan (one op's
// launches, which the host issues without waiting for the GPU) takes
//   max(Σ (work + launch_gap), Σ host_dispatch)
//   work = max(arithmetic, memory, z generation) of each launch
// where host_dispatch is what the implementation's host spends issuing one
// launch (C++ and cudaLaunchKernel, or PyTorch's eager dispatch): a plan of
// launches shorter than that runs at the host's pace.
// with
//   arithmetic (kGemm) = flops / (peak·efficiency of its dtype · tile_use · wave_use)
//     tile_use = m·n / (⌈m/tm⌉·tm · ⌈n/tn⌉·tn)   the edge tiles' idle part
//     wave_use = U / (⌈U/sms⌉ · sms)             the last wave's idle SMs,
//     U = T · s work units: T = ⌈m/tm⌉ · ⌈n/tn⌉ · batch tiles of tm × tn
//     (KernelModel's tile), and with fewer tiles than SMs k split in
//     s = min(⌊sms/T⌋, ⌈k/256⌉) parts (split-K), else s = 1
//   so a large GEMM costs what the roofline gives (ComputePeak.efficiency is
//   what large GEMMs reach) and a small or oddly shaped one more;
//   memory = bytes / (memory_bandwidth_gbps · memory_efficiency);
//   z generation = normal_elements / the generator's rate
//     (normal_elements_per_s, torch_normal_elements_per_s).
// A small-m GEMM (few tokens) is memory-bound through its weight bytes.
// A GEMM whose dtype and shape the device's KernelModel.measured_gemms
// holds takes that measured time as its work instead (the GPU's own time
// wins over the model).
// Units: seconds.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "kernel_plans/kernel.h"
#include "schedule/cluster.pb.h"

namespace zosched {

// A plan's time and where it goes (seconds, summed over every launch; each
// launch's time is counted under the term that bounds it).
struct PlanCost {
  double seconds = 0;
  double gemm_s = 0;      // launches bound by arithmetic (and measured GEMMs)
  double memory_s = 0;    // launches bound by memory or z generation
  double launch_s = 0;    // the rest: launch gaps, or the host's dispatch
                          // beyond the GPU's work
  double floor_s = 0;     // the roofline of the plan's totals: max(the GEMMs'
                          // flops at their dtype's peak·efficiency, all
                          // bytes at the memory bandwidth)
};

// The cost of `plan` on `device`, its launches issued `host_dispatch_s`
// apart at the fastest.
//
// Errors: FailedPrecondition naming the device and the missing figure
// (kernel_model, a ComputePeak for a GEMM's dtype, memory bandwidth, the
// z rate) when the plan needs one the device lacks.
absl::StatusOr<PlanCost> CostPlan(const KernelPlan& plan, const Device& device,
                                  double host_dispatch_s);

// The figures of `device` that CostPlan reads (kernel_model, peaks,
// memory_bandwidth_gbps, memory_efficiency), serialized: CostPlan costs
// every plan the same on two devices whose figures are equal (its errors
// aside, which name the device).
std::string KernelFigures(const Device& device);

// One GEMM launch's arithmetic time on `device` (its ComputePeak for `dtype`
// and KernelModel must be set; no launch gap).
double GemmSeconds(const Kernel& gemm, const ComputePeak& peak, const KernelModel& model);

}  // namespace zosched
