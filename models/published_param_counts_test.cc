// The parameter count of every published LLaMA, Qwen and GPT-2 zoo model
// (TotalParams, models/accounting.h) against the figure its publisher's
// checkpoint reports, and the tiny test models' counts against their
// formulas.
//
// The published figure is the `safetensors.total` that Hugging Face's model
// API (https://huggingface.co/api/models/REPO) reports for the checkpoint:
// the elements of every tensor stored in its safetensors files. Some
// checkpoints store tensors that are not distinct parameters, and the total
// counts those too; our count must equal the total less them:
//   - Qwen3-0.6B and 1.7B tie lm_head to the embedding
//     (tie_word_embeddings true) yet store lm_head.weight as a copy of
//     model.embed_tokens.weight: vocab_size · hidden_size elements twice;
//   - GPT-2's checkpoints store each block's causal mask h.N.attn.bias
//     [1, 1, n_positions, n_positions], a buffer, not a parameter;
//   - the LLaMA-2 -hf checkpoints store each block's
//     self_attn.rotary_emb.inv_freq [head_dim / 2], a buffer computed from
//     rope_theta.
// Where a model card gives the "Number of Parameters (Non-Embedding)"
// (Qwen2.5, Qwen3), that is pinned too, to the card's digits.
#include <cstdint>
#include <set>
#include <string>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "models/model_zoo.h"
#include "models/zoo_model_for_test.h"

namespace zosched {
namespace {

// What a checkpoint stores besides its distinct parameters.
enum class Stored {
  kParametersOnly,
  kTiedHeadCopy,   // lm_head.weight, a copy of the tied embedding: vocab · h
  kCausalMasks,    // GPT-2's h.N.attn.bias: layers · max_positions²
  kRotaryInvFreq,  // LLaMA-2's rotary_emb.inv_freq: layers · head_dim / 2
};

// The elements `stored` adds to `spec`'s parameters in its checkpoint.
int64_t StoredBesidesParameters(const ModelSpec& spec, Stored stored) {
  switch (stored) {
    case Stored::kParametersOnly:
      return 0;
    case Stored::kTiedHeadCopy:
      EXPECT_TRUE(spec.tied_lm_head()) << spec.name() << ": a copy of a tied head";
      return spec.vocab_size() * spec.hidden_size();
    case Stored::kCausalMasks:
      EXPECT_EQ(spec.family(), GPT2) << spec.name();
      return spec.num_layers() * spec.max_positions() * spec.max_positions();
    case Stored::kRotaryInvFreq:
      EXPECT_EQ(spec.positional(), ROTARY) << spec.name();
      return spec.num_layers() * HeadDim(spec) / 2;
  }
  return 0;
}

struct Published {
  const char* model;  // zoo name
  int64_t hub_total;  // the Hub's safetensors.total for `source`
  Stored stored;
  const char* source;
};

// safetensors.total of https://huggingface.co/api/models/SOURCE, as public
// copies of the API's answer record it, except gpt2-large and gpt2-xl: for
// those two the parameters plus the masks, the rule that gpt2 and
// gpt2-medium's API totals follow (their Hub pages round them to 812M and
// 1.61B params).
const Published kPublished[] = {
    // Llama 3.x (bfloat16; the 3.2 models store no lm_head of their own).
    {"llama3.1-8b", 8030261248, Stored::kParametersOnly, "meta-llama/Llama-3.1-8B"},
    {"llama3.2-1b", 1235814400, Stored::kParametersOnly, "meta-llama/Llama-3.2-1B"},
    {"llama3.2-3b", 3212749824, Stored::kParametersOnly, "meta-llama/Llama-3.2-3B"},
    // LLaMA-2 (float16): 6,738,415,616, 13,015,864,320 and 68,976,648,192
    // parameters (the sum of LlamaForCausalLM's parameters) plus 32, 40 and
    // 80 blocks' 64 inv_freq elements.
    {"llama2-7b", 6738417664, Stored::kRotaryInvFreq, "meta-llama/Llama-2-7b-hf"},
    {"llama2-13b", 13015866880, Stored::kRotaryInvFreq, "meta-llama/Llama-2-13b-hf"},
    {"llama2-70b", 68976653312, Stored::kRotaryInvFreq, "meta-llama/Llama-2-70b-hf"},
    // Qwen2.5 (bfloat16; 0.5B, 1.5B and 3B tied and store no copy).
    {"qwen2.5-0.5b", 494032768, Stored::kParametersOnly, "Qwen/Qwen2.5-0.5B"},
    {"qwen2.5-1.5b", 1543714304, Stored::kParametersOnly, "Qwen/Qwen2.5-1.5B"},
    {"qwen2.5-3b", 3085938688, Stored::kParametersOnly, "Qwen/Qwen2.5-3B"},
    {"qwen2.5-7b", 7615616512, Stored::kParametersOnly, "Qwen/Qwen2.5-7B"},
    // Qwen3 (bfloat16). 0.6B: 596,049,920 parameters + 151936 · 1024 =
    // 155,582,464 copied; 1.7B: 1,720,574,976 + 151936 · 2048 = 311,164,928.
    // The tied 4B stores no copy.
    {"qwen3-0.6b", 751632384, Stored::kTiedHeadCopy, "Qwen/Qwen3-0.6B"},
    {"qwen3-1.7b", 2031739904, Stored::kTiedHeadCopy, "Qwen/Qwen3-1.7B"},
    {"qwen3-4b", 4022468096, Stored::kParametersOnly, "Qwen/Qwen3-4B"},
    {"qwen3-8b", 8190735360, Stored::kParametersOnly, "Qwen/Qwen3-8B"},
    {"qwen3-14b", 14768307200, Stored::kParametersOnly, "Qwen/Qwen3-14B"},
    {"qwen3-32b", 32762123264, Stored::kParametersOnly, "Qwen/Qwen3-32B"},
    // GPT-2 (float32): 124,439,808, 354,823,168, 774,030,080 and
    // 1,557,611,200 parameters (the sum of GPT2LMHeadModel's parameters)
    // plus 12, 24, 36 and 48 blocks' 1024² mask elements.
    {"gpt2-small", 137022720, Stored::kCausalMasks, "openai-community/gpt2"},
    {"gpt2-medium", 379988992, Stored::kCausalMasks, "openai-community/gpt2-medium"},
    {"gpt2-large", 811778816, Stored::kCausalMasks, "openai-community/gpt2-large"},
    {"gpt2-xl", 1607942848, Stored::kCausalMasks, "openai-community/gpt2-xl"},
};

TEST(PublishedParamCounts, EachIsTheHubTotalLessWhatIsNotAParameter) {
  for (const Published& p : kPublished) {
    const ModelSpec spec = Zoo(p.model);
    EXPECT_EQ(TotalParams(spec), p.hub_total - StoredBesidesParameters(spec, p.stored))
        << p.model << " (" << p.source << ")";
  }
}

TEST(PublishedParamCounts, TheCountsThatThePublishersQuote) {
  // The parameters alone: the figures usually quoted, the sum of the
  // transformers model's parameters (model.num_parameters()).
  EXPECT_EQ(TotalParams(Zoo("llama2-7b")), 6738415616);
  EXPECT_EQ(TotalParams(Zoo("llama2-13b")), 13015864320);
  EXPECT_EQ(TotalParams(Zoo("llama2-70b")), 68976648192);
  EXPECT_EQ(TotalParams(Zoo("gpt2-small")), 124439808);
  EXPECT_EQ(TotalParams(Zoo("gpt2-medium")), 354823168);
  EXPECT_EQ(TotalParams(Zoo("gpt2-large")), 774030080);
  EXPECT_EQ(TotalParams(Zoo("gpt2-xl")), 1557611200);
  EXPECT_EQ(TotalParams(Zoo("qwen3-0.6b")), 596049920);
  EXPECT_EQ(TotalParams(Zoo("qwen3-1.7b")), 1720574976);
}

TEST(PublishedParamCounts, EveryPublishedLlamaQwenAndGpt2ZooModelIsPinned) {
  std::set<std::string> pinned;
  for (const Published& p : kPublished) pinned.insert(p.model);
  for (const std::string& name : ZooModelNames()) {
    const ModelSpec spec = Zoo(name);
    if (spec.family() == OPT) continue;  // accounting_test pins the OPT models
    if (name.size() > 5 && name.substr(name.size() - 5) == "-tiny") continue;  // below
    EXPECT_EQ(pinned.count(name), 1u) << name << " has no published count here";
  }
}

// "Number of Parameters (Non-Embedding)" of the Hugging Face model cards
// (README.md of each repository), in billions to the card's digits: every
// parameter but the token embedding and an untied LM head, i.e. the blocks
// and the final norm.
struct NonEmbedding {
  const char* model;
  const char* billions;  // as the card prints it
  const char* source;
};
const NonEmbedding kNonEmbedding[] = {
    {"qwen2.5-0.5b", "0.36", "Qwen/Qwen2.5-0.5B"}, {"qwen2.5-1.5b", "1.31", "Qwen/Qwen2.5-1.5B"},
    {"qwen2.5-3b", "2.77", "Qwen/Qwen2.5-3B"},     {"qwen2.5-7b", "6.53", "Qwen/Qwen2.5-7B"},
    {"qwen3-0.6b", "0.44", "Qwen/Qwen3-0.6B"},     {"qwen3-1.7b", "1.4", "Qwen/Qwen3-1.7B"},
    {"qwen3-4b", "3.6", "Qwen/Qwen3-4B"},          {"qwen3-8b", "6.95", "Qwen/Qwen3-8B"},
    {"qwen3-14b", "13.2", "Qwen/Qwen3-14B"},       {"qwen3-32b", "31.2", "Qwen/Qwen3-32B"},
};

TEST(PublishedParamCounts, NonEmbeddingMatchesTheModelCards) {
  for (const NonEmbedding& n : kNonEmbedding) {
    const ModelSpec spec = Zoo(n.model);
    const int64_t non_embedding = TotalParams(spec) - EmbeddingParams(spec) - HeadParams(spec);
    EXPECT_EQ(non_embedding, spec.num_layers() * BlockParams(spec) + FinalNormParams(spec));
    const std::string card = n.billions;
    const size_t dot = card.find('.');
    const int digits = dot == std::string::npos ? 0 : static_cast<int>(card.size() - dot - 1);
    EXPECT_EQ(absl::StrFormat("%.*f", digits, non_embedding / 1e9), card)
        << n.model << " (" << n.source << "): " << non_embedding;
  }
}

// The tiny test models (not published): their counts from their files,
// written out per tensor so that a change to the tensor list shows here.
TEST(TinyModelCounts, FollowFromTheirFiles) {
  const int64_t v = 576, h = 64, layers = 4, positions = 64;
  // GPT-2: tokens and positions; per block ln_1, ln_2 (2h each), c_attn
  // h·3h + 3h, c_proj h² + h, c_fc h·4h + 4h, c_proj 4h·h + h; ln_f; tied.
  EXPECT_EQ(TotalParams(Zoo("gpt2-tiny")),
            v * h + positions * h +
                layers * (4 * h + 3 * h * h + 3 * h + h * h + h + 4 * h * h + 4 * h + 4 * h * h + h) +
                2 * h);
  EXPECT_EQ(TotalParams(Zoo("gpt2-tiny")), 241024);
  // LLaMA: heads 16 wide, k and v 2 · 16 = 32; per block two norms (h), q and
  // o h², k and v h·32, gate, up and down h·224; final norm; untied head.
  EXPECT_EQ(TotalParams(Zoo("llama-tiny")),
            v * h + layers * (2 * h + 2 * h * h + 2 * h * 32 + 3 * h * 224) + h + v * h);
  EXPECT_EQ(TotalParams(Zoo("llama-tiny")), 295488);
  // Qwen2: as LLaMA with f = 192 and biases on q (h), k and v (32 each); tied.
  EXPECT_EQ(TotalParams(Zoo("qwen2-tiny")),
            v * h + layers * (2 * h + 2 * h * h + h + 2 * (h * 32 + 32) + 3 * h * 192) + h);
  EXPECT_EQ(TotalParams(Zoo("qwen2-tiny")), 234560);
  // Qwen3: heads 32 wide, so q is 4 · 32 = 128 wide and k, v 2 · 32 = 64;
  // per block two norms (h), q and o h·128, k and v h·64, q_norm and k_norm
  // (32 each), gate, up and down h·192; final norm; untied head.
  EXPECT_EQ(TotalParams(Zoo("qwen3-tiny")),
            v * h + layers * (2 * h + 2 * h * 128 + 2 * h * 64 + 2 * 32 + 3 * h * 192) + h +
                v * h);
  EXPECT_EQ(TotalParams(Zoo("qwen3-tiny")), 320320);
  EXPECT_EQ(QueryWidth(Zoo("qwen3-tiny")), 128);
  EXPECT_EQ(KvWidth(Zoo("qwen3-tiny")), 64);
}

}  // namespace
}  // namespace zosched
