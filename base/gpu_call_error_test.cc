#include "base/gpu_call_error.h"

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(GpuCallError, NamesLibraryErrorExpressionAndPlace) {
  absl::Status s =
      GpuCallError("NCCL", 2, "ncclSystemError", "unhandled system error",
                   "ncclAllGather(a, b, n, ncclFloat, comm, stream)",
                   "runtime/cuda/nccl_comm.cc", 57);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.message(),
            "NCCL error ncclSystemError (2): unhandled system error\n"
            "  in `ncclAllGather(a, b, n, ncclFloat, comm, stream)` at "
            "runtime/cuda/nccl_comm.cc:57");
}

}  // namespace
}  // namespace zosched
