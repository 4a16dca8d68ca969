// MeZO's SPSA estimate against finite differences on a tiny OPT model, with
// the runtime's own math (runtime/nn forward, runtime/zo perturbation and
// projected gradient):
// 1. for each seed, g = (L(θ+εz) - L(θ-εz)) / 2ε equals the directional
//    derivative ∇L·z from a Richardson-extrapolated central difference;
// 2. statistically, E_z[g z] = ∇L: with ∇L from per-coordinate central
//    differences, the mean of g (z·∇L) / |∇L|² over 600 seeds is 1 within 4
//    standard errors, and the averaged estimate points along ∇L.
#include <cmath>
#include <vector>

#include "base/textproto.h"
#include "gtest/gtest.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "runtime/nn/decoder_forward.h"
#include "runtime/zo/normal.h"
#include "runtime/zo/zo_math.h"

namespace zosched {
namespace {

constexpr int kExamples = 4, kSeq = 8;

class TinyModel {
 public:
  TinyModel() {
    EXPECT_TRUE(ParseTextProto(R"pb(
      name: "spsa-tiny" family: OPT hidden_size: 16 num_layers: 1 num_heads: 2
      ffn_size: 32 vocab_size: 40 max_positions: 16 activation: RELU norm: LAYER_NORM
      norm_placement: PRE_NORM positional: LEARNED_OPT_OFFSET tied_lm_head: true
      linear_bias: true final_norm: true weight_dtype: FP32
    )pb", "inline", &spec_).ok());
    sizes_ = {EmbeddingParams(spec_), BlockParams(spec_),
              FinalNormParams(spec_) + HeadParams(spec_)};
    streams_ = {EmbeddingStream(1), BlockStream(0), HeadStream(1)};
    // Random θ (0.3 · z: larger than OPT's init so the loss has curvature
    // worth testing), tokens and labels.
    for (int p = 0; p < 3; ++p) {
      theta_.emplace_back(sizes_[p]);
      FillNormals(99, 100 + p, 0, sizes_[p], theta_[p].data());
      for (float& t : theta_[p]) t *= 0.3f;
    }
    for (int i = 0; i < kExamples * kSeq; ++i) tokens_.push_back((i * 7 + 3) % 40);
    lengths_ = {8, 5, 8, 3};
    labels_ = {0, 1, 1, 0};
  }

  // Per-example losses at θ + sign·h·d, d the normal direction of `seed`.
  std::vector<float> Losses(uint64_t seed, float h, int sign) const {
    std::vector<std::vector<float>> moved(3);
    for (int p = 0; p < 3; ++p) {
      moved[p].resize(sizes_[p]);
      std::vector<float> d(sizes_[p]);
      FillNormals(seed, streams_[p], 0, sizes_[p], d.data());
      for (int64_t i = 0; i < sizes_[p]; ++i) moved[p][i] = Perturbed(theta_[p][i], d[i], h, sign);
    }
    return LossesAt(moved);
  }

  // Per-example losses at the given parameters.
  std::vector<float> LossesAt(const std::vector<std::vector<float>>& parts) const {
    std::vector<float> hidden(kExamples * kSeq * spec_.hidden_size());
    std::vector<float> workspace(BlockWorkspaceFloats(spec_, kExamples, kSeq));
    Embed(spec_, parts[0].data(), tokens_.data(), kExamples, kSeq, hidden.data());
    BlockForward(spec_, parts[1].data(), lengths_.data(), kExamples, kSeq, hidden.data(),
                 workspace.data());
    std::vector<float> losses(kExamples);
    const int32_t label_words[] = {5, 7};
    HeadLoss(spec_, parts[2].data(), parts[0].data(), hidden.data(), lengths_.data(),
             kExamples, kSeq, label_words, 2, labels_.data(), losses.data());
    return losses;
  }

  static double Mean(const std::vector<float>& losses) {
    double sum = 0;
    for (float l : losses) sum += l;
    return sum / losses.size();
  }

  // ∇L of the mean loss by central differences, one coordinate at a time.
  std::vector<std::vector<double>> Gradient(float h) const {
    std::vector<std::vector<double>> grad(3);
    std::vector<std::vector<float>> moved = theta_;
    for (int p = 0; p < 3; ++p) {
      grad[p].resize(sizes_[p]);
      for (int64_t i = 0; i < sizes_[p]; ++i) {
        const float t = theta_[p][i];
        moved[p][i] = t + h;
        const double plus = Mean(LossesAt(moved));
        moved[p][i] = t - h;
        const double minus = Mean(LossesAt(moved));
        moved[p][i] = t;
        grad[p][i] = (plus - minus) / (static_cast<double>(t + h) - static_cast<double>(t - h));
      }
    }
    return grad;
  }

  // z·w for the direction z of `seed` and a vector w over all parameters.
  double Dot(uint64_t seed, const std::vector<std::vector<double>>& w) const {
    double dot = 0;
    for (int p = 0; p < 3; ++p) {
      std::vector<float> z(sizes_[p]);
      FillNormals(seed, streams_[p], 0, sizes_[p], z.data());
      for (int64_t i = 0; i < sizes_[p]; ++i) dot += z[i] * w[p][i];
    }
    return dot;
  }

  // The SPSA projected gradient for `seed`.
  float Spsa(uint64_t seed, float eps) const {
    const std::vector<float> plus = Losses(seed, eps, +1), minus = Losses(seed, eps, -1);
    return ProjectedGradient(plus.data(), minus.data(), kExamples, eps);
  }

  // ∇L·d by central differences at steps h and h/2, Richardson-combined
  // (error O(h^4)), in double from the fp32 losses.
  double DirectionalDerivative(uint64_t seed, float h) const {
    auto central = [&](float step) {
      return (Mean(Losses(seed, step, +1)) - Mean(Losses(seed, step, -1))) / (2.0 * step);
    };
    return (4 * central(h / 2) - central(h)) / 3;
  }

 private:
  ModelSpec spec_;
  std::vector<int64_t> sizes_;
  std::vector<uint32_t> streams_;
  std::vector<std::vector<float>> theta_;
  std::vector<int32_t> tokens_, lengths_, labels_;
};

TEST(Spsa, EachEstimateIsTheDirectionalDerivative) {
  TinyModel model;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    // A small ε keeps ReLU kinks out of [θ-εz, θ+εz] (|z| is about 60 here).
    const double g = model.Spsa(seed, 2e-4f);
    const double d = model.DirectionalDerivative(seed, 4e-4f);
    // Tolerance: fp32 loss rounding (~1e-7) over 2ε is ~3e-4 absolute; the
    // O(ε²) term stays within 2 %.
    EXPECT_NEAR(g, d, 1e-3 + 0.02 * std::fabs(d)) << "seed " << seed;
  }
}

TEST(Spsa, IsAnUnbiasedGradientEstimate) {
  TinyModel model;
  const std::vector<std::vector<double>> grad = model.Gradient(1e-2f);
  double norm_sq = 0;
  for (const auto& part : grad) {
    for (double x : part) norm_sq += x * x;
  }
  ASSERT_GT(norm_sq, 1e-6);
  // g ≈ z·∇L, so g (z·∇L) / |∇L|² has mean 1 and variance about 2.
  const int seeds = 600;
  double sum = 0, sum_sq = 0;
  for (int s = 1; s <= seeds; ++s) {
    const double sample = model.Spsa(s, 1e-3f) * model.Dot(s, grad) / norm_sq;
    sum += sample;
    sum_sq += sample * sample;
  }
  const double mean = sum / seeds;
  const double se = std::sqrt((sum_sq / seeds - mean * mean) / (seeds - 1));
  EXPECT_NEAR(mean, 1.0, 4 * se) << "mean " << mean << " se " << se;
  EXPECT_LT(se, 0.1) << "too noisy for the test to bite";
}

}  // namespace
}  // namespace zosched
