#include "runtime/nn/gemm.h"

#include "runtime/nn/gemm_kernels.h"

namespace zosched {
namespace {

struct Chosen {
  GemmKernel kernel;
  const char* name;
};

const Chosen& Kernel() {
  static const Chosen chosen = Avx512GemmKernel() != nullptr && Avx512Supported()
                                   ? Chosen{Avx512GemmKernel(), "avx512"}
                                   : Chosen{BaseGemmKernel(), "base"};
  return chosen;
}

}  // namespace

void GemmAcc(RhsLayout layout, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
             const float* b, int64_t ldb, float* c, int64_t ldc) {
  Kernel().kernel(layout, m, n, k, a, lda, b, ldb, c, ldc);
}

const char* GemmKernelName() { return Kernel().name; }

}  // namespace zosched
