#include "runtime/nn/row_kernels.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "models/model.pb.h"
#include "runtime/nn/rotary_table.h"

namespace zosched {
namespace {

TEST(RmsNormRow, NormalisesByTheRootMeanSquareThenScales) {
  std::vector<float> x(37), w(37), y(37);
  double sum_sq = 0;
  for (int i = 0; i < 37; ++i) {
    x[i] = 0.25f * (i - 18) + 0.01f * i * i;
    w[i] = 1.0f + 0.05f * i;
    sum_sq += double{x[i]} * x[i];
  }
  RmsNormRow(x.data(), 37, w.data(), 1e-6f, y.data());
  const double rstd = 1.0 / std::sqrt(sum_sq / 37 + 1e-6);
  for (int i = 0; i < 37; ++i) EXPECT_NEAR(y[i], x[i] * rstd * w[i], 1e-5) << i;
  // In place gives the same bits.
  std::vector<float> in_place = x;
  RmsNormRow(in_place.data(), 37, w.data(), 1e-6f, in_place.data());
  EXPECT_EQ(in_place, y);
}

TEST(SwiGluRange, IsSiluOfTheGateTimesUp) {
  std::vector<float> gate = {-4.0f, -0.5f, 0.0f, 0.5f, 3.0f}, up = {1.0f, 2.0f, 3.0f, -1.0f, 0.5f};
  const std::vector<float> g0 = gate;
  SwiGluRange(gate.data(), up.data(), 5);
  for (int i = 0; i < 5; ++i) {
    const double silu = g0[i] / (1.0 + std::exp(-double{g0[i]}));
    EXPECT_NEAR(gate[i], silu * up[i], 1e-6) << i;
  }
}

TEST(GeluTanhRange, MatchesTheTanhApproximation) {
  std::vector<float> x = {-3.0f, -1.0f, 0.0f, 0.7f, 2.5f};
  const std::vector<float> x0 = x;
  GeluTanhRange(x.data(), 5);
  for (int i = 0; i < 5; ++i) {
    const double v = x0[i];
    const double want = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    EXPECT_NEAR(x[i], want, 1e-6) << i;
  }
}

ModelSpec Rotary(double theta, int64_t head_dim) {
  ModelSpec spec;
  spec.set_name("rotary");
  spec.set_hidden_size(head_dim * 4);
  spec.set_num_heads(4);
  spec.set_positional(ROTARY);
  spec.set_rope_theta(theta);
  return spec;
}

TEST(RotaryInverseFrequencies, FollowTheBaseAndHeadWidth) {
  const std::vector<double> f = RotaryInverseFrequencies(Rotary(10000, 128));
  ASSERT_EQ(f.size(), 64u);
  EXPECT_DOUBLE_EQ(f[0], 1.0);
  EXPECT_NEAR(f[1], std::pow(10000.0, -2.0 / 128), 1e-15);
  EXPECT_NEAR(f[63], std::pow(10000.0, -126.0 / 128), 1e-18);
}

TEST(RotaryInverseFrequencies, Llama31ScalingKeepsShortDividesLongBlendsBetween) {
  ModelSpec spec = Rotary(500000, 128);
  const std::vector<double> plain = RotaryInverseFrequencies(spec);
  RopeScaling* r = spec.mutable_rope_scaling();
  r->set_factor(8);
  r->set_low_freq_factor(1);
  r->set_high_freq_factor(4);
  r->set_original_max_positions(8192);
  const std::vector<double> scaled = RotaryInverseFrequencies(spec);
  int kept = 0, divided = 0, blended = 0;
  for (size_t i = 0; i < plain.size(); ++i) {
    const double wavelen = 2 * M_PI / plain[i];
    if (wavelen < 8192.0 / 4) {
      EXPECT_EQ(scaled[i], plain[i]) << i;
      ++kept;
    } else if (wavelen > 8192.0 / 1) {
      EXPECT_DOUBLE_EQ(scaled[i], plain[i] / 8) << i;
      ++divided;
    } else {
      EXPECT_LT(scaled[i], plain[i]) << i;
      EXPECT_GT(scaled[i], plain[i] / 8) << i;
      ++blended;
    }
  }
  // Llama-3.1-8B's 64 frequencies fall into all three bands.
  EXPECT_GT(kept, 0);
  EXPECT_GT(divided, 0);
  EXPECT_GT(blended, 0);
}

TEST(RotateHead, RotatesEachPairByItsPositionsAngle) {
  const ModelSpec spec = Rotary(10000, 8);
  const RotaryTable table(spec, 5);
  ASSERT_EQ(table.half(), 4);
  const std::vector<double> inv_freq = RotaryInverseFrequencies(spec);
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<float> x0 = x;
  RotateHead(x.data(), 8, table.cos(3), table.sin(3));
  for (int i = 0; i < 4; ++i) {
    const double a = 3 * inv_freq[i];
    EXPECT_NEAR(x[i], x0[i] * std::cos(a) - x0[i + 4] * std::sin(a), 1e-5) << i;
    EXPECT_NEAR(x[i + 4], x0[i + 4] * std::cos(a) + x0[i] * std::sin(a), 1e-5) << i;
  }
  // Position 0 is the identity.
  std::vector<float> y = x0;
  RotateHead(y.data(), 8, table.cos(0), table.sin(0));
  EXPECT_EQ(y, x0);
}

}  // namespace
}  // namespace zosched
