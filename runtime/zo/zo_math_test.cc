#include "runtime/zo/zo_math.h"

#include <cstdint>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/dtype/float_bits.h"
#include "runtime/zo/philox.h"

namespace zosched {
namespace {

// Each fp32 operation rounded on its own: `volatile` stores force the
// rounding of every intermediate, so these are the reference expressions.
float RoundedMul(float a, float b) {
  volatile float p = a * b;
  return p;
}
float RoundedAdd(float a, float b) {
  volatile float s = a + b;
  return s;
}

TEST(StreamIds, BlocksThenEmbeddingThenHead) {
  EXPECT_EQ(BlockStream(0), 0u);
  EXPECT_EQ(BlockStream(95), 95u);
  EXPECT_EQ(EmbeddingStream(96), 96u);
  EXPECT_EQ(HeadStream(96), 97u);
  // No part of a 96-layer model shares a stream with another.
  std::set<uint32_t> ids;
  for (int b = 0; b < 96; ++b) ids.insert(BlockStream(b));
  ids.insert(EmbeddingStream(96));
  ids.insert(HeadStream(96));
  EXPECT_EQ(ids.size(), 98u);
}

TEST(StepSeed, IsPhiloxOfTheStepUnderTheBaseSeed) {
  const uint64_t base = 0x0123456789abcdefull;
  const int64_t step = (int64_t{5} << 32) + 17;
  const Uint4 w = Philox4x32_10(Uint4{{17u, 5u, 0u, 0u}}, Uint2{{0x89abcdefu, 0x01234567u}});
  EXPECT_EQ(StepSeed(base, step), (uint64_t{w.v[1]} << 32) | w.v[0]);
}

TEST(StepSeed, DistinctAcrossStepsAndBaseSeeds) {
  std::set<uint64_t> seeds;
  for (int64_t step = 0; step < 20000; ++step) seeds.insert(StepSeed(42, step));
  EXPECT_EQ(seeds.size(), 20000u);
  EXPECT_NE(StepSeed(42, 0), StepSeed(43, 0));
  EXPECT_EQ(StepSeed(42, 123), StepSeed(42, 123));
}

TEST(Perturbed, IsThetaPlusSignedEpsTimesZWithTwoRoundings) {
  const float thetas[] = {0.5f, -1.25f, 3.0e-3f, 1234.5f, 0.0f};
  const float zs[] = {0.3f, -2.7f, 1.0e-7f, 5.7f};
  const float eps = 1e-3f;
  for (float theta : thetas) {
    for (float z : zs) {
      EXPECT_EQ(Bits(Perturbed(theta, z, eps, +1)), Bits(RoundedAdd(theta, RoundedMul(eps, z))));
      EXPECT_EQ(Bits(Perturbed(theta, z, eps, -1)), Bits(RoundedAdd(theta, RoundedMul(-eps, z))));
    }
  }
}

// Cases where a fused multiply-add gives different bits: if the build ever
// contracts a product into the following sum (theta + (sign*eps)*z,
// g*z + weight_decay*theta, theta - lr*d), these fail. a*b below is
// (1 + 2^-23)(1 - 2^-23) = 1 - 2^-46 exactly, which rounds to 1 in fp32.
// The inputs are read through volatile, each call its own, so that the
// compiler can neither fold them at compile time nor share one product
// between calls (a shared product is not fused): either would hide an FMA.
TEST(Perturbed, IsNotContractedIntoAnFma) {
  volatile float a = 1.0f + 0x1p-23f;
  volatile float b = 1.0f - 0x1p-23f;
  volatile float zero = 0.0f, one = 1.0f, minus_one = -1.0f, big = 0x1p40f;
  // theta + eps*z: -1 + round(a*b) = 0; fused: -2^-46.
  EXPECT_EQ(Perturbed(minus_one, a, b, +1), 0.0f);
  // theta - lr*(g*z): 1 - round(a*b) = 0; fused: 2^-46.
  EXPECT_EQ(Updated(one, a, b, one, zero, false), 0.0f);
  // d = g*z + wd*theta = round(a*b) - 1 = 0, so theta - lr*d = 1; fused d is
  // -2^-46 and the result 1 + 2^-6.
  EXPECT_EQ(Updated(one, a, big, b, minus_one, true), 1.0f);
}

TEST(Perturbed, PlusAndMinusComeFromTheUnperturbedTheta) {
  const float theta = 0.1f, z = 1.7f, eps = 1e-3f;
  const float plus = Perturbed(theta, z, eps, +1);
  const float minus = Perturbed(theta, z, eps, -1);
  EXPECT_GT(plus, theta);
  EXPECT_LT(minus, theta);
  EXPECT_NEAR(plus - minus, 2 * eps * z, 1e-7);
}

TEST(Updated, FollowsTheStatedExpressionOrder) {
  const float theta = 0.75f, z = -1.3f, lr = 1e-6f, g = 12.5f, wd = 0.01f;
  const float with_decay =
      RoundedAdd(theta, -RoundedMul(lr, RoundedAdd(RoundedMul(g, z), RoundedMul(wd, theta))));
  EXPECT_EQ(Bits(Updated(theta, z, lr, g, wd, true)), Bits(with_decay));
  const float without_decay = RoundedAdd(theta, -RoundedMul(lr, RoundedMul(g, z)));
  EXPECT_EQ(Bits(Updated(theta, z, lr, g, wd, false)), Bits(without_decay));
}

TEST(Updated, MovesAgainstTheGradientAlongZ) {
  EXPECT_LT(Updated(1.0f, 1.0f, 0.1f, 2.0f, 0.0f, false), 1.0f);
  EXPECT_GT(Updated(1.0f, -1.0f, 0.1f, 2.0f, 0.0f, false), 1.0f);
  EXPECT_FLOAT_EQ(Updated(1.0f, 0.0f, 0.1f, 2.0f, 0.5f, true), 0.95f);  // decay only
  EXPECT_EQ(Updated(1.0f, 0.0f, 0.1f, 2.0f, 0.5f, false), 1.0f);
}

TEST(ProjectedGradient, IsTheMeanOfCentralDifferences) {
  const float plus[] = {1.5f, 2.0f};
  const float minus[] = {1.0f, 1.0f};
  const float eps = 1e-3f;
  const double expected = (0.5 + 1.0) / (2.0 * (2.0 * static_cast<double>(eps)));
  EXPECT_EQ(ProjectedGradient(plus, minus, 2, eps), static_cast<float>(expected));
  EXPECT_EQ(ProjectedGradient(plus, minus, 1, eps),
            static_cast<float>(0.5 / (2.0 * static_cast<double>(eps))));
}

// The sum runs in double in example order and is rounded to float once:
// summing in float would lose the 1 between the two 1e8s.
TEST(ProjectedGradient, SumsInDoubleAndRoundsOnce) {
  const float plus[] = {1e8f, 1.0f, -1e8f};
  const float minus[] = {0.0f, 0.0f, 0.0f};
  EXPECT_EQ(ProjectedGradient(plus, minus, 3, 0.5f), static_cast<float>(1.0 / 3.0));
}

TEST(ProjectedGradient, MatchesTheCanonicalLoopBitwise) {
  std::vector<float> plus(16), minus(16);
  for (int e = 0; e < 16; ++e) {
    plus[e] = 0.6931f + 1e-4f * static_cast<float>((e * 7919) % 13);
    minus[e] = 0.6931f - 1e-4f * static_cast<float>((e * 104729) % 11);
  }
  const float eps = 1e-3f;
  double sum = 0.0;
  for (int e = 0; e < 16; ++e) sum += double{plus[e]} - double{minus[e]};
  const float expected = static_cast<float>(sum / (16.0 * (2.0 * double{eps})));
  EXPECT_EQ(Bits(ProjectedGradient(plus.data(), minus.data(), 16, eps)), Bits(expected));
}

// SPSA on a quadratic L(θ) = Σ θ_i^2 / 2: central differences of a quadratic
// are exact, so g is the directional derivative <∇L, z> = <θ, z> up to the
// fp32 rounding of θ± and of the losses.
TEST(ProjectedGradient, EqualsDirectionalDerivativeOfAQuadratic) {
  const float theta[3] = {0.5f, -1.0f, 2.0f};
  const float z[3] = {0.3f, 1.1f, -0.4f};
  const float eps = 1e-2f;
  double lp = 0, lm = 0;
  for (int i = 0; i < 3; ++i) {
    const double p = Perturbed(theta[i], z[i], eps, +1);
    const double m = Perturbed(theta[i], z[i], eps, -1);
    lp += p * p / 2;
    lm += m * m / 2;
  }
  const float loss_plus = static_cast<float>(lp), loss_minus = static_cast<float>(lm);
  const double directional = 0.5 * 0.3 + -1.0 * 1.1 + 2.0 * -0.4;
  EXPECT_NEAR(ProjectedGradient(&loss_plus, &loss_minus, 1, eps), directional, 1e-3);
}

// n-SPSA's seeds: direction 0 draws the step's own z (so one direction is
// MeZO's step), every other direction a z of its own.
TEST(DirectionSeed, DirectionZeroIsTheStepSeedAndTheOthersDiffer) {
  const uint64_t step = StepSeed(7, 12);
  EXPECT_EQ(DirectionSeed(step, 0), step);
  std::set<uint64_t> seeds;
  for (int d = 0; d < 64; ++d) seeds.insert(DirectionSeed(step, d));
  EXPECT_EQ(seeds.size(), 64u);
  EXPECT_NE(DirectionSeed(step, 1), DirectionSeed(StepSeed(7, 13), 1));
  EXPECT_NE(DirectionSeed(step, 1), StepSeed(7, 13));
}

// The update of several directions is θ - η((1/q) Σ g_i z_i + λθ), in the
// stated order; one direction gives Updated's bits.
TEST(DirectionsUpdate, AveragesTheDirectionsInOrderAndReducesToUpdated) {
  const float g[3] = {0.7f, -1.3f, 0.11f};
  const float z[3] = {1.5f, 0.25f, -2.0f};
  const float theta = 0.375f, lr = 1e-2f, wd = 0.1f;
  float sum = g[0] * z[0];
  sum = sum + g[1] * z[1];
  sum = sum + g[2] * z[2];
  const float mean = sum / 3.0f;
  const float want = theta - lr * (mean + wd * theta);
  EXPECT_EQ(UpdatedAlong(theta, DirectionsMean(DirectionsSum(g, z, 3), 3), lr, wd, true), want);
  for (bool decays : {false, true}) {
    EXPECT_EQ(UpdatedAlong(theta, DirectionsMean(DirectionsSum(g, z, 1), 1), lr, wd, decays),
              Updated(theta, z[0], lr, g[0], wd, decays));
  }
}

}  // namespace
}  // namespace zosched
