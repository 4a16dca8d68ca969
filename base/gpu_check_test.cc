// Runs with or without a GPU: every call below fails by construction, so the
// test checks what a failure turns into.
#include "base/gpu_check.h"

#include "base/gpu_check_test_kernel.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

absl::Status SetBadDevice() {
  GPU_RETURN_IF_ERROR(cudaSetDevice(-1));
  return absl::OkStatus();
}

absl::Status LaunchWithZeroBlocks() {
  GPU_RETURN_IF_ERROR(LaunchEmptyKernelForTest(0));
  return absl::OkStatus();
}

absl::Status CountRanksOfNullComm() {
  int n = 0;
  GPU_RETURN_IF_ERROR(ncclCommCount(nullptr, &n));
  return absl::OkStatus();
}

absl::Status UseNullCublasHandle() {
  GPU_RETURN_IF_ERROR(cublasSetStream(nullptr, nullptr));
  return absl::OkStatus();
}

TEST(GpuCheck, CudaFailureKeepsExpressionAndPlace) {
  absl::Status s = SetBadDevice();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("CUDA error cudaError"), std::string::npos) << s;
  EXPECT_NE(s.message().find("`cudaSetDevice(-1)`"), std::string::npos) << s;
  EXPECT_NE(s.message().find("base/gpu_check_test.cc:"), std::string::npos) << s;
}

TEST(GpuCheck, KernelLaunchFailureIsReported) {
  absl::Status s = LaunchWithZeroBlocks();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("`LaunchEmptyKernelForTest(0)`"), std::string::npos) << s;
}

TEST(GpuCheck, NcclFailureIsNamed) {
  absl::Status s = CountRanksOfNullComm();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("NCCL error ncclInvalidArgument"), std::string::npos) << s;
  EXPECT_NE(s.message().find("`ncclCommCount(nullptr, &n)`"), std::string::npos) << s;
}

TEST(GpuCheck, CublasFailureIsNamed) {
  absl::Status s = UseNullCublasHandle();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cuBLAS error CUBLAS_STATUS_"), std::string::npos) << s;
}

}  // namespace
}  // namespace zosched
