// One kernel launch as the GPU cost model sees it: what an implementation
// launches for a compute op of the IR, with the shape that decides its
// speed. A kernel plan (this package's *_plan.h) is the ordered list of them
// for one op; the simulator costs each (sim/kernel_cost.h) and adds them up.
//
// Units: flops are floating-point operations (a multiply-add is 2); bytes
// are device-memory traffic, the fewest an implementation of this kernel
// moves: each operand read once and each output written once, at the
// operand's element size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model.pb.h"

namespace zosched {

enum class KernelKind {
  // A matrix product C[m, n] = A[m, k] · B[k, n] (cuBLAS or a fused GEMM),
  // `batch` of them in one launch (strided-batched). Runs on the tensor
  // cores in `dtype` (FP32 without TF32: the CUDA cores).
  kGemm,
  // Anything else: elementwise, row-wise (norms, softmax, loss), random
  // number generation, copies. Bounded by its bytes (and a launch).
  kMemory,
};

// Who generates a kernel's z: zosched's Philox and Box-Muller of correctly
// rounded primitives (runtime/zo/normal.h), or torch.normal (cuRAND's
// Philox).
enum class NormalGenerator { kZosched, kTorch };

struct Kernel {
  std::string name;  // what it does, e.g. "qkv projection", "causal softmax"
  KernelKind kind = KernelKind::kMemory;
  DType dtype = FP32;  // element type the kernel computes in
  int64_t m = 0, n = 0, k = 0;  // kGemm: one product's shape
  int64_t batch = 1;            // kGemm: products in one launch
  double flops = 0;  // per launch (kGemm: 2·m·n·k·batch)
  double bytes = 0;  // per launch
  // Elements whose z ~ N(0, 1) the launch generates (a perturbation or
  // update pass regenerates z from the seed), and by which generator: their
  // generation can outlast the bytes (KernelModel.normal_elements_per_s,
  // torch_normal_elements_per_s).
  double normal_elements = 0;
  NormalGenerator generator = NormalGenerator::kZosched;
  int64_t launches = 1;  // identical launches in a row (e.g. one per head)
};

using KernelPlan = std::vector<Kernel>;

// A GEMM launch: flops 2·m·n·k·batch; bytes (m·k + k·n + m·n)·batch at
// `element_bytes` each (A and B read once, C written once).
Kernel Gemm(std::string name, DType dtype, int64_t element_bytes, int64_t m, int64_t n,
            int64_t k, int64_t batch = 1, int64_t launches = 1);

// A memory-bound launch moving `bytes`, doing `flops`.
Kernel MemoryPass(std::string name, DType dtype, double bytes, double flops = 0,
                  int64_t launches = 1);

// The plan's totals over every launch.
double PlanFlops(const KernelPlan& plan);
double PlanBytes(const KernelPlan& plan);
int64_t PlanLaunches(const KernelPlan& plan);

}  // namespace zosched
