#include "kernel_plans/embedding_backward_plan.h"

#include <string>
#include <utility>

namespace zosched {
namespace {

constexpr int64_t kIndexBytes = 8;  // int64 indices
constexpr double kElementFlops = 1;  // one add a gradient element

// Up to this many indices a zero-filled table and one kernel, more the
// sorted path.
constexpr int64_t kDirectIndices = 3072;
constexpr int64_t kSortLaunches = 11;
constexpr int64_t kSortPasses = 8;
constexpr int64_t kSegmentLaunches = 9;

// A memory-bound kernel moving `bytes` and doing `flops` over all of its
// `launches`.
Kernel Pass(std::string name, DType dtype, double bytes, double flops = 0, int64_t launches = 1) {
  return MemoryPass(std::move(name), dtype, bytes / launches, flops / launches, launches);
}

}  // namespace

void AppendEmbeddingBackward(const std::string& table, int64_t indices, int64_t rows,
                             int64_t width, int64_t grad_bytes, DType dtype, KernelPlan* plan) {
  const double gradient_rows = static_cast<double>(indices) * width * grad_bytes;
  plan->push_back(Pass(table + " gradient zero fill", dtype,
                       static_cast<double>(rows) * width * grad_bytes));
  if (indices <= kDirectIndices) {
    plan->push_back(Pass(table + " embedding backward (feature kernel)", dtype,
                         indices * kIndexBytes + 2 * gradient_rows,
                         kElementFlops * indices * width));
    return;
  }
  plan->push_back(Pass(table + " indices sort (arange, CUB radix sort)", dtype,
                       (1 + 2 * kSortPasses) * 2.0 * indices * kIndexBytes, 0, kSortLaunches));
  plan->push_back(Pass(table + " embedding backward (segment sums, scatter)", dtype,
                       2 * gradient_rows + 2.0 * indices * kIndexBytes,
                       kElementFlops * indices * width, kSegmentLaunches));
}

}  // namespace zosched
