#include "kernel_plans/kernel.h"

#include <utility>

namespace zosched {

Kernel Gemm(std::string name, DType dtype, int64_t element_bytes, int64_t m, int64_t n,
            int64_t k, int64_t batch, int64_t launches) {
  Kernel g;
  g.name = std::move(name);
  g.kind = KernelKind::kGemm;
  g.dtype = dtype;
  g.m = m;
  g.n = n;
  g.k = k;
  g.batch = batch;
  g.flops = 2.0 * static_cast<double>(m) * n * k * batch;
  g.bytes = static_cast<double>(m * k + k * n + m * n) * batch * element_bytes;
  g.launches = launches;
  return g;
}

Kernel MemoryPass(std::string name, DType dtype, double bytes, double flops, int64_t launches) {
  Kernel p;
  p.name = std::move(name);
  p.kind = KernelKind::kMemory;
  p.dtype = dtype;
  p.bytes = bytes;
  p.flops = flops;
  p.launches = launches;
  return p;
}

double PlanFlops(const KernelPlan& plan) {
  double total = 0;
  for (const Kernel& k : plan) total += k.flops * k.launches;
  return total;
}

double PlanBytes(const KernelPlan& plan) {
  double total = 0;
  for (const Kernel& k : plan) total += k.bytes * k.launches;
  return total;
}

int64_t PlanLaunches(const KernelPlan& plan) {
  int64_t total = 0;
  for (const Kernel& k : plan) total += k.launches;
  return total;
}

}  // namespace zosched
