// CPU tests of the per-element math the CUDA kernels run (row_math.h):
// hand-computed values, and bitwise agreement with runtime/nn's label head
// (LayerNorm element, rstd, cross-entropy) where the two overlap.
#include "runtime/cuda/nn/row_math.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "models/model.pb.h"
#include "models/opt_for_test.h"
#include "runtime/dtype/float_bits.h"
#include "runtime/nn/decoder_forward.h"
#include "runtime/nn/param_layout.h"

namespace zosched {
namespace {

TEST(RowMath, ReluAsTheCpu) {
  EXPECT_EQ(Relu(2.5f), 2.5f);
  EXPECT_EQ(Relu(-2.5f), 0.0f);
  EXPECT_EQ(Bits(Relu(-0.0f)), Bits(-0.0f));  // std::max(-0.0f, 0.0f) is -0
  EXPECT_TRUE(std::isnan(Relu(NAN)));
}

TEST(RowMath, GeluTanhMatchesHandValues) {
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), evaluated in double.
  EXPECT_EQ(GeluTanh(0.0f), 0.0f);
  EXPECT_NEAR(GeluTanh(1.0f), 0.8411919906082768, 1e-6);
  EXPECT_NEAR(GeluTanh(-1.0f), -0.15880800939172324, 1e-6);
  EXPECT_NEAR(GeluTanh(2.0f), 1.954597694087775, 1e-6);
  EXPECT_NEAR(GeluTanh(-3.0f), -0.0036373920817729943, 1e-7);
  EXPECT_NEAR(GeluTanh(0.5f), 0.34571400982514394, 1e-6);
  EXPECT_EQ(GeluTanh(20.0f), 20.0f);  // tanh saturates to 1
}

TEST(RowMath, ActivateDispatches) {
  EXPECT_EQ(Activate(PointwiseActivation::kNone, -1.5f), -1.5f);
  EXPECT_EQ(Activate(PointwiseActivation::kRelu, -1.5f), 0.0f);
  EXPECT_EQ(Activate(PointwiseActivation::kGeluTanh, 1.0f), GeluTanh(1.0f));
}

TEST(RowMath, LayerNormMatchesHandValues) {
  // (3 - 1) * 0.5 * 2 + 1, every step exact.
  EXPECT_EQ(LayerNormElement(3.0f, 1.0f, 0.5f, 2.0f, 1.0f), 3.0f);
  EXPECT_EQ(LayerNormElement(-1.0f, 1.0f, 0.25f, 4.0f, -0.5f), -2.5f);
  // rstd = 1 / sqrt(var + 1e-5).
  EXPECT_NEAR(LayerNormRstd(0.0f), 1.0 / std::sqrt(1e-5), 1e-6 / std::sqrt(1e-5));
  EXPECT_FLOAT_EQ(LayerNormRstd(4.0f), static_cast<float>(1.0 / std::sqrt(4.0 + 1e-5)));
}

TEST(RowMath, CrossEntropyMatchesHandValues) {
  const float two_equal[] = {0.0f, 0.0f};
  EXPECT_FLOAT_EQ(CrossEntropyFromLogits(two_equal, 2, 0), static_cast<float>(std::log(2.0)));
  const float three[] = {1.0f, 2.0f, 3.0f};
  EXPECT_NEAR(CrossEntropyFromLogits(three, 3, 2), 0.40760596444438013, 1e-7);
  EXPECT_NEAR(CrossEntropyFromLogits(three, 3, 0), 2.40760596444438013, 1e-6);
  // The max subtraction keeps large logits finite.
  const float large[] = {1000.0f, 0.0f};
  EXPECT_FLOAT_EQ(CrossEntropyFromLogits(large, 2, 1), 1000.0f);
  EXPECT_EQ(CrossEntropyFromLogits(large, 2, 0), 0.0f);
}

// runtime/nn's summation order (decoder_forward.cc's FixedSum / FixedDot: 16
// interleaved partial sums, then a fixed tree), to rebuild its head's
// logits bitwise from row_math's elements.
float CpuFixedDot(const float* x, const float* y, int64_t n) {
  float lane[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int l = 0; l < 16; ++l) lane[l] += x[i + l] * y[i + l];
  }
  for (int l = 0; i < n; ++i, ++l) lane[l] += x[i] * y[i];
  for (int width = 8; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) lane[l] += lane[l + width];
  }
  return lane[0];
}

// A tiny OPT (h 24: one full lane group and a tail) with a final norm.
ModelSpec TinySpec() {
  // h 24, 1 layer, 2 heads, f 48, vocabulary 16, 8 positions.
  return OptForTest("row-math-opt", {24, 1, 2, 48, 16, 8});
}

TEST(RowMath, LabelHeadMatchesRuntimeNnBitwise) {
  const ModelSpec spec = TinySpec();
  const int64_t h = spec.hidden_size();
  const int examples = 3, seq = 5, n_labels = 3;
  const std::vector<int32_t> lengths = {5, 1, 3};
  const std::vector<int32_t> labels = {0, 2, 1};
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const PartLayout layout = HeadPartLayout(spec);
  std::vector<float> head(layout.total_floats);
  const int64_t ln_w = layout.Get("final_layer_norm.weight").offset;
  const int64_t ln_b = layout.Get("final_layer_norm.bias").offset;
  for (int64_t i = 0; i < h; ++i) {
    head[ln_w + i] = 1.0f + 0.1f * normal(rng);
    head[ln_b + i] = 0.1f * normal(rng);
  }
  std::vector<float> label_rows(n_labels * h), hidden(examples * seq * h);
  for (float& x : label_rows) x = 0.3f * normal(rng);
  for (float& x : hidden) x = 2.0f + normal(rng);  // a mean to subtract

  std::vector<float> workspace(HeadLossWorkspaceFloats(spec, examples, n_labels));
  std::vector<float> logits(examples * n_labels), losses(examples);
  LabelLogitsFromRows(spec, head.data(), label_rows.data(), hidden.data(), lengths.data(), examples,
                      seq, n_labels, workspace.data(), logits.data());
  HeadLossFromRows(spec, head.data(), label_rows.data(), hidden.data(), lengths.data(), examples,
                   seq, n_labels, labels.data(), workspace.data(), losses.data());

  const std::vector<float> ones(h, 1.0f);
  for (int e = 0; e < examples; ++e) {
    const float* x = hidden.data() + (e * seq + lengths[e] - 1) * h;
    const float mean = CpuFixedDot(x, ones.data(), h) / static_cast<float>(h);
    std::vector<float> centred(h), normed(h);
    for (int64_t i = 0; i < h; ++i) centred[i] = x[i] - mean;
    const float rstd =
        LayerNormRstd(CpuFixedDot(centred.data(), centred.data(), h) / static_cast<float>(h));
    for (int64_t i = 0; i < h; ++i) {
      normed[i] = LayerNormElement(x[i], mean, rstd, head[ln_w + i], head[ln_b + i]);
    }
    for (int l = 0; l < n_labels; ++l) {
      const float logit = CpuFixedDot(label_rows.data() + l * h, normed.data(), h);
      EXPECT_EQ(Bits(logit), Bits(logits[e * n_labels + l])) << "example " << e << " label " << l;
    }
    EXPECT_EQ(Bits(CrossEntropyFromLogits(logits.data() + e * n_labels, n_labels, labels[e])),
              Bits(losses[e]))
        << "example " << e;
  }
}

}  // namespace
}  // namespace zosched
