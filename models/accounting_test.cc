#include "models/accounting.h"

#include <map>

#include "gtest/gtest.h"
#include "models/model_spec.h"
#include "models/model_zoo.h"
#include "models/zoo_model_for_test.h"

namespace zosched {
namespace {

// Parameter totals of every zoo model. Published counts (the Hugging Face
// checkpoints' parameter totals) for OPT-125m/350m/1.3b/2.7b/6.7b, GPT-2
// small/medium/large/xl and LLaMA-2 7b/13b/70b. OPT-13b/30b/66b/175b publish
// no exact total; theirs follow from their published configs by the same
// tensor list that reproduces every published count above.
const std::map<std::string, int64_t>& ExpectedTotals() {
  static const auto* totals = new std::map<std::string, int64_t>{
      {"opt-125m", 125239296},        {"opt-350m", 331196416},
      {"opt-1.3b", 1315758080},       {"opt-2.7b", 2651596800},
      {"opt-6.7b", 6658473984},       {"opt-13b", 12853473280},
      {"opt-30b", 29974540288},       {"opt-66b", 65719701504},
      {"opt-175b", 174604468224},     {"gpt2-small", 124439808},
      {"gpt2-medium", 354823168},     {"gpt2-large", 774030080},
      {"gpt2-xl", 1557611200},        {"llama2-7b", 6738415616},
      {"llama2-13b", 13015864320},    {"llama2-70b", 68976648192},
      // Llama 3.x, Qwen2.5 and Qwen3: published_param_counts_test.cc pins
      // them against the Hub's checkpoint totals and model cards.
      {"llama3.1-8b", 8030261248},    {"llama3.2-1b", 1235814400},
      {"llama3.2-3b", 3212749824},    {"qwen2.5-0.5b", 494032768},
      {"qwen2.5-1.5b", 1543714304},   {"qwen2.5-3b", 3085938688},
      {"qwen2.5-7b", 7615616512},     {"qwen3-0.6b", 596049920},
      {"qwen3-1.7b", 1720574976},     {"qwen3-4b", 4022468096},
      {"qwen3-8b", 8190735360},       {"qwen3-14b", 14768307200},
      {"qwen3-32b", 32762123264},
      // Not published: the CPU testbed's tiny models (models/zoo/*-tiny.pbtxt).
      {"opt-tiny", 241152},           {"gpt2-tiny", 241024},
      {"llama-tiny", 295488},         {"qwen2-tiny", 234560},
      {"qwen3-tiny", 320320},
  };
  return *totals;
}

TEST(TotalParams, EveryZooModelMatchesItsCount) {
  std::vector<std::string> names = ZooModelNames();
  EXPECT_EQ(names.size(), ExpectedTotals().size());
  for (const std::string& name : names) {
    auto expected = ExpectedTotals().find(name);
    ASSERT_NE(expected, ExpectedTotals().end()) << "no expected total for " << name;
    EXPECT_EQ(TotalParams(Zoo(name)), expected->second) << name;
  }
}

TEST(TotalParams, IsTheSumOfItsParts) {
  ModelSpec spec = Zoo("opt-125m");
  EXPECT_EQ(EmbeddingParams(spec), 50272 * 768 + 2050 * 768);
  EXPECT_EQ(FinalNormParams(spec), 2 * 768);
  EXPECT_EQ(HeadParams(spec), 0);  // tied
  EXPECT_EQ(TotalParams(spec), EmbeddingParams(spec) + 12 * BlockParams(spec) +
                                   FinalNormParams(spec) + HeadParams(spec));
}

TEST(BlockParams, OptAndGpt2BlocksAre12HSquaredPlus13H) {
  for (const std::string& name : ZooModelNames()) {
    ModelSpec spec = Zoo(name);
    if (IsLlamaLike(spec.family())) continue;
    const int64_t h = spec.hidden_size();
    EXPECT_EQ(BlockParams(spec), 12 * h * h + 13 * h) << name;
  }
}

TEST(BlockParams, LlamaBlockCountsGroupedKvAndSwiglu) {
  for (const char* name : {"llama2-7b", "llama2-13b", "llama2-70b"}) {
    ModelSpec spec = Zoo(name);
    const int64_t h = spec.hidden_size();
    const int64_t kv = spec.num_kv_heads() * (h / spec.num_heads());
    const int64_t f = spec.ffn_size();
    EXPECT_EQ(BlockParams(spec), 2 * h * h + 2 * h * kv + 3 * h * f + 2 * h) << name;
  }
}

TEST(BlockBytes, ScaleWithDType) {
  ModelSpec spec = Zoo("opt-175b");
  EXPECT_EQ(BlockBytes(spec, FP16), 3624198144);
  EXPECT_EQ(BlockBytes(spec, FP32), 2 * BlockBytes(spec, FP16));
  EXPECT_EQ(BlockBytes(spec, BF16), BlockBytes(spec, FP16));
}

TEST(BlockForwardFlopsPerToken, MatmulsPlusAttentionProducts) {
  ModelSpec spec = Zoo("opt-1.3b");
  const int64_t h = 2048, f = 8192, s = 2048;
  EXPECT_EQ(BlockForwardFlopsPerToken(spec, s), 2 * (4 * h * h + 2 * h * f) + 4 * s * h);
  EXPECT_EQ(BlockForwardFlopsPerToken(spec, s), 117440512);
  // Linear in seq_len with slope 4h.
  EXPECT_EQ(BlockForwardFlopsPerToken(spec, 2 * s) - BlockForwardFlopsPerToken(spec, s),
            4 * s * h);

  ModelSpec llama = Zoo("llama2-70b");  // GQA: k and v are 1024 wide
  const int64_t lh = 8192, lkv = 1024, lf = 28672;
  EXPECT_EQ(BlockForwardFlopsPerToken(llama, 1),
            2 * (2 * lh * lh + 2 * lh * lkv + 3 * lh * lf) + 4 * lh);
}

TEST(DualForwardActivationBytesPerToken, CarriedAndWorkspace) {
  ModelSpec spec = Zoo("opt-125m");
  DualForwardActivationBytes a = DualForwardActivationBytesPerToken(spec, 512, FP16);
  EXPECT_EQ(a.carried, 2 * 768 * 2);  // both paths' residual streams
  // Attention dominates at 512: normed, q, k, v, context (5h) + 12 heads x 512.
  EXPECT_EQ(a.workspace, (5 * 768 + 12 * 512) * 2);
  EXPECT_EQ(a.total(), a.carried + a.workspace);
  // SwiGLU's gate and up (h + 2f) dominate LLaMA's short sequences.
  DualForwardActivationBytes llama =
      DualForwardActivationBytesPerToken(Zoo("llama2-7b"), 8, FP32);
  EXPECT_EQ(llama.workspace, (4096 + 2 * 11008) * 4);
}

TEST(BlockForwardWorkspaceElements, OneHeadsScoresAndTokensPaddedToFour) {
  // OPT-30B (h 7168, f 28672), one sequence of 2048: the FFN phase binds,
  // T · (h + f) = 2048 · 35840.
  EXPECT_EQ(BlockForwardWorkspaceElements(Zoo("opt-30b"), 1, 2048), int64_t{2048} * 35840);
  // opt-125m (h 768, f 3072), 3 sequences of 5 tokens: T4 = 16, attention
  // 4 · 16 · 768 + 25 = 49177 < FFN 16 · 3840 = 61440.
  EXPECT_EQ(BlockForwardWorkspaceElements(Zoo("opt-125m"), 3, 5), 16 * 3840);
  // Long sequences make one head's scores count: opt-125m, 1 x 4096:
  // 4 · 4096 · 768 + 4096² = 29360128 > 4096 · 3840 = 15728640.
  EXPECT_EQ(BlockForwardWorkspaceElements(Zoo("opt-125m"), 1, 4096),
            4 * 4096 * 768 + 4096 * 4096);
}

TEST(LabelHeadSliceBytes, RowsOfTheHeadInputWidth) {
  EXPECT_EQ(LabelHeadSliceBytes(Zoo("opt-1.3b"), 2, FP16), 2 * 2048 * 2);
  EXPECT_EQ(LabelHeadSliceBytes(Zoo("opt-350m"), 2, FP16), 2 * 512 * 2);
}

}  // namespace
}  // namespace zosched
