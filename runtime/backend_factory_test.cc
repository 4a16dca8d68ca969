#include "runtime/backend_factory.h"

#include "gtest/gtest.h"
#include "runtime/backend_registry.h"

namespace zosched {
namespace {

TEST(BackendFactoryTest, RefusesAnUnknownNameListingTheBackends) {
  EXPECT_EQ(CheckBackendAvailable("tpu").message(), "--backend='tpu': expected cpu or cuda");
}

TEST(BackendFactoryTest, TheCpuTestbedRunsEverywhere) {
  EXPECT_TRUE(CheckBackendAvailable("cpu").ok());
  BackendOptions options;
  options.name = "cpu";
  const BackendCapabilities cpu = CapabilitiesOf(options);
  EXPECT_FALSE(cpu.pipelines_steps);
  EXPECT_TRUE(cpu.arena_in_host_memory);
  EXPECT_TRUE(cpu.probes_compute_speed);
  EXPECT_TRUE(cpu.computes_on_host_threads);
  EXPECT_FALSE(cpu.tf32_gemms);
}

// With or without --config=cuda, "cuda" is known with its capabilities (a
// build without it refuses it saying how to build it).
TEST(BackendFactoryTest, CudaIsKnownInEveryBuild) {
  const BackendRegistration* cuda = FindBackend("cuda");
  ASSERT_NE(cuda, nullptr);
  EXPECT_TRUE(cuda->capabilities.pipelines_steps);
  EXPECT_FALSE(cuda->capabilities.arena_in_host_memory);
  EXPECT_FALSE(cuda->capabilities.probes_compute_speed);
  const absl::Status available = CheckBackendAvailable("cuda");
  if (available.code() == absl::StatusCode::kInvalidArgument) {
    EXPECT_EQ(available.message(),
              "--backend=cuda: this build has no CUDA backend; build with --config=cuda "
              "(./bazelw run --config=cuda //train -- --backend=cuda ...)");
  }
}

TEST(BackendFactoryTest, NamesTheBackendsWithACapability) {
  EXPECT_EQ(BackendNamesWith(&BackendCapabilities::computes_on_host_threads, " or "), "cpu");
  EXPECT_EQ(BackendNamesWith(&BackendCapabilities::tf32_gemms, " or "), "cuda");
  EXPECT_EQ(BackendNames(", "), "cpu, cuda");
}

}  // namespace
}  // namespace zosched
