#include "runtime/nn/decoder_forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "models/model_zoo.h"
#include "models/family_for_test.h"
#include "models/model_tensors.h"
#include "models/opt_for_test.h"
#include "runtime/nn/param_layout.h"
#include "runtime/nn/rotary_table.h"
#include "runtime/nn/thread_team.h"

namespace zosched {
namespace {

// A tiny random OPT: h 32, 4 heads (d 8), f 64, V 50, 2 blocks, P 16.
ModelSpec TinySpec() {
  // h 32, 2 layers, 4 heads, f 64, vocabulary 50, 16 positions.
  return OptForTest("tiny-opt", {32, 2, 4, 64, 50, 16});
}

// A wider one that exercises Eigen's blocking: h 200 and f 600 are not
// multiples of the GEMM kernels' row panels (24 or 48 floats), f exceeds
// the depth block, d 40.
ModelSpec MediumSpec() {
  ModelSpec spec = TinySpec();
  spec.set_name("medium-opt");
  spec.set_hidden_size(200);
  spec.set_num_heads(5);
  spec.set_ffn_size(600);
  spec.set_vocab_size(70);
  spec.set_num_layers(1);
  spec.set_max_positions(24);
  return spec;
}

// The tiny model of each family (FamilyForTest): GPT-2, LLaMA (GQA, untied,
// Llama-3.1 scaling), Qwen2 (q/k/v biases), Qwen3 (QK-norm, q 2h wide).
std::vector<ModelSpec> FamilySpecs() {
  std::vector<ModelSpec> specs;
  for (Family family : {GPT2, LLAMA, QWEN2, QWEN3}) {
    specs.push_back(FamilyForTest(family, "tiny-" + Family_Name(family), {32, 2, 4, 64, 50, 16}));
  }
  return specs;
}

// Every model the forward tests run: OPT tiny and medium, then each family.
std::vector<ModelSpec> AllSpecs() {
  std::vector<ModelSpec> specs = {TinySpec(), MediumSpec()};
  for (ModelSpec& spec : FamilySpecs()) specs.push_back(std::move(spec));
  return specs;
}

bool IsNormSlot(TensorSlot slot) {
  switch (slot) {
    case TensorSlot::kAttnNormWeight: case TensorSlot::kAttnNormBias:
    case TensorSlot::kFfnNormWeight: case TensorSlot::kFfnNormBias:
    case TensorSlot::kFinalNormWeight: case TensorSlot::kFinalNormBias:
    case TensorSlot::kQNorm: case TensorSlot::kKNorm:
      return true;
    default:
      return false;
  }
}

bool IsNormWeightSlot(TensorSlot slot) {
  return slot == TensorSlot::kAttnNormWeight || slot == TensorSlot::kFfnNormWeight ||
         slot == TensorSlot::kFinalNormWeight || slot == TensorSlot::kQNorm ||
         slot == TensorSlot::kKNorm;
}

// The flat parts of a model with random weights.
struct Model {
  ModelSpec spec;
  std::vector<float> embedding;
  std::vector<std::vector<float>> blocks;
  std::vector<float> head;
};

void Fill(const PartLayout& layout, std::mt19937* rng,
          std::vector<float>* part) {
  part->assign(layout.total_floats, 0.0f);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const TensorSlice& t : layout.tensors) {
    const bool is_norm = IsNormSlot(t.slot);
    const bool is_bias = t.shape.size() == 1 && !is_norm;
    const bool is_weight_norm = IsNormWeightSlot(t.slot);
    const bool is_embedding =
        t.slot == TensorSlot::kTokenTable || t.slot == TensorSlot::kPositionTable;
    // Matrices ~ N(0, 1/in) keep activations O(1); embeddings (and an
    // untied head) ~ N(0, 0.3²) keep the head's logits O(1-10), as in
    // trained models. GPT-2's Conv1D matrices are [in, out].
    const int64_t in = t.shape.size() == 2 ? t.shape[1] : 1;
    const float scale = is_bias                                ? 0.1f
                        : is_norm                              ? 0.1f
                        : is_embedding || t.slot == TensorSlot::kLmHead ? 0.3f
                        : 1.0f / std::sqrt(static_cast<float>(in));
    for (int64_t i = 0; i < t.elements(); ++i) {
      (*part)[t.offset + i] =
          (is_weight_norm ? 1.0f : 0.0f) + scale * normal(*rng);
    }
  }
}

Model RandomModel(const ModelSpec& spec, uint32_t seed = 7) {
  Model m;
  m.spec = spec;
  std::mt19937 rng(seed);
  Fill(EmbeddingPartLayout(spec), &rng, &m.embedding);
  m.blocks.resize(spec.num_layers());
  for (auto& block : m.blocks) Fill(BlockPartLayout(spec), &rng, &block);
  Fill(HeadPartLayout(spec), &rng, &m.head);
  return m;
}

// Runs Embed and every block; returns the last hidden states
// [examples * seq * h]. `offset` shifts the buffers off their allocator
// alignment.
std::vector<float> Forward(const Model& m, const std::vector<int32_t>& tokens,
                           const std::vector<int32_t>& lengths, int seq,
                           int offset = 0) {
  const int examples = static_cast<int>(lengths.size());
  const int64_t h = m.spec.hidden_size();
  std::vector<float> storage(offset + examples * seq * h);
  float* hidden = storage.data() + offset;
  Embed(m.spec, m.embedding.data(), tokens.data(), examples, seq, hidden);
  // Exactly the advertised workspace, so that ASan catches an overrun.
  std::vector<float> workspace(offset +
                               BlockWorkspaceFloats(m.spec, examples, seq));
  for (const auto& block : m.blocks) {
    BlockForward(m.spec, block.data(), lengths.data(), examples, seq, hidden,
                 workspace.data() + offset);
  }
  return std::vector<float>(hidden, hidden + examples * seq * h);
}

std::vector<float> Losses(const Model& m, const std::vector<float>& hidden,
                          const std::vector<int32_t>& lengths, int seq,
                          const std::vector<int32_t>& labels) {
  const std::vector<int32_t> label_words = {3, 17, 41};
  std::vector<float> losses(lengths.size());
  HeadLoss(m.spec, m.head.data(), m.embedding.data(), hidden.data(),
           lengths.data(), static_cast<int>(lengths.size()), seq,
           label_words.data(), 3, labels.data(), losses.data());
  return losses;
}

// ---------------------------------------------------------------------------
// Naive reference: one example, plain loops, double accumulation.

struct Reference {
  std::vector<std::vector<double>> hidden;     // [L][h] after the last block
  std::vector<double> label_logits;            // at L-1
  std::vector<std::vector<double>> lm_logits;  // [L][V]
};

// The norm of `spec` (LayerNorm or RMSNorm, NormEps) of one row; w ==
// nullptr: none.
std::vector<double> RefNorm(const ModelSpec& spec, const std::vector<double>& x, const float* w,
                            const float* b) {
  if (w == nullptr) return x;
  const size_t n = x.size();
  const double eps = NormEps(spec);
  std::vector<double> y(n);
  if (spec.norm() == RMS_NORM) {
    double sum_sq = 0;
    for (double v : x) sum_sq += v * v;
    for (size_t i = 0; i < n; ++i) y[i] = x[i] / std::sqrt(sum_sq / n + eps) * w[i];
    return y;
  }
  double mean = 0, var = 0;
  for (double v : x) mean += v;
  mean /= n;
  for (double v : x) var += (v - mean) * (v - mean);
  var /= n;
  for (size_t i = 0; i < n; ++i) {
    y[i] = (x[i] - mean) / std::sqrt(var + eps) * w[i] + b[i];
  }
  return y;
}

// y = W x + b, W [out, in] row-major, or [in, out] when `in_out`.
std::vector<double> RefLinear(const std::vector<double>& x, const float* w,
                              const float* b, int64_t out, bool in_out = false) {
  const int64_t in = x.size();
  std::vector<double> y(out);
  for (int64_t o = 0; o < out; ++o) {
    double acc = b == nullptr ? 0.0 : b[o];
    for (int64_t i = 0; i < in; ++i) {
      acc += double{in_out ? w[i * out + o] : w[o * in + i]} * x[i];
    }
    y[o] = acc;
  }
  return y;
}

// Rotates each d-wide head of `x` by position p (rotate_half convention).
void RefRotate(const ModelSpec& spec, int p, std::vector<double>* x) {
  const std::vector<double> inv_freq = RotaryInverseFrequencies(spec);
  const int64_t d = HeadDim(spec), half = d / 2;
  for (size_t head = 0; head * d < x->size(); ++head) {
    double* v = x->data() + head * d;
    for (int64_t i = 0; i < half; ++i) {
      const double c = std::cos(p * inv_freq[i]), s = std::sin(p * inv_freq[i]);
      const double x1 = v[i], x2 = v[i + half];
      v[i] = x1 * c - x2 * s;
      v[i + half] = x2 * c + x1 * s;
    }
  }
}

// RMS-normalises each d-wide head of `x` with weight w [d].
void RefHeadNorm(const ModelSpec& spec, const float* w, std::vector<double>* x) {
  const int64_t d = HeadDim(spec);
  for (size_t head = 0; head * d < x->size(); ++head) {
    std::vector<double> one(x->begin() + head * d, x->begin() + (head + 1) * d);
    double sum_sq = 0;
    for (double v : one) sum_sq += v * v;
    for (int64_t i = 0; i < d; ++i) {
      (*x)[head * d + i] = one[i] / std::sqrt(sum_sq / d + NormEps(spec)) * w[i];
    }
  }
}

Reference RunReference(const Model& m, const int32_t* tokens, int L,
                       const std::vector<int32_t>& label_words) {
  const ModelSpec& spec = m.spec;
  const int64_t h = spec.hidden_size(), f = spec.ffn_size();
  const int64_t heads = spec.num_heads(), d = HeadDim(spec);
  const int64_t group = heads / KvHeads(spec);
  const int64_t qw = QueryWidth(spec), kvw = KvWidth(spec);
  const int64_t e_dim = EmbedDim(spec), vocab = spec.vocab_size();
  const bool in_out = WeightsInOut(spec);
  const PartLayout el = EmbeddingPartLayout(spec);
  const float* embed_tokens = m.embedding.data() + el.Get(TensorSlot::kTokenTable).offset;
  const TensorSlice* positions = el.Find(TensorSlot::kPositionTable);
  const TensorSlice* project_in = el.Find(TensorSlot::kProjectIn);

  std::vector<std::vector<double>> x(L);
  for (int t = 0; t < L; ++t) {
    std::vector<double> word(embed_tokens + tokens[t] * e_dim,
                             embed_tokens + (tokens[t] + 1) * e_dim);
    if (project_in != nullptr) {
      word =
          RefLinear(word, m.embedding.data() + project_in->offset, nullptr, h);
    }
    x[t] = word;
    if (positions == nullptr) continue;
    const int64_t row = t + (spec.positional() == LEARNED_OPT_OFFSET ? 2 : 0);
    for (int64_t i = 0; i < h; ++i) {
      x[t][i] += m.embedding[positions->offset + row * h + i];
    }
  }

  const PartLayout bl = BlockPartLayout(spec);
  for (const auto& block : m.blocks) {
    auto p = [&](TensorSlot slot) -> const float* {
      const TensorSlice* t = bl.Find(slot);
      return t == nullptr ? nullptr : block.data() + t->offset;
    };
    std::vector<std::vector<double>> q(L), k(L), v(L);
    for (int t = 0; t < L; ++t) {
      const std::vector<double> n =
          RefNorm(spec, x[t], p(TensorSlot::kAttnNormWeight), p(TensorSlot::kAttnNormBias));
      if (p(TensorSlot::kQkvWeight) != nullptr) {
        const std::vector<double> qkv = RefLinear(n, p(TensorSlot::kQkvWeight),
                                                  p(TensorSlot::kQkvBias), qw + 2 * kvw, in_out);
        q[t].assign(qkv.begin(), qkv.begin() + qw);
        k[t].assign(qkv.begin() + qw, qkv.begin() + qw + kvw);
        v[t].assign(qkv.begin() + qw + kvw, qkv.end());
      } else {
        q[t] = RefLinear(n, p(TensorSlot::kQWeight), p(TensorSlot::kQBias), qw, in_out);
        k[t] = RefLinear(n, p(TensorSlot::kKWeight), p(TensorSlot::kKBias), kvw, in_out);
        v[t] = RefLinear(n, p(TensorSlot::kVWeight), p(TensorSlot::kVBias), kvw, in_out);
      }
      if (spec.qk_norm()) {
        RefHeadNorm(spec, p(TensorSlot::kQNorm), &q[t]);
        RefHeadNorm(spec, p(TensorSlot::kKNorm), &k[t]);
      }
      if (spec.positional() == ROTARY) {
        RefRotate(spec, t, &q[t]);
        RefRotate(spec, t, &k[t]);
      }
      for (double& qi : q[t]) qi /= std::sqrt(static_cast<double>(d));
    }
    std::vector<std::vector<double>> attn_out(L);
    for (int t = 0; t < L; ++t) {
      std::vector<double> ctx(qw, 0.0);
      for (int64_t hd = 0; hd < heads; ++hd) {
        const int64_t kvh = hd / group;
        std::vector<double> s(t + 1);
        double max = -1e300;
        for (int j = 0; j <= t; ++j) {
          double acc = 0;
          for (int64_t i = 0; i < d; ++i)
            acc += q[t][hd * d + i] * k[j][kvh * d + i];
          s[j] = acc;
          max = std::max(max, acc);
        }
        double sum = 0;
        for (double& sj : s) sum += (sj = std::exp(sj - max));
        for (int j = 0; j <= t; ++j) {
          for (int64_t i = 0; i < d; ++i)
            ctx[hd * d + i] += s[j] / sum * v[j][kvh * d + i];
        }
      }
      attn_out[t] = RefLinear(ctx, p(TensorSlot::kOWeight), p(TensorSlot::kOBias), h, in_out);
    }
    for (int t = 0; t < L; ++t) {
      for (int64_t i = 0; i < h; ++i) x[t][i] += attn_out[t][i];
      const std::vector<double> n =
          RefNorm(spec, x[t], p(TensorSlot::kFfnNormWeight), p(TensorSlot::kFfnNormBias));
      std::vector<double> inner =
          RefLinear(n, p(TensorSlot::kUpWeight), p(TensorSlot::kUpBias), f, in_out);
      if (spec.activation() == SWIGLU) {
        const std::vector<double> gate =
            RefLinear(n, p(TensorSlot::kGateWeight), p(TensorSlot::kGateBias), f, in_out);
        for (int64_t i = 0; i < f; ++i) inner[i] *= gate[i] / (1 + std::exp(-gate[i]));
      } else if (spec.activation() == GELU) {
        for (double& a : inner) {
          a = 0.5 * a * (1 + std::tanh(std::sqrt(2 / M_PI) * (a + 0.044715 * a * a * a)));
        }
      } else {
        for (double& a : inner) a = std::max(a, 0.0);
      }
      const std::vector<double> out =
          RefLinear(inner, p(TensorSlot::kDownWeight), p(TensorSlot::kDownBias), h, in_out);
      for (int64_t i = 0; i < h; ++i) x[t][i] += out[i];
    }
  }

  Reference ref;
  ref.hidden = x;
  const PartLayout hl = HeadPartLayout(spec);
  auto head = [&](TensorSlot slot) -> const float* {
    const TensorSlice* t = hl.Find(slot);
    return t == nullptr ? nullptr : m.head.data() + t->offset;
  };
  const float* table = head(TensorSlot::kLmHead) != nullptr ? head(TensorSlot::kLmHead)
                                                            : embed_tokens;
  for (int t = 0; t < L; ++t) {
    std::vector<double> n =
        RefNorm(spec, x[t], head(TensorSlot::kFinalNormWeight), head(TensorSlot::kFinalNormBias));
    if (head(TensorSlot::kProjectOut) != nullptr) {
      n = RefLinear(n, head(TensorSlot::kProjectOut), nullptr, e_dim);
    }
    ref.lm_logits.push_back(RefLinear(n, table, nullptr, vocab));
  }
  for (int32_t word : label_words)
    ref.label_logits.push_back(ref.lm_logits[L - 1][word]);
  return ref;
}

// The accuracy metric: max |a - b| / max(1, |b|) over the elements, with b
// the reference.
struct MaxRelError {
  double value = 0;
  void Add(double a, double b) {
    value = std::max(value, std::abs(a - b) / std::max(1.0, std::abs(b)));
  }
};

void ExpectMatchesReference(const ModelSpec& spec) {
  const Model m = RandomModel(spec);
  const int64_t h = spec.hidden_size(), vocab = spec.vocab_size();
  const int seq = 10;
  const std::vector<int32_t> lengths = {10, 6, 1, 9};
  const int examples = lengths.size();
  std::mt19937 rng(11);
  std::uniform_int_distribution<int32_t> token(0, vocab - 1);
  std::vector<int32_t> tokens(examples * seq);
  for (int32_t& t : tokens) t = token(rng);
  const std::vector<int32_t> label_words = {3, 17, 41};
  const std::vector<int32_t> labels = {0, 2, 1, 1};

  const std::vector<float> hidden = Forward(m, tokens, lengths, seq);
  std::vector<float> label_logits(examples * 3), losses(examples),
      lm_logits(examples * seq * vocab);
  LabelLogits(spec, m.head.data(), m.embedding.data(), hidden.data(),
              lengths.data(), examples, seq, label_words.data(), 3,
              label_logits.data());
  HeadLoss(spec, m.head.data(), m.embedding.data(), hidden.data(),
           lengths.data(), examples, seq, label_words.data(), 3, labels.data(),
           losses.data());
  LmLogits(spec, m.head.data(), m.embedding.data(), hidden.data(), examples,
           seq, lm_logits.data());

  MaxRelError hidden_err, label_err, loss_err, lm_err;
  for (int e = 0; e < examples; ++e) {
    const Reference ref =
        RunReference(m, tokens.data() + e * seq, lengths[e], label_words);
    for (int t = 0; t < lengths[e]; ++t) {
      for (int64_t i = 0; i < h; ++i) {
        hidden_err.Add(hidden[(e * seq + t) * h + i], ref.hidden[t][i]);
      }
      for (int64_t w = 0; w < vocab; ++w) {
        lm_err.Add(lm_logits[(e * seq + t) * vocab + w], ref.lm_logits[t][w]);
      }
    }
    double max = -1e300, sum = 0;
    for (double l : ref.label_logits) max = std::max(max, l);
    for (double l : ref.label_logits) sum += std::exp(l - max);
    for (int l = 0; l < 3; ++l)
      label_err.Add(label_logits[e * 3 + l], ref.label_logits[l]);
    loss_err.Add(losses[e], std::log(sum) + max - ref.label_logits[labels[e]]);
  }
  // Printed so that the report can quote the measured accuracy.
  std::printf(
      "%s: max |a-b|/max(1,|b|): hidden %.3g, label logits %.3g, "
      "losses %.3g, LM logits %.3g\n",
      spec.name().c_str(), hidden_err.value, label_err.value, loss_err.value,
      lm_err.value);
  EXPECT_LE(hidden_err.value, 1e-5);
  EXPECT_LE(label_err.value, 1e-5);
  EXPECT_LE(loss_err.value, 1e-5);
  EXPECT_LE(lm_err.value, 1e-5);
}

TEST(OptForward, MatchesNaiveReference) { ExpectMatchesReference(TinySpec()); }

TEST(OptForward, MatchesNaiveReferenceMedium) {
  ExpectMatchesReference(MediumSpec());
}

TEST(DecoderForward, EveryFamilyMatchesNaiveReference) {
  for (const ModelSpec& spec : FamilySpecs()) {
    SCOPED_TRACE(spec.name());
    ASSERT_TRUE(CheckRuntimeSupports(spec).ok()) << CheckRuntimeSupports(spec);
    ExpectMatchesReference(spec);
  }
}

TEST(OptForward, MatchesNaiveReferenceWithProjections) {
  // OPT-350m-style project_in / project_out (e 16 != h 32), pre-norm.
  ModelSpec spec = TinySpec();
  spec.set_name("tiny-opt-proj");
  spec.set_word_embed_proj_dim(16);
  ASSERT_TRUE(CheckRuntimeSupports(spec).ok());
  ExpectMatchesReference(spec);
}

TEST(OptForward, MatchesNaiveReferenceWithoutFinalNorm) {
  ModelSpec spec = TinySpec();
  spec.set_name("tiny-opt-no-final-norm");
  spec.set_final_norm(false);
  ExpectMatchesReference(spec);
}

bool BitwiseEqual(const float* a, const float* b, int64_t n) {
  return std::memcmp(a, b, sizeof(float) * n) == 0;
}

TEST(OptForward, Deterministic) {
  const Model m = RandomModel(MediumSpec());
  const std::vector<int32_t> tokens = {1, 5, 9, 2, 7, 3, 30, 4, 8, 6, 0, 11};
  const std::vector<int32_t> lengths = {5, 6};
  const std::vector<float> a = Forward(m, tokens, lengths, 6);
  const std::vector<float> b = Forward(m, tokens, lengths, 6, /*offset=*/3);
  EXPECT_TRUE(BitwiseEqual(a.data(), b.data(), a.size()));
}

TEST(DecoderForward, Causal) {
  for (const ModelSpec& spec : AllSpecs()) {
    SCOPED_TRACE(spec.name());
    const Model m = RandomModel(spec);
    const int64_t h = spec.hidden_size(), vocab = spec.vocab_size();
    const int seq = 10, changed = 5;
    std::vector<int32_t> a = {4, 8, 15, 16, 23, 42, 7, 1, 2, 3};
    std::vector<int32_t> b = a;
    b[changed] = 9;
    const std::vector<int32_t> lengths = {seq};
    const std::vector<float> ha = Forward(m, a, lengths, seq);
    const std::vector<float> hb = Forward(m, b, lengths, seq);
    EXPECT_TRUE(BitwiseEqual(ha.data(), hb.data(), changed * h));
    EXPECT_FALSE(
        BitwiseEqual(ha.data() + changed * h, hb.data() + changed * h, h));
    std::vector<float> la(seq * vocab), lb(seq * vocab);
    LmLogits(spec, m.head.data(), m.embedding.data(), ha.data(), 1, seq,
             la.data());
    LmLogits(spec, m.head.data(), m.embedding.data(), hb.data(), 1, seq,
             lb.data());
    EXPECT_TRUE(BitwiseEqual(la.data(), lb.data(), changed * vocab));
    EXPECT_FALSE(BitwiseEqual(la.data() + changed * vocab,
                              lb.data() + changed * vocab, vocab));
  }
}

TEST(DecoderForward, PaddingInvariant) {
  for (const ModelSpec& spec : AllSpecs()) {
    SCOPED_TRACE(spec.name());
    const Model m = RandomModel(spec);
    const std::vector<int32_t> real = {4, 8, 15, 16, 23, 42, 7};
    const std::vector<int32_t> label = {2};
    const std::vector<float> unpadded =
        Losses(m, Forward(m, real, {7}, 7), {7}, 7, label);

    std::vector<int32_t> padded = real;
    padded.resize(12, 1);  // pad token 1
    const std::vector<float> loss_pad1 =
        Losses(m, Forward(m, padded, {7}, 12), {7}, 12, label);
    std::vector<int32_t> padded2 = real;
    for (int32_t t : {0, 49, 3, 3, 27}) padded2.push_back(t);
    const std::vector<float> loss_pad2 =
        Losses(m, Forward(m, padded2, {7}, 12), {7}, 12, label);

    std::printf("%s: padded loss %.9g, unpadded %.9g, |diff| %.3g\n",
                spec.name().c_str(), loss_pad1[0], unpadded[0],
                std::abs(loss_pad1[0] - unpadded[0]));
    EXPECT_NEAR(loss_pad1[0], unpadded[0], 1e-6);
    // In fact bitwise: the projections compute each token independently of
    // the token count, and attention reads only the 7 real keys.
    EXPECT_EQ(std::memcmp(&loss_pad1[0], &unpadded[0], sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(&loss_pad1[0], &loss_pad2[0], sizeof(float)), 0)
        << loss_pad1[0] << " vs " << loss_pad2[0];
  }
}

// A batch of 16 and each example alone give bitwise the same losses, for
// sequence lengths that are and are not multiples of the GEMM column panel
// (4), with the lone example's buffers at another alignment.
TEST(DecoderForward, BatchIndependent) {
  for (const ModelSpec& spec : AllSpecs()) {
    const Model m = RandomModel(spec);
    for (int seq : {1, 3, 7, 12}) {
      SCOPED_TRACE(spec.name() + " seq " + std::to_string(seq));
      const int examples = 16;
      std::mt19937 rng(seq);
      std::uniform_int_distribution<int32_t> token(0, spec.vocab_size() - 1);
      std::uniform_int_distribution<int32_t> length(1, seq);
      std::vector<int32_t> tokens(examples * seq), lengths(examples),
          labels(examples);
      for (int32_t& t : tokens) t = token(rng);
      for (int e = 0; e < examples; ++e) {
        lengths[e] = length(rng);
        labels[e] = e % 3;
      }
      const std::vector<float> batch =
          Losses(m, Forward(m, tokens, lengths, seq), lengths, seq, labels);
      for (int e = 0; e < examples; ++e) {
        const std::vector<int32_t> one(tokens.begin() + e * seq,
                                       tokens.begin() + (e + 1) * seq);
        const std::vector<float> alone =
            Losses(m, Forward(m, one, {lengths[e]}, seq, /*offset=*/e % 5),
                   {lengths[e]}, seq, {labels[e]});
        EXPECT_EQ(std::memcmp(&alone[0], &batch[e], sizeof(float)), 0)
            << "example " << e << ": " << alone[0] << " vs " << batch[e];
      }
    }
  }
}

// BlockForward on a team of any size gives the bits of the calling thread
// alone: projections split at token panels, attention at (example, head)
// pairs, row-wise steps at rows; token counts that are and are not
// multiples of the panel, and a team larger than the panels.
TEST(DecoderForward, ThreadTeamBitwiseSameAsOneThread) {
  for (const ModelSpec& spec : AllSpecs()) {
    const Model m = RandomModel(spec);
    for (int seq : {1, 7, 12}) {
      for (int examples : {1, 5, 16}) {
        SCOPED_TRACE(spec.name() + " seq " + std::to_string(seq) + " examples " +
                     std::to_string(examples));
        std::mt19937 rng(seq * 31 + examples);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::uniform_int_distribution<int32_t> length(1, seq);
        std::vector<float> input(static_cast<int64_t>(examples) * seq * spec.hidden_size());
        for (float& x : input) x = normal(rng);
        std::vector<int32_t> lengths(examples);
        for (int32_t& l : lengths) l = length(rng);
        std::vector<float> workspace(BlockWorkspaceFloats(spec, examples, seq));
        std::vector<float> alone = input;
        BlockForward(spec, m.blocks[0].data(), lengths.data(), examples, seq, alone.data(),
                     workspace.data());
        for (int threads : {2, 3, 5}) {
          ThreadTeam team(threads);
          PartWeights weights(m.blocks[0].data());
          std::vector<float> together = input;
          BlockForward(spec, weights, lengths.data(), examples, seq, together.data(),
                       workspace.data(), &team);
          EXPECT_TRUE(BitwiseEqual(alone.data(), together.data(), alone.size()))
              << threads << " threads";
        }
      }
    }
  }
}

TEST(OptForward, WorkspaceWithinAccountingForRealShapes) {
  for (const char* name : {"opt-125m", "opt-1.3b", "opt-13b", "opt-175b"}) {
    const ModelSpec spec = *LoadModelSpec(name);
    for (int seq : {32, 128, 512, 2048}) {
      for (int examples : {1, 16}) {
        const int64_t budget_floats =
            DualForwardActivationBytesPerToken(spec, seq, FP32).workspace *
            examples * seq / 4;
        EXPECT_LE(BlockWorkspaceFloats(spec, examples, seq), budget_floats)
            << name << " seq " << seq << " examples " << examples;
      }
    }
  }
}

TEST(CheckRuntimeSupports, AcceptsEveryPreNormFamily) {
  EXPECT_TRUE(CheckRuntimeSupports(TinySpec()).ok());
  for (const char* name : {"opt-125m", "opt-1.3b", "opt-175b", "gpt2-small", "llama2-7b"}) {
    EXPECT_TRUE(CheckRuntimeSupports(*LoadModelSpec(name)).ok()) << name;
  }
  for (const ModelSpec& spec : FamilySpecs()) {
    EXPECT_TRUE(CheckRuntimeSupports(spec).ok()) << CheckRuntimeSupports(spec);
  }
}

void ExpectUnsupported(const ModelSpec& spec, const std::string& fragment) {
  const absl::Status status = CheckRuntimeSupports(spec);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << spec.name();
  EXPECT_NE(std::string(status.message()).find(fragment), std::string::npos)
      << status.message();
}

TEST(CheckRuntimeSupports, NamesWhatIsUnsupported) {
  ExpectUnsupported(*LoadModelSpec("opt-350m"),
                    "model 'opt-350m' is post-norm (norm_placement "
                    "POST_NORM); the runtime runs pre-norm blocks");
  ModelSpec spec = FamilyForTest(QWEN3, "narrow", {32, 2, 4, 64, 50, 16});
  spec.set_head_dim(2);  // q 8 + 2 x 4 wide < h 32
  ExpectUnsupported(spec, "narrower than the hidden size 32");
  spec = TinySpec();
  spec.set_hidden_size(30);  // not divisible by 4 heads: invalid spec
  ExpectUnsupported(spec, "not divisible");
}

}  // namespace
}  // namespace zosched
