// Prefix tuning's forward and MeZO's initialisation from real activations:
// a prefix made from tokens X is the KV cache of X, so the forward of an
// input with it equals the base model's forward of X followed by the input,
// at the input's positions. And the determinism contract of
// decoder_forward.h holds with a prefix.
#include "runtime/nn/prefix_init.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/adapters.h"
#include "models/family_for_test.h"
#include "models/model_spec.h"
#include "models/opt_for_test.h"
#include "models/peft_for_test.h"
#include "runtime/nn/block_prefix.h"
#include "runtime/nn/decoder_forward.h"
#include "runtime/nn/param_layout.h"
#include "runtime/nn/thread_team.h"

namespace zosched {
namespace {

// A flat part with every element ~ N(0, 0.3²), norm weights near 1.
std::vector<float> RandomPart(const PartLayout& layout, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  std::vector<float> part(layout.total_floats);
  for (float& x : part) x = normal(rng);
  for (TensorSlot norm : {TensorSlot::kAttnNormWeight, TensorSlot::kFfnNormWeight}) {
    if (const TensorSlice* t = layout.Find(norm)) {
      for (int64_t i = 0; i < t->elements(); ++i) part[t->offset + i] += 1.0f;
    }
  }
  return part;
}

struct Model {
  ModelSpec spec;
  std::vector<float> embedding;
  std::vector<std::vector<float>> blocks;
};

Model MakeModel(const ModelSpec& spec) {
  Model m{spec, RandomPart(EmbeddingPartLayout(spec), 1), {}};
  for (int b = 0; b < spec.num_layers(); ++b) {
    m.blocks.push_back(RandomPart(BlockPartLayout(spec, b), 10 + b));
  }
  return m;
}

// OPT (learned positions), LLaMA (rotary, grouped-query keys and values),
// Qwen3 (k-norm before the rotary embedding), GPT-2 (fused c_attn).
std::vector<ModelSpec> Specs() {
  const OptTestSizes shape = {32, 2, 4, 64, 50, 16};
  return {OptForTest("tiny-opt", shape), FamilyForTest(LLAMA, "tiny-llama", shape),
          FamilyForTest(QWEN3, "tiny-qwen3", shape), FamilyForTest(GPT2, "tiny-gpt2", shape)};
}

// The hidden states after every block of `tokens` (one example of
// tokens.size()), with the model's prefixes when given.
std::vector<float> Forward(const Model& m, const std::vector<int32_t>& tokens,
                           const std::vector<std::vector<float>>* prefixes, const Peft& peft,
                           ThreadTeam* team = nullptr) {
  const int seq = static_cast<int>(tokens.size());
  const int64_t k = prefixes == nullptr ? 0 : PrefixTokens(peft);
  std::vector<float> hidden(seq * m.spec.hidden_size());
  Embed(m.spec, m.embedding.data(), tokens.data(), 1, seq, hidden.data(), k);
  std::vector<float> workspace(BlockWorkspaceFloats(m.spec, 1, seq));
  const int32_t length = seq;
  for (int b = 0; b < m.spec.num_layers(); ++b) {
    PartWeights weights(m.blocks[b].data());
    const BlockPrefix prefix =
        prefixes == nullptr ? BlockPrefix() : MakeBlockPrefix(m.spec, peft, (*prefixes)[b].data());
    BlockForward(m.spec, weights, &length, 1, seq, hidden.data(), workspace.data(), team,
                 /*rotary=*/nullptr, /*lora=*/nullptr, prefixes == nullptr ? nullptr : &prefix);
  }
  return hidden;
}

TEST(PrefixInitTest, APrefixFromRealTokensIsTheirKeyValueCache) {
  for (const ModelSpec& spec : Specs()) {
    SCOPED_TRACE(spec.name());
    const Model m = MakeModel(spec);
    const Peft peft = PrefixPeft(5);
    const std::vector<int32_t> x = PrefixInitTokens(spec, 5, /*seed=*/7);
    const std::vector<int32_t> input = {3, 14, 15, 9, 26, 5, 35, 8};
    const std::vector<std::vector<float>> prefixes = PrefixFromActivations(
        spec, m.embedding.data(), [&](int64_t b) { return m.blocks[b].data(); }, x);
    ASSERT_EQ(prefixes.size(), static_cast<size_t>(spec.num_layers()));
    for (const std::vector<float>& p : prefixes) {
      EXPECT_EQ(static_cast<int64_t>(p.size()), AdapterParams(spec, peft));
    }
    std::vector<int32_t> joined = x;
    joined.insert(joined.end(), input.begin(), input.end());
    const std::vector<float> base = Forward(m, joined, nullptr, peft);
    const std::vector<float> with_prefix = Forward(m, input, &prefixes, peft);
    const int64_t h = spec.hidden_size();
    double worst = 0;
    for (int64_t i = 0; i < static_cast<int64_t>(with_prefix.size()); ++i) {
      const float expected = base[5 * h + i];
      worst = std::max(worst, std::abs(double{with_prefix[i]} - expected) /
                                  (1.0 + std::abs(double{expected})));
    }
    EXPECT_LT(worst, 1e-5) << "the prefix forward is not the base forward after its tokens";
  }
}

TEST(PrefixInitTest, ThePrefixChangesTheOutputAndItsBitsDoNotDependOnTheTeam) {
  for (const ModelSpec& spec : Specs()) {
    SCOPED_TRACE(spec.name());
    const Model m = MakeModel(spec);
    const Peft peft = PrefixPeft(3);
    const std::vector<int32_t> input = {1, 2, 3, 4, 5, 6, 7};
    std::vector<std::vector<float>> prefixes = PrefixFromActivations(
        spec, m.embedding.data(), [&](int64_t b) { return m.blocks[b].data(); },
        PrefixInitTokens(spec, 3, 1));
    const std::vector<float> alone = Forward(m, input, &prefixes, peft);
    ThreadTeam team(3);
    EXPECT_EQ(Forward(m, input, &prefixes, peft, &team), alone);
    prefixes[1][4] += 0.5f;  // a key of the last block
    EXPECT_NE(Forward(m, input, &prefixes, peft), alone);
  }
}

TEST(PrefixInitTest, TokensAreFixedBySeedAndInTheVocabulary) {
  const ModelSpec spec = Specs()[0];
  const std::vector<int32_t> a = PrefixInitTokens(spec, 64, 3);
  EXPECT_EQ(a, PrefixInitTokens(spec, 64, 3));
  EXPECT_NE(a, PrefixInitTokens(spec, 64, 4));
  for (int32_t t : a) {
    EXPECT_GE(t, 0);
    EXPECT_LT(t, spec.vocab_size());
  }
}

}  // namespace
}  // namespace zosched
