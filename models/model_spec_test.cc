#include "models/model_spec.h"

#include "base/textproto.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

// A valid OPT-shaped spec; each test breaks one thing.
ModelSpec TinyOpt() {
  ModelSpec spec;
  absl::Status s = ParseTextProto(R"pb(
    name: "tiny" family: OPT hidden_size: 64 num_layers: 2 num_heads: 4
    ffn_size: 256 vocab_size: 100 max_positions: 32 activation: RELU
    norm: LAYER_NORM norm_placement: PRE_NORM positional: LEARNED_OPT_OFFSET
    tied_lm_head: true linear_bias: true final_norm: true weight_dtype: FP16
  )pb", "inline", &spec);
  EXPECT_TRUE(s.ok()) << s;
  return spec;
}

std::string ErrorOf(const ModelSpec& spec) {
  absl::Status s = ValidateModelSpec(spec, "tiny.pbtxt");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  return std::string(s.message());
}

TEST(ValidateModelSpec, AcceptsAValidSpec) {
  EXPECT_TRUE(ValidateModelSpec(TinyOpt(), "inline").ok());
}

TEST(ValidateModelSpec, NamesSourceModelAndNonPositiveField) {
  ModelSpec spec = TinyOpt();
  spec.set_num_layers(0);
  EXPECT_EQ(ErrorOf(spec),
            "tiny.pbtxt: model 'tiny': num_layers is 0 (expected a positive integer up to "
            "4096)");
}

// Sizes beyond any real model are refused before anything multiplies them
// (4e9 layers used to reach int32 truncation and multi-GB allocations).
TEST(ValidateModelSpec, RejectsSizesAboveTheLimits) {
  ModelSpec spec = TinyOpt();
  spec.set_num_layers(4000000000);
  EXPECT_EQ(ErrorOf(spec),
            "tiny.pbtxt: model 'tiny': num_layers is 4000000000 (expected a positive integer "
            "up to 4096)");
  spec = TinyOpt();
  spec.set_vocab_size(int64_t{1} << 40);
  EXPECT_NE(ErrorOf(spec).find("vocab_size is 1099511627776"), std::string::npos);
  spec = TinyOpt();
  spec.set_num_kv_heads(spec.num_heads() * 2);
  EXPECT_NE(ErrorOf(spec).find("at most num_heads"), std::string::npos);
}

TEST(ValidateModelSpec, RejectsHeadsThatDoNotDivideHidden) {
  ModelSpec spec = TinyOpt();
  spec.set_num_heads(5);
  EXPECT_NE(ErrorOf(spec).find("hidden_size 64 is not divisible by num_heads 5"),
            std::string::npos);
}

TEST(ValidateModelSpec, RejectsKvHeadsThatDoNotDivideHeads) {
  ModelSpec spec = TinyOpt();
  spec.set_family(LLAMA);
  spec.set_activation(SWIGLU);
  spec.set_positional(ROTARY);
  spec.set_norm(RMS_NORM);
  spec.set_linear_bias(false);
  spec.set_rope_theta(10000);
  spec.set_num_kv_heads(3);
  EXPECT_NE(ErrorOf(spec).find("num_heads 4 is not divisible by num_kv_heads 3"),
            std::string::npos);
}

TEST(ValidateModelSpec, RejectsUnsetEnumsSayingWhatIsExpected) {
  ModelSpec spec = TinyOpt();
  spec.clear_weight_dtype();
  EXPECT_NE(ErrorOf(spec).find("weight_dtype is not set (expected FP32, FP16 or BF16)"),
            std::string::npos);
}

// Proto3 enums are open: a file may say `family: 6`, which used to pass and
// then abort in model_tensors.cc (found by fuzz/model_fuzzer).
TEST(ValidateModelSpec, RejectsEnumNumbersThatNameNoValue) {
  ModelSpec spec = TinyOpt();
  spec.set_family(static_cast<Family>(6));
  EXPECT_EQ(ErrorOf(spec),
            "tiny.pbtxt: model 'tiny': family is 6, not a value of its enum (expected OPT, GPT2, "
            "LLAMA, QWEN2 or QWEN3)");
  spec = TinyOpt();
  spec.set_weight_dtype(static_cast<DType>(9));
  EXPECT_NE(ErrorOf(spec).find("weight_dtype is 9, not a value of its enum"), std::string::npos);
}

TEST(ValidateModelSpec, RejectsFeaturesTheFamilyDoesNotHave) {
  ModelSpec swiglu_opt = TinyOpt();
  swiglu_opt.set_activation(SWIGLU);
  EXPECT_NE(ErrorOf(swiglu_opt).find("SWIGLU and positional ROTARY need family LLAMA, QWEN2 or QWEN3"), std::string::npos);

  ModelSpec projected_gpt2 = TinyOpt();
  projected_gpt2.set_family(GPT2);
  projected_gpt2.set_positional(LEARNED);
  projected_gpt2.set_word_embed_proj_dim(32);
  EXPECT_NE(ErrorOf(projected_gpt2).find("word_embed_proj_dim is an OPT feature"),
            std::string::npos);

  ModelSpec learned_llama = TinyOpt();
  learned_llama.set_family(LLAMA);
  learned_llama.set_activation(SWIGLU);
  EXPECT_NE(ErrorOf(learned_llama).find("positional ROTARY"), std::string::npos);
}

TEST(ValidateModelSpec, AFinalNormAsTheFamilyHasItAndSomethingAfterTheLastBlock) {
  // OPT-350m: no final norm, project_out after the last block.
  ModelSpec opt_350m_like = TinyOpt();
  opt_350m_like.set_norm_placement(POST_NORM);
  opt_350m_like.set_final_norm(false);
  opt_350m_like.set_word_embed_proj_dim(32);
  EXPECT_TRUE(ValidateModelSpec(opt_350m_like, "inline").ok());
  // Nothing after the last block: no final norm, no project_out, a tied head.
  ModelSpec empty_head = TinyOpt();
  empty_head.set_final_norm(false);
  EXPECT_NE(ErrorOf(empty_head).find("has no parameters after its last block (no final norm, no "
                                     "project_out, an LM head tied to the token embedding)"),
            std::string::npos)
      << ErrorOf(empty_head);
  empty_head.set_tied_lm_head(false);
  EXPECT_TRUE(ValidateModelSpec(empty_head, "inline").ok());
  ModelSpec gpt2 = TinyOpt();
  gpt2.set_family(GPT2);
  gpt2.set_positional(LEARNED);
  gpt2.set_final_norm(false);
  EXPECT_NE(ErrorOf(gpt2).find("GPT2 models end with a final norm"), std::string::npos);
}

TEST(DerivedSizes, HeadDimKvHeadsEmbedDimAndDTypeBytes) {
  ModelSpec spec = TinyOpt();
  EXPECT_EQ(HeadDim(spec), 16);
  EXPECT_EQ(KvHeads(spec), 4);
  EXPECT_EQ(EmbedDim(spec), 64);
  spec.set_num_kv_heads(2);
  spec.set_word_embed_proj_dim(32);
  EXPECT_EQ(KvHeads(spec), 2);
  EXPECT_EQ(EmbedDim(spec), 32);
  EXPECT_EQ(DTypeBytes(FP32), 4);
  EXPECT_EQ(DTypeBytes(FP16), 2);
  EXPECT_EQ(DTypeBytes(BF16), 2);
}

}  // namespace
}  // namespace zosched
