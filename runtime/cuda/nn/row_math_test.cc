// CPU tests of the per-element math the CUDA kernels run (row_math.h and
// runtime/nn/element_math.h): hand-computed values, and bitwise agreement
// with runtime/nn where the two overlap — the row kernels of the CPU
// forward (RmsNormRow, SwiGluRange, GeluTanhRange, RotateHead with the
// RotaryTable) and its label head (LayerNorm and RMSNorm final norms,
// cross-entropy) — given the statistics (a row's mean, rstd) computed as
// runtime/nn computes them. The kernels compute those statistics in
// another order, so on the GPU whole rows agree to rounding only.
#include "runtime/cuda/nn/row_math.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/family_for_test.h"
#include "models/model.pb.h"
#include "models/model_spec.h"
#include "models/opt_for_test.h"
#include "runtime/dtype/float_bits.h"
#include "runtime/nn/decoder_forward.h"
#include "runtime/nn/param_layout.h"
#include "runtime/nn/rotary_table.h"
#include "runtime/nn/row_kernels.h"

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
  // rstd = 1 / sqrt(var + eps).
  EXPECT_NEAR(LayerNormRstd(0.0f, 1e-5f), 1.0 / std::sqrt(1e-5), 1e-6 / std::sqrt(1e-5));
  EXPECT_FLOAT_EQ(LayerNormRstd(4.0f, 1e-5f), static_cast<float>(1.0 / std::sqrt(4.0 + 1e-5)));
  EXPECT_EQ(LayerNormRstd(0.25f, 0.0f), 2.0f);
}

TEST(RowMath, NormElementDispatchesOnTheKind) {
  EXPECT_EQ(NormElement(NormKind::kLayerNorm, 3.0f, 1.0f, 0.5f, 2.0f, 1.0f),
            LayerNormElement(3.0f, 1.0f, 0.5f, 2.0f, 1.0f));
  // RMSNorm ignores the mean and the bias: 3 · 0.5 · 2.
  EXPECT_EQ(NormElement(NormKind::kRmsNorm, 3.0f, 1.0f, 0.5f, 2.0f, 1.0f), 3.0f);
  EXPECT_EQ(NormElement(NormKind::kNone, 3.0f, 1.0f, 0.5f, 2.0f, 1.0f), 3.0f);
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

// runtime/nn's summation order (decoder_forward.cc's FixedSum / FixedDot,
// row_kernels.cc's RmsNormRow: 16 interleaved partial sums, then a fixed
// tree), to rebuild its results bitwise from the kernels' elements. This
// file is built without FMA (like row_kernels.cc); hd.h's primitives keep
// every product and sum rounded on its own.
float CpuFixedDot(const float* x, const float* y, int64_t n) {
  float lane[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int l = 0; l < 16; ++l) lane[l] = hd::AddRn(lane[l], hd::MulRn(x[i + l], y[i + l]));
  }
  for (int l = 0; i < n; ++i, ++l) lane[l] = hd::AddRn(lane[l], hd::MulRn(x[i], y[i]));
  for (int width = 8; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) lane[l] = hd::AddRn(lane[l], lane[l + width]);
  }
  return lane[0];
}

// RMSNorm's rstd of x[0 .. n) as RmsNormRow computes it.
float CpuRmsRstd(const float* x, int64_t n, float eps) {
  return RmsNormRstd(hd::DivRn(CpuFixedDot(x, x, n), static_cast<float>(n)), eps);
}

std::vector<float> Normal(size_t n, float mean, float sd, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(mean, sd);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng);
  return x;
}

TEST(ElementMath, RmsNormElementGivesRmsNormRowsBits) {
  // Widths below, at and past one 16-lane group; a head (128) and a tail.
  for (int64_t n : {5, 16, 37, 128, 200}) {
    SCOPED_TRACE(n);
    const std::vector<float> x = Normal(n, 0.5f, 2.0f, 3 + n), w = Normal(n, 1.0f, 0.1f, 4 + n);
    for (float eps : {1e-5f, 1e-6f}) {
      std::vector<float> cpu(n);
      RmsNormRow(x.data(), n, w.data(), eps, cpu.data());
      const float rstd = CpuRmsRstd(x.data(), n, eps);
      int64_t differ = 0;
      for (int64_t i = 0; i < n; ++i) {
        differ += Bits(NormElement(NormKind::kRmsNorm, x[i], 0.0f, rstd, w[i], 0.0f)) !=
                  Bits(cpu[i]);
      }
      EXPECT_EQ(differ, 0) << "eps " << eps;
    }
  }
}

TEST(ElementMath, SwiGluAndGeluGiveTheRangeKernelsBits) {
  const std::vector<float> gate = Normal(1000, 0.0f, 3.0f, 5), up = Normal(1000, 0.0f, 2.0f, 6);
  std::vector<float> swiglu = gate, gelu = gate;
  SwiGluRange(swiglu.data(), up.data(), 1000);
  GeluTanhRange(gelu.data(), 1000);
  int64_t differ = 0;
  for (int i = 0; i < 1000; ++i) {
    differ += Bits(SwiGlu(gate[i], up[i])) != Bits(swiglu[i]);
    differ += Bits(Activate(PointwiseActivation::kGeluTanh, gate[i])) != Bits(gelu[i]);
  }
  EXPECT_EQ(differ, 0);
  // silu(x) = x / (1 + e^-x).
  EXPECT_EQ(SwiGlu(0.0f, 5.0f), 0.0f);
  EXPECT_NEAR(SwiGlu(1.0f, 2.0f), 2.0 / (1.0 + std::exp(-1.0)), 1e-6);
}

// The kernel reads position p's angles at rotary + p · d: cos [d/2], then
// sin [d/2] (head_norm_rotary.h).
TEST(ElementMath, RotaryTableValuesAreLaidOutAsTheKernelReadsThem) {
  const ModelSpec spec = FamilyForTest(LLAMA, "rotary-layout", {16, 1, 2, 32, 16, 12});
  const RotaryTable table(spec, 12);
  const int64_t d = 8, half = 4;
  ASSERT_EQ(table.half(), half);
  ASSERT_EQ(table.values().size(), static_cast<size_t>(12 * d));
  for (int p = 0; p < 12; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      EXPECT_EQ(Bits(table.values()[p * d + i]), Bits(table.cos(p)[i]));
      EXPECT_EQ(Bits(table.values()[p * d + half + i]), Bits(table.sin(p)[i]));
    }
  }
}

// Qwen3's QK-norm then the rotary embedding, pair by pair as the kernel
// runs them, against RmsNormRow then RotateHead (runtime/nn's order), and
// each alone, at every position of a LLaMA-3.1-scaled and a Qwen table.
TEST(ElementMath, NormRotatePairGivesRmsNormRowThenRotateHeadsBits) {
  for (Family family : {LLAMA, QWEN3}) {
    const ModelSpec spec = FamilyForTest(family, "rotary", {64, 1, 4, 64, 16, 24});
    const int64_t d = HeadDim(spec), half = d / 2;
    SCOPED_TRACE(Family_Name(family) + " d " + std::to_string(d));
    const RotaryTable table(spec, 24);
    const float eps = NormEps(spec);
    const std::vector<float> w = Normal(d, 1.0f, 0.2f, 9);
    int64_t differ = 0;
    for (int p = 0; p < 24; ++p) {
      const std::vector<float> x = Normal(d, 0.0f, 1.5f, 100 + p);
      const float rstd = CpuRmsRstd(x.data(), d, eps);
      std::vector<float> both(d), rotated = x, normed(d);
      RmsNormRow(x.data(), d, w.data(), eps, both.data());
      RotateHead(both.data(), d, table.cos(p), table.sin(p));
      RotateHead(rotated.data(), d, table.cos(p), table.sin(p));
      RmsNormRow(x.data(), d, w.data(), eps, normed.data());
      const float* c = table.cos(p);
      const float* s = table.sin(p);
      for (int64_t i = 0; i < half; ++i) {
        float y1, y2;
        NormRotatePair(x[i], x[i + half], true, rstd, w[i], w[i + half], true, c[i], s[i], &y1,
                       &y2);
        differ += Bits(y1) != Bits(both[i]) || Bits(y2) != Bits(both[i + half]);
        NormRotatePair(x[i], x[i + half], false, 0.0f, 0.0f, 0.0f, true, c[i], s[i], &y1, &y2);
        differ += Bits(y1) != Bits(rotated[i]) || Bits(y2) != Bits(rotated[i + half]);
        NormRotatePair(x[i], x[i + half], true, rstd, w[i], w[i + half], false, 0.0f, 0.0f, &y1,
                       &y2);
        differ += Bits(y1) != Bits(normed[i]) || Bits(y2) != Bits(normed[i + half]);
      }
    }
    EXPECT_EQ(differ, 0);
  }
}

// A tiny OPT (h 24: one full lane group and a tail) with a LayerNorm final
// norm; a tiny LLaMA (RMSNorm final norm, untied head) and Qwen2 (RMSNorm,
// tied).
std::vector<ModelSpec> HeadSpecs() {
  // h 24, 1 layer, 2 heads, f 48, vocabulary 16, 8 positions.
  const OptTestSizes sizes = {24, 1, 2, 48, 16, 8};
  return {OptForTest("row-math-opt", sizes), FamilyForTest(LLAMA, "row-math-llama", sizes),
          FamilyForTest(QWEN2, "row-math-qwen2", sizes)};
}

TEST(RowMath, LabelHeadMatchesRuntimeNnBitwise) {
  for (const ModelSpec& spec : HeadSpecs()) {
    SCOPED_TRACE(spec.name());
    const int64_t h = spec.hidden_size();
    const int examples = 3, seq = 5, n_labels = 3;
    const std::vector<int32_t> lengths = {5, 1, 3};
    const std::vector<int32_t> labels = {0, 2, 1};
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const PartLayout layout = HeadPartLayout(spec);
    std::vector<float> head(layout.total_floats);
    const NormKind kind = spec.norm() == RMS_NORM ? NormKind::kRmsNorm : NormKind::kLayerNorm;
    const int64_t norm_w = layout.Get(TensorSlot::kFinalNormWeight).offset;
    const TensorSlice* bias = layout.Find(TensorSlot::kFinalNormBias);
    ASSERT_EQ(bias != nullptr, kind == NormKind::kLayerNorm);
    for (int64_t i = 0; i < h; ++i) {
      head[norm_w + i] = 1.0f + 0.1f * normal(rng);
      if (bias != nullptr) head[bias->offset + i] = 0.1f * normal(rng);
    }
    std::vector<float> label_rows(n_labels * h), hidden(examples * seq * h);
    for (float& x : label_rows) x = 0.3f * normal(rng);
    for (float& x : hidden) x = 2.0f + normal(rng);  // a mean to subtract

    std::vector<float> workspace(HeadLossWorkspaceFloats(spec, examples, n_labels));
    std::vector<float> logits(examples * n_labels), losses(examples);
    LabelLogitsFromRows(spec, head.data(), label_rows.data(), hidden.data(), lengths.data(),
                        examples, seq, n_labels, workspace.data(), logits.data());
    HeadLossFromRows(spec, head.data(), label_rows.data(), hidden.data(), lengths.data(),
                     examples, seq, n_labels, labels.data(), workspace.data(), losses.data());

    const std::vector<float> ones(h, 1.0f);
    const float eps = NormEps(spec);
    for (int e = 0; e < examples; ++e) {
      const float* x = hidden.data() + (e * seq + lengths[e] - 1) * h;
      float mean = 0.0f, rstd = 0.0f;
      if (kind == NormKind::kLayerNorm) {
        mean = CpuFixedDot(x, ones.data(), h) / static_cast<float>(h);
        std::vector<float> centred(h);
        for (int64_t i = 0; i < h; ++i) centred[i] = x[i] - mean;
        rstd = LayerNormRstd(CpuFixedDot(centred.data(), centred.data(), h) /
                                 static_cast<float>(h),
                             eps);
      } else {
        rstd = CpuRmsRstd(x, h, eps);
      }
      std::vector<float> normed(h);
      for (int64_t i = 0; i < h; ++i) {
        normed[i] = NormElement(kind, x[i], mean, rstd, head[norm_w + i],
                                bias != nullptr ? head[bias->offset + i] : 0.0f);
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
}

// The causal mask of attention's scores, as runtime/nn's softmax over a
// prefix admits them: query t sees the prefix's keys and keys 0 .. t.
TEST(RowMath, CausalVisibleKeysWithoutAndWithAPrefix) {
  constexpr int64_t kSeq = 6;
  for (int64_t i = 0; i < kSeq; ++i) {
    EXPECT_EQ(CausalVisibleKeys(i, /*prefix=*/0, /*length=*/4, kSeq), i < 4 ? i + 1 : 0) << i;
  }
  constexpr int64_t kPrefix = 3;
  for (int64_t i = 0; i < kPrefix + kSeq; ++i) {
    const int64_t t = i - kPrefix;  // the query's position among the real tokens
    const int64_t want = t < 0 ? 0 : t < 4 ? kPrefix + t + 1 : 0;
    EXPECT_EQ(CausalVisibleKeys(i, kPrefix, /*length=*/4, kSeq), want) << i;
  }
  // A full example's last query sees every key.
  EXPECT_EQ(CausalVisibleKeys(kPrefix + kSeq - 1, kPrefix, kSeq, kSeq), kPrefix + kSeq);
  // A length outside [1, seq] marks every row, prefix rows included.
  for (int64_t length : {int64_t{0}, int64_t{-1}, kSeq + 1}) {
    EXPECT_EQ(CausalVisibleKeys(0, kPrefix, length, kSeq), -1) << length;
    EXPECT_EQ(CausalVisibleKeys(kPrefix, kPrefix, length, kSeq), -1) << length;
  }
}

}  // namespace
}  // namespace zosched
