#include "models/model_zoo.h"

#include <cstdlib>
#include <fstream>

#include "gtest/gtest.h"

namespace zosched {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Zoo, ListsEveryFamilyMember) {
  std::vector<std::string> names = ZooModelNames();
  for (const char* expected :
       {"opt-125m", "opt-350m", "opt-1.3b", "opt-2.7b", "opt-6.7b", "opt-13b",
        "opt-30b", "opt-66b", "opt-175b", "gpt2-small", "gpt2-medium",
        "gpt2-large", "gpt2-xl", "llama2-7b", "llama2-13b", "llama2-70b", "llama3.1-8b",
        "llama3.2-1b", "llama3.2-3b", "qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b",
        "qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-8b", "qwen3-14b", "qwen3-32b",
        // The CPU testbed's tiny models, one per family.
        "opt-tiny", "gpt2-tiny", "llama-tiny", "qwen2-tiny", "qwen3-tiny"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(Zoo, EveryFileParsesValidatesAndIsNamedAfterItsFile) {
  for (const std::string& name : ZooModelNames()) {
    absl::StatusOr<ModelSpec> spec = LoadModelSpec(name);
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_EQ(spec->name(), name);
    EXPECT_EQ(ZooModelPath(name), "models/zoo/" + name + ".pbtxt");
  }
  EXPECT_EQ(ZooModelPath("opt-7b"), "");
}

TEST(LoadModelSpec, UnknownNameListsTheKnownOnes) {
  absl::StatusOr<ModelSpec> spec = LoadModelSpec("opt-7b");
  ASSERT_EQ(spec.status().code(), absl::StatusCode::kNotFound);
  const std::string message(spec.status().message());
  EXPECT_NE(message.find("unknown model 'opt-7b'"), std::string::npos) << message;
  EXPECT_NE(message.find("opt-6.7b, opt-66b"), std::string::npos) << message;
  EXPECT_NE(message.find("path of a ModelSpec textproto"), std::string::npos) << message;
}

TEST(LoadModelSpec, ReadsAUserFile) {
  std::string path = WriteTemp("mine.pbtxt", R"pb(
    name: "mine" family: GPT2 hidden_size: 128 num_layers: 3 num_heads: 4
    ffn_size: 512 vocab_size: 1000 max_positions: 64 activation: GELU
    norm: LAYER_NORM norm_placement: PRE_NORM positional: LEARNED
    tied_lm_head: true linear_bias: true final_norm: true weight_dtype: FP32
  )pb");
  absl::StatusOr<ModelSpec> spec = LoadModelSpec(path);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->num_layers(), 3);
}

TEST(LoadModelSpec, RelativePathsResolveWhereBazelRunWasTyped) {
  WriteTemp("relative.pbtxt", R"pb(
    name: "relative" family: OPT hidden_size: 64 num_layers: 1 num_heads: 2
    ffn_size: 256 vocab_size: 50 max_positions: 16 activation: RELU
    norm: LAYER_NORM norm_placement: PRE_NORM positional: LEARNED_OPT_OFFSET
    tied_lm_head: true linear_bias: true final_norm: true weight_dtype: FP16
  )pb");
  setenv("BUILD_WORKING_DIRECTORY", ::testing::TempDir().c_str(), 1);
  absl::StatusOr<ModelSpec> spec = LoadModelSpec("relative.pbtxt");
  unsetenv("BUILD_WORKING_DIRECTORY");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name(), "relative");
}

TEST(LoadModelSpec, MalformedFileNamesFileLineAndColumn) {
  std::string path = WriteTemp("broken.pbtxt",
                               "name: \"broken\"\nfamily: OPT\nhidden_size: lots\n");
  absl::StatusOr<ModelSpec> spec = LoadModelSpec(path);
  ASSERT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(spec.status().message());
  EXPECT_EQ(message.rfind(path + ":3:14: ", 0), 0u) << message;
}

TEST(LoadModelSpec, ImpossibleSpecNamesFileAndField) {
  std::string path = WriteTemp("impossible.pbtxt", R"pb(
    name: "impossible" family: OPT hidden_size: 100 num_layers: 1 num_heads: 3
    ffn_size: 400 vocab_size: 50 max_positions: 16 activation: RELU
    norm: LAYER_NORM norm_placement: PRE_NORM positional: LEARNED_OPT_OFFSET
    weight_dtype: FP16
  )pb");
  absl::StatusOr<ModelSpec> spec = LoadModelSpec(path);
  ASSERT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spec.status().message(),
            path + ": model 'impossible': hidden_size 100 is not divisible by num_heads 3");
}

}  // namespace
}  // namespace zosched
