#include "sim/kernel_cost.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace zosched {
namespace {

double CeilDiv(double a, double b) { return std::ceil(a / b); }

// The least k a split-K part takes (U: cuBLAS's split-K kernels keep parts
// of a few hundred k; the model's one free constant for small GEMMs).
constexpr double kMinSplitK = 256;

absl::Status Missing(const Device& device, const std::string& what, const Kernel& kernel) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "device '%s' (%s) lacks %s, which kernel '%s' needs; add it to the cluster file",
      device.name(), device.model(), what, kernel.name));
}

const ComputePeak* PeakFor(const Device& device, DType dtype) {
  for (const ComputePeak& p : device.peaks()) {
    if (p.dtype() == dtype && p.peak_tflops() > 0 && p.efficiency() > 0) return &p;
  }
  return nullptr;
}

// The device's measured time of `gemm`'s dtype and shape, or nullptr.
const MeasuredGemm* FindMeasuredGemm(const KernelModel& model, const Kernel& gemm) {
  for (const MeasuredGemm& g : model.measured_gemms()) {
    if (g.dtype() == gemm.dtype && g.m() == gemm.m && g.n() == gemm.n && g.k() == gemm.k &&
        std::max<int64_t>(1, g.batch()) == gemm.batch) {
      return &g;
    }
  }
  return nullptr;
}

}  // namespace

std::string KernelFigures(const Device& device) {
  // Messages whole, so that a field of theirs CostPlan comes to read is in
  // here without a change.
  Device figures;
  *figures.mutable_kernel_model() = device.kernel_model();
  *figures.mutable_peaks() = device.peaks();
  figures.set_memory_bandwidth_gbps(device.memory_bandwidth_gbps());
  figures.set_memory_efficiency(device.memory_efficiency());
  return figures.SerializeAsString();
}

double GemmSeconds(const Kernel& gemm, const ComputePeak& peak, const KernelModel& model) {
  const double tm = model.gemm_tile_m(), tn = model.gemm_tile_n();
  const double m_tiles = CeilDiv(gemm.m, tm), n_tiles = CeilDiv(gemm.n, tn);
  const double tile_use = static_cast<double>(gemm.m) * gemm.n / (m_tiles * tm * n_tiles * tn);
  const double tiles = m_tiles * n_tiles * gemm.batch;
  // Fewer tiles than SMs: k is split (split-K) into up to sms / tiles parts
  // of at least kMinSplitK.
  const double splits =
      tiles >= model.sms()
          ? 1.0
          : std::max(1.0, std::min(std::floor(model.sms() / tiles), CeilDiv(gemm.k, kMinSplitK)));
  const double units = tiles * splits;
  const double wave_use = units / (CeilDiv(units, model.sms()) * model.sms());
  const double rate = peak.peak_tflops() * 1e12 * peak.efficiency() * tile_use * wave_use;
  return gemm.flops / rate;
}

absl::StatusOr<PlanCost> CostPlan(const KernelPlan& plan, const Device& device,
                                  double host_dispatch_s) {
  PlanCost cost;
  if (plan.empty()) return cost;
  const KernelModel& model = device.kernel_model();
  const double bytes_per_s = device.memory_bandwidth_gbps() * 1e9 * device.memory_efficiency();
  double floor_flops_s = 0, bytes = 0, gaps = 0, dispatch = 0;
  for (const Kernel& k : plan) {
    if (model.sms() <= 0 || model.gemm_tile_m() <= 0 || model.gemm_tile_n() <= 0) {
      return Missing(device, "kernel_model (sms, gemm_tile_m, gemm_tile_n)", k);
    }
    if (!(bytes_per_s > 0)) return Missing(device, "memory_bandwidth_gbps and memory_efficiency", k);
    double arithmetic = 0;
    if (k.kind == KernelKind::kGemm) {
      const ComputePeak* peak = PeakFor(device, k.dtype);
      if (peak == nullptr) {
        return Missing(device, "a ComputePeak (peak_tflops, efficiency) for " + DType_Name(k.dtype),
                       k);
      }
      arithmetic = GemmSeconds(k, *peak, model);
      floor_flops_s += k.launches * k.flops / (peak->peak_tflops() * 1e12 * peak->efficiency());
    }
    double generation = 0;
    if (k.normal_elements > 0) {
      const bool torch = k.generator == NormalGenerator::kTorch;
      const double rate =
          torch ? model.torch_normal_elements_per_s() : model.normal_elements_per_s();
      if (!(rate > 0)) {
        return Missing(device,
                       torch ? "kernel_model.torch_normal_elements_per_s"
                             : "kernel_model.normal_elements_per_s",
                       k);
      }
      generation = k.normal_elements / rate;
    }
    const double memory = std::max(k.bytes / bytes_per_s, generation);
    const double n = static_cast<double>(k.launches);
    const MeasuredGemm* measured =
        k.kind == KernelKind::kGemm ? FindMeasuredGemm(model, k) : nullptr;
    if (measured != nullptr) {
      cost.gemm_s += n * measured->seconds();  // the GPU's own time wins
    } else if (arithmetic >= memory) {
      cost.gemm_s += n * arithmetic;
    } else {
      cost.memory_s += n * memory;
    }
    gaps += n * model.launch_gap_s();
    dispatch += n * host_dispatch_s;
    bytes += n * k.bytes;
  }
  // The host issues the plan's launches without waiting for the GPU, so it
  // runs ahead of short kernels: the plan takes the GPU's time or the
  // host's, whichever is longer.
  cost.seconds = std::max(cost.gemm_s + cost.memory_s + gaps, dispatch);
  cost.launch_s = cost.seconds - cost.gemm_s - cost.memory_s;
  cost.floor_s = std::max(floor_flops_s, bytes / bytes_per_s);
  return cost;
}

}  // namespace zosched
