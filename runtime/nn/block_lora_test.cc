// BlockForward with LoRA adapters: the merged model's outputs, the base's
// bits while B is zero, and the determinism contract of decoder_forward.h.
#include "runtime/nn/block_lora.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/adapters.h"
#include "models/family_for_test.h"
#include "models/opt_for_test.h"
#include "models/peft_for_test.h"
#include "runtime/nn/decoder_forward.h"
#include "runtime/nn/param_layout.h"
#include "runtime/nn/thread_team.h"

namespace zosched {
namespace {

std::vector<float> Normals(int64_t n, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// A block with weights ~ N(0, 1/in) (norm weights near 1).
std::vector<float> RandomBlock(const ModelSpec& spec) {
  const PartLayout layout = BlockPartLayout(spec);
  std::vector<float> block = Normals(layout.total_floats, 0.1f, 3);
  for (const TensorSlice& t : layout.tensors) {
    if (t.shape.size() != 2) continue;
    const float scale = 1.0f / std::sqrt(static_cast<float>(t.shape[1]));
    for (int64_t i = 0; i < t.elements(); ++i) block[t.offset + i] *= 10.0f * scale;
  }
  for (TensorSlot norm : {TensorSlot::kAttnNormWeight, TensorSlot::kFfnNormWeight}) {
    const TensorSlice& t = layout.Get(norm);
    for (int64_t i = 0; i < t.elements(); ++i) block[t.offset + i] += 1.0f;
  }
  return block;
}

struct Case {
  ModelSpec spec;
  Peft peft;
};

// OPT with every target it has, LLaMA (grouped-query keys and values,
// gated FFN) with every target, Qwen3 (q wider than h) with MeZO's.
std::vector<Case> Cases() {
  const OptTestSizes shape = {32, 2, 4, 64, 50, 16};
  return {
      {OptForTest("tiny-opt", shape),
       LoraPeft(4, 8, {LORA_QUERY, LORA_KEY, LORA_VALUE, LORA_OUTPUT, LORA_UP, LORA_DOWN})},
      {FamilyForTest(LLAMA, "tiny-llama", shape),
       LoraPeft(3, 5, {LORA_QUERY, LORA_KEY, LORA_VALUE, LORA_OUTPUT, LORA_GATE, LORA_UP,
                   LORA_DOWN})},
      {FamilyForTest(QWEN3, "tiny-qwen3", shape), LoraPeft(2, 16, {})},
  };
}

std::vector<float> Forward(const ModelSpec& spec, const std::vector<float>& block,
                       const BlockLora* lora, const std::vector<int32_t>& lengths, int seq,
                       std::vector<float> hidden, ThreadTeam* team = nullptr) {
  const int examples = static_cast<int>(lengths.size());
  std::vector<float> workspace(BlockWorkspaceFloats(spec, examples, seq));
  PartWeights weights(block.data());
  BlockForward(spec, weights, lengths.data(), examples, seq, hidden.data(), workspace.data(),
               team, nullptr, lora);
  return hidden;
}

bool Bitwise(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The adapted block computes what the block with W + s·B·A computes.
TEST(BlockLoraTest, MatchesMergedWeights) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.spec.name());
    ASSERT_TRUE(ValidatePeft(c.spec, c.peft).ok()) << ValidatePeft(c.spec, c.peft);
    const std::vector<float> block = RandomBlock(c.spec);
    const std::vector<float> adapters = Normals(AdapterParams(c.spec, c.peft), 0.2f, 11);
    const BlockLora lora = MakeBlockLora(c.spec, c.peft, adapters.data());
    std::vector<float> merged = block;
    const PartLayout layout = BlockPartLayout(c.spec);
    for (const LoraWeights& a : lora.adapters) {
      const TensorSlice& w = layout.Get(a.base);
      for (int64_t o = 0; o < a.out; ++o) {
        for (int64_t i = 0; i < a.in; ++i) {
          double ba = 0;
          for (int64_t r = 0; r < lora.rank; ++r) {
            ba += static_cast<double>(a.b[o * lora.rank + r]) * a.a[r * a.in + i];
          }
          merged[w.offset + o * a.in + i] += static_cast<float>(lora.scaling * ba);
        }
      }
    }
    const int seq = 7;
    const std::vector<int32_t> lengths = {7, 3, 5};
    const std::vector<float> input = Normals(3 * seq * c.spec.hidden_size(), 1.0f, 5);
    const std::vector<float> adapted = Forward(c.spec, block, &lora, lengths, seq, input);
    const std::vector<float> reference = Forward(c.spec, merged, nullptr, lengths, seq, input);
    const std::vector<float> base = Forward(c.spec, block, nullptr, lengths, seq, input);
    double worst = 0, moved = 0;
    for (int e = 0; e < 3; ++e) {
      for (int t = 0; t < lengths[e]; ++t) {
        for (int64_t j = 0; j < c.spec.hidden_size(); ++j) {
          const int64_t i = (e * seq + t) * c.spec.hidden_size() + j;
          worst = std::max(worst, std::fabs(static_cast<double>(adapted[i]) - reference[i]));
          moved = std::max(moved, std::fabs(static_cast<double>(adapted[i]) - base[i]));
        }
      }
    }
    EXPECT_LT(worst, 2e-4) << "adapted vs merged";
    EXPECT_GT(moved, 1e-2) << "the adapters changed nothing";
  }
}

// B = 0 (LoRA's initialisation): the base block's bits exactly.
TEST(BlockLoraTest, ZeroBGivesTheBaseBits) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.spec.name());
    const std::vector<float> block = RandomBlock(c.spec);
    std::vector<float> adapters = Normals(AdapterParams(c.spec, c.peft), 0.2f, 11);
    for (const LoraAdapter& a : BlockAdapters(c.spec, c.peft, 0)) {
      std::fill(adapters.begin() + a.b_offset, adapters.begin() + a.b_offset + a.b.elements(),
                0.0f);
    }
    const BlockLora lora = MakeBlockLora(c.spec, c.peft, adapters.data());
    const std::vector<int32_t> lengths = {4, 2};
    const std::vector<float> input = Normals(2 * 4 * c.spec.hidden_size(), 1.0f, 9);
    EXPECT_TRUE(Bitwise(Forward(c.spec, block, &lora, lengths, 4, input),
                        Forward(c.spec, block, nullptr, lengths, 4, input)));
  }
}

// The same bits on a team of any size, and for an example alone or in a
// batch (the adapters' GEMMs split at token panels like the projections).
TEST(BlockLoraTest, BitsIndependentOfTeamAndBatch) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.spec.name());
    const std::vector<float> block = RandomBlock(c.spec);
    const std::vector<float> adapters = Normals(AdapterParams(c.spec, c.peft), 0.2f, 13);
    const BlockLora lora = MakeBlockLora(c.spec, c.peft, adapters.data());
    const int seq = 5, examples = 6;
    const int64_t h = c.spec.hidden_size();
    std::vector<int32_t> lengths = {5, 1, 4, 5, 2, 3};
    const std::vector<float> input = Normals(examples * seq * h, 1.0f, 17);
    const std::vector<float> alone = Forward(c.spec, block, &lora, lengths, seq, input);
    for (int threads : {2, 3}) {
      ThreadTeam team(threads);
      EXPECT_TRUE(Bitwise(alone, Forward(c.spec, block, &lora, lengths, seq, input, &team)))
          << threads << " threads";
    }
    for (int e = 0; e < examples; ++e) {
      const std::vector<float> one(input.begin() + e * seq * h, input.begin() + (e + 1) * seq * h);
      const std::vector<float> out = Forward(c.spec, block, &lora, {lengths[e]}, seq, one);
      EXPECT_EQ(std::memcmp(out.data(), alone.data() + e * seq * h, lengths[e] * h * sizeof(float)),
                0)
          << "example " << e;
    }
  }
}

}  // namespace
}  // namespace zosched
