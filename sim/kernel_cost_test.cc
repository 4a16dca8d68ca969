// CostPlan on an H100-like device: a large GEMM costs its roofline, edge
// tiles and a partial last wave cost more, a one-token GEMM is bound by its
// weight bytes, launches and gaps add up, z generation can bound a pass,
// a measured GEMM's time wins over the model, and a missing figure is
// refused with the device named.
#include "sim/kernel_cost.h"

#include "gtest/gtest.h"

namespace zosched {
namespace {

Device H100Like() {
  Device d;
  d.set_name("gpu0");
  d.set_model("H100-like");
  ComputePeak* fp16 = d.add_peaks();
  fp16->set_dtype(FP16);
  fp16->set_peak_tflops(989);
  fp16->set_efficiency(0.72);
  d.set_memory_bandwidth_gbps(3350);
  d.set_memory_efficiency(0.85);
  KernelModel* k = d.mutable_kernel_model();
  k->set_sms(132);
  k->set_gemm_tile_m(128);
  k->set_gemm_tile_n(256);
  k->set_launch_gap_s(3e-6);
  k->set_normal_elements_per_s(1.4e11);
  return d;
}

double Seconds(const KernelPlan& plan, const Device& d) {
  absl::StatusOr<PlanCost> cost = CostPlan(plan, d, 0);
  EXPECT_TRUE(cost.ok()) << cost.status();
  return cost.ok() ? cost->seconds : 0;
}

TEST(KernelCost, ALargeGemmCostsItsRooflinePlusTheLastWave) {
  const Device d = H100Like();
  // 8192 x 8192 output: 64 x 32 = 2048 tiles, 15.5 waves of 132 -> 16.
  const Kernel g = Gemm("big", FP16, 2, 8192, 8192, 8192);
  const double roofline = g.flops / (989e12 * 0.72);
  const double wave_use = 2048.0 / (16 * 132);
  EXPECT_NEAR(Seconds({g}, d), roofline / wave_use + 3e-6, 1e-9);
}

TEST(KernelCost, TilesAndWavesQuantise) {
  const Device d = H100Like();
  // 132 full tiles: one wave. One more tile: two waves, twice the time.
  const Kernel one_wave = Gemm("a", FP16, 2, 128 * 132, 256, 4096);
  const Kernel two_waves = Gemm("b", FP16, 2, 128 * 133, 256, 4096);
  const double t1 = GemmSeconds(one_wave, d.peaks(0), d.kernel_model());
  const double t2 = GemmSeconds(two_waves, d.peaks(0), d.kernel_model());
  EXPECT_NEAR(t2 / t1, 2.0, 1e-9);
  // Half a tile's rows cost a whole tile.
  const Kernel half = Gemm("c", FP16, 2, 64, 256, 4096);
  const Kernel full = Gemm("d", FP16, 2, 128, 256, 4096);
  EXPECT_NEAR(GemmSeconds(half, d.peaks(0), d.kernel_model()),
              GemmSeconds(full, d.peaks(0), d.kernel_model()), 1e-15);
}

TEST(KernelCost, OneTokenGemmIsBoundByItsWeights) {
  const Device d = H100Like();
  const Kernel g = Gemm("decode", FP16, 2, 1, 8192, 8192);
  absl::StatusOr<PlanCost> cost = CostPlan({g}, d, 0);
  ASSERT_TRUE(cost.ok());
  EXPECT_NEAR(cost->memory_s, g.bytes / (3350e9 * 0.85), 1e-12);
  EXPECT_EQ(cost->gemm_s, 0);
}

TEST(KernelCost, LaunchesGapsAndZGeneration) {
  const Device d = H100Like();
  Kernel pass = MemoryPass("perturb", FP16, 4.0 * 50e6, 0, /*launches=*/3);
  pass.normal_elements = 50e6;  // 0.36 ms of z at 1.4e11/s, beyond 0.07 ms of bytes
  absl::StatusOr<PlanCost> cost = CostPlan({pass}, d, 0);
  ASSERT_TRUE(cost.ok());
  EXPECT_NEAR(cost->memory_s, 3 * 50e6 / 1.4e11, 1e-12);
  EXPECT_NEAR(cost->launch_s, 3 * 3e-6, 1e-15);
  EXPECT_NEAR(cost->seconds, cost->memory_s + cost->launch_s, 1e-15);
  EXPECT_NEAR(cost->floor_s, 3 * 4.0 * 50e6 / (3350e9 * 0.85), 1e-12);
}

TEST(KernelCost, TinyLaunchesRunAtTheHostsPace) {
  const Device d = H100Like();
  // 100 launches of 1 us of bytes each, issued 10 us apart: 1 ms, the
  // host's time.
  const Kernel tiny = MemoryPass("add", FP16, 0.85 * 3350e9 * 1e-6, 0, 100);
  absl::StatusOr<PlanCost> cost = CostPlan({tiny}, d, 10e-6);
  ASSERT_TRUE(cost.ok());
  EXPECT_NEAR(cost->seconds, 100 * 10e-6, 1e-12);
  // Launches longer than the dispatch: the GPU's time, its own gaps
  // included.
  Kernel long_pass = tiny;
  long_pass.bytes *= 100;
  cost = CostPlan({long_pass}, d, 10e-6);
  ASSERT_TRUE(cost.ok());
  EXPECT_NEAR(cost->seconds, 100 * (100e-6 + 3e-6), 1e-12);
}

TEST(KernelCost, TorchsGeneratorHasItsOwnRate) {
  Device d = H100Like();
  Kernel normal = MemoryPass("normal_", FP16, 2.0 * 1e9);
  normal.normal_elements = 1e9;
  normal.generator = NormalGenerator::kTorch;
  absl::StatusOr<PlanCost> cost = CostPlan({normal}, d, 0);
  ASSERT_FALSE(cost.ok());
  EXPECT_NE(cost.status().message().find("torch_normal_elements_per_s"), std::string::npos);
  d.mutable_kernel_model()->set_torch_normal_elements_per_s(4.3e11);
  cost = CostPlan({normal}, d, 0);
  ASSERT_TRUE(cost.ok());
  EXPECT_NEAR(cost->memory_s, 1e9 / 4.3e11, 1e-12);
}

TEST(KernelCost, AMeasuredGemmWinsOverTheModel) {
  Device d = H100Like();
  const Kernel g = Gemm("qkv", FP16, 2, 2048, 6144, 2048, /*batch=*/1, /*launches=*/3);
  const double modelled = Seconds({g}, d);
  MeasuredGemm* m = d.mutable_kernel_model()->add_measured_gemms();
  m->set_dtype(FP16);
  m->set_m(2048);
  m->set_n(6144);
  m->set_k(2048);
  m->set_seconds(250e-6);
  // Each of the 3 launches takes its measured time, gaps as before.
  EXPECT_NEAR(Seconds({g}, d), 3 * (250e-6 + 3e-6), 1e-12);
  EXPECT_GT(Seconds({g}, d), modelled);
  // Another dtype, shape or batch: the model.
  m->set_dtype(BF16);
  EXPECT_DOUBLE_EQ(Seconds({g}, d), modelled);
  m->set_dtype(FP16);
  m->set_k(2049);
  EXPECT_DOUBLE_EQ(Seconds({g}, d), modelled);
  m->set_k(2048);
  m->set_batch(2);
  EXPECT_DOUBLE_EQ(Seconds({g}, d), modelled);
  m->set_batch(1);  // 0 and 1 both mean one product
  EXPECT_NEAR(Seconds({g}, d), 3 * (250e-6 + 3e-6), 1e-12);
  // And the devices' figures tell the two tables apart.
  EXPECT_NE(KernelFigures(d), KernelFigures(H100Like()));
}

TEST(KernelCost, RefusesMissingFigures) {
  Device d = H100Like();
  d.clear_kernel_model();
  absl::StatusOr<PlanCost> cost = CostPlan({Gemm("qkv", FP16, 2, 2048, 6144, 2048)}, d, 0);
  ASSERT_FALSE(cost.ok());
  EXPECT_NE(cost.status().message().find("device 'gpu0' (H100-like) lacks kernel_model"),
            std::string::npos)
      << cost.status();
  d = H100Like();
  cost = CostPlan({Gemm("qkv", BF16, 2, 2048, 6144, 2048)}, d, 0);
  ASSERT_FALSE(cost.ok());
  EXPECT_NE(cost.status().message().find("a ComputePeak (peak_tflops, efficiency) for BF16"),
            std::string::npos)
      << cost.status();
  d.mutable_kernel_model()->clear_normal_elements_per_s();
  Kernel pass = MemoryPass("update", FP16, 1e6);
  pass.normal_elements = 1e6;
  cost = CostPlan({pass}, d, 0);
  ASSERT_FALSE(cost.ok());
  EXPECT_NE(cost.status().message().find("normal_elements_per_s"), std::string::npos);
}

}  // namespace
}  // namespace zosched
