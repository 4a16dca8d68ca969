#include "runtime/checkpoint/init_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/textproto.h"
#include "gtest/gtest.h"
#include "runtime/checkpoint/hf_checkpoint_testdata.h"
#include "runtime/checkpoint/tiny_schedule_testdata.h"
#include "models/model_spec.h"
#include "models/model_tensors.h"
#include "runtime/checkpoint/run_checkpoint.h"
#include "runtime/checkpoint/safetensors.h"

namespace zosched {
namespace {

// Whether `text` contains `part`, showing both if not.
::testing::AssertionResult Contains(absl::string_view text, absl::string_view part) {
  if (text.find(part) != absl::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

Schedule TinySchedule() {
  Schedule schedule;
  EXPECT_TRUE(ParseTextProto(kTinyScheduleText, "tiny", &schedule).ok());
  return schedule;
}

class InitFileTest : public ::testing::Test {
 protected:
  InitFileTest() {
    tensors_ = EmbeddingTensors(spec());
    for (int64_t l = 0; l < spec().num_layers(); ++l) {
      for (const TensorSpec& t : BlockTensors(spec(), l)) tensors_.push_back(t);
    }
    for (const TensorSpec& t : FinalNormTensors(spec())) tensors_.push_back(t);
    for (const TensorSpec& t : HeadTensors(spec())) tensors_.push_back(t);
    values_.resize(CountElements(tensors_));
    for (size_t i = 0; i < values_.size(); ++i) values_[i] = 0.001f * (i % 1000);
  }
  const ModelSpec& spec() const { return schedule_.model(); }
  std::vector<ParameterPart> Parts() const { return {{tensors_, FP32, values_.data()}}; }
  // A path in a run's directory.
  std::string RunFile(const std::string& name) const {
    return absl::StrCat(::testing::TempDir(), "/", name);
  }

  const Schedule schedule_ = TinySchedule();
  std::vector<TensorSpec> tensors_;
  std::vector<float> values_;
};

// What a fresh run may start from: a finished run's weights.safetensors, or
// a Hugging Face file (no zosched metadata).
TEST_F(InitFileTest, AcceptsFinalWeightsAndHuggingFaceFiles) {
  const std::string weights = RunFile("weights.safetensors");
  ASSERT_TRUE(SaveModelParameters(weights, spec(), Parts(),
                                  {{"zosched.kind", "weights"}, {"zosched.step", "19"}})
                  .ok());
  absl::Status s = CheckInitFile(weights, spec());
  EXPECT_TRUE(s.ok()) << s;
  const std::string hf = RunFile("hf.safetensors");
  ASSERT_TRUE(SaveModelParameters(hf, spec(), Parts(), {}).ok());
  s = CheckInitFile(hf, spec());
  EXPECT_TRUE(s.ok()) << s;
}

// Step 0 of a one-direction run.
TrajectoryEntry OneStep() {
  TrajectoryEntry e;
  e.directions = {{11u, 0.5f}};
  e.lr = 1e-4f;
  return e;
}

// A run checkpoint's last update is still pending in its run's log:
// starting from it would silently drop that update.
TEST_F(InitFileTest, RefusesARunCheckpointAndSaysWhatToPassInstead) {
  const std::string path = RunFile("checkpoint.safetensors");
  ASSERT_TRUE(WriteRunCheckpoint(path, schedule_, {"0123456789abcdef0123456789abcdef", "--data=synthetic --task=sst2"}, Parts(),
                                 {OneStep()}).ok());
  const absl::Status s = CheckInitFile(path, spec());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s.message(), absl::StrCat("--init: ", path, " is a run checkpoint")));
  EXPECT_TRUE(Contains(s.message(), "would drop that update"));
  EXPECT_TRUE(Contains(s.message(), absl::StrCat("--resume --out_dir=", ::testing::TempDir())));
  EXPECT_TRUE(Contains(s.message(),
                       absl::StrCat("--init=", ::testing::TempDir(), "/weights.safetensors")));
}

TEST_F(InitFileTest, RefusesNonFiniteWeightsNamingTheElement) {
  values_[CountElements(EmbeddingTensors(spec())) + 3] = std::numeric_limits<float>::quiet_NaN();
  const std::string path = RunFile("nan.safetensors");
  ASSERT_TRUE(SaveModelParameters(path, spec(), Parts(), {{"zosched.kind", "weights"}}).ok());
  const absl::Status s = CheckInitFile(path, spec());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  // The first tensor of block 0 is its attention norm's weight, [8].
  EXPECT_TRUE(Contains(s.message(), absl::StrCat("--init: ", path,
                                                 ": tensor 'model.decoder.layers.0."
                                                 "self_attn_layer_norm.weight' element 3 ([3] in "
                                                 "shape [8]) is nan")));
}

// Every parameter of the model is checked, not only those a first part
// would load.
TEST_F(InitFileTest, RefusesAFileMissingATensor) {
  std::vector<TensorSpec> fewer(tensors_.begin(), tensors_.end() - 1);
  const std::string path = RunFile("fewer.safetensors");
  ASSERT_TRUE(SaveModelParameters(path, spec(), {{fewer, FP32, values_.data()}}, {}).ok());
  const absl::Status s = CheckInitFile(path, spec());
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_TRUE(Contains(s.message(), absl::StrCat("--init: ", path, ": tensor '",
                                                 tensors_.back().name, "' not found")));
}

TEST_F(InitFileTest, RefusesWhatIsNotAFile) {
  const std::string empty = RunFile("empty_dir");
  mkdir(empty.c_str(), 0755);
  absl::Status s = CheckInitFile(empty, spec());
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_TRUE(Contains(s.message(), absl::StrCat("--init: ", empty,
                                                 " is a directory holding neither "
                                                 "model.safetensors nor "
                                                 "model.safetensors.index.json")));
  s = CheckInitFile("/dev/zero", spec());
  EXPECT_EQ(s.message(),
            "--init: /dev/zero is not a regular file (a character device); expected a "
            ".safetensors file");
  s = CheckInitFile(RunFile("missing.safetensors"), spec());
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_TRUE(Contains(s.message(), "missing.safetensors: No such file or directory"));
}

// A LLaMA with grouped-query attention and an untied head, `layers` blocks.
ModelSpec TinyLlama(int layers) {
  ModelSpec spec;
  EXPECT_TRUE(ParseTextProto(absl::StrCat(R"pb(
    name: "tiny-llama" family: LLAMA hidden_size: 16 num_heads: 4 num_kv_heads: 2
    ffn_size: 24 vocab_size: 32 max_positions: 64 activation: SWIGLU norm: RMS_NORM
    norm_placement: PRE_NORM positional: ROTARY rope_theta: 10000 tied_lm_head: false
    linear_bias: false final_norm: true weight_dtype: BF16 num_layers: )pb", layers),
                             "tiny-llama", &spec)
                  .ok());
  EXPECT_TRUE(ValidateModelSpec(spec, "tiny-llama").ok());
  return spec;
}

// --init takes a Hugging Face checkpoint directory, sharded or not, its
// index, or its one file.
TEST(InitFileHfTest, AcceptsACheckpointDirectoryItsIndexOrItsFile) {
  const ModelSpec spec = TinyLlama(2);
  const std::string sharded = ::testing::TempDir() + "/init_llama_sharded";
  const std::string index = WriteHfCheckpoint(sharded, HfParameters(spec), 3);
  const std::string single = ::testing::TempDir() + "/init_llama_single";
  const std::string file = WriteHfCheckpoint(single, HfParameters(spec), 1);
  for (const std::string& path : {sharded, index, single, file}) {
    const absl::Status s = CheckInitFile(path, spec);
    EXPECT_TRUE(s.ok()) << s;
  }
}

TEST(InitFileHfTest, RefusesAMissingShardABiggerModelAndNonFiniteWeights) {
  const ModelSpec spec = TinyLlama(2);
  const std::string dir = ::testing::TempDir() + "/init_llama_missing_shard";
  const std::string index = WriteHfCheckpoint(dir, HfParameters(spec), 3);
  ASSERT_EQ(unlink((dir + "/" + ShardName(2, 3)).c_str()), 0);
  absl::Status s = CheckInitFile(dir, spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_TRUE(Contains(s.message(), absl::StrCat("--init: ", index, ": shard '", ShardName(2, 3),
                                                 "', which holds tensor 'model.layers.")));

  const std::string bigger = ::testing::TempDir() + "/init_llama_bigger";
  WriteHfCheckpoint(bigger, HfParameters(TinyLlama(4)), 3);
  s = CheckInitFile(bigger, spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s.message(), "--init: " + bigger + "/model-0000"));
  EXPECT_TRUE(Contains(s.message(), "tensor 'model.layers.2.input_layernorm.weight' (1 of 18 "
                                    "tensors not of model 'tiny-llama') is of block 2"));
  EXPECT_TRUE(Contains(s.message(), "which has blocks up to 3, is probably of a bigger model"));

  std::vector<HfTensor> hf = HfParameters(spec);
  for (HfTensor& t : hf) {
    if (t.name == "model.norm.weight") t.values[1] = std::numeric_limits<float>::infinity();
  }
  const std::string inf = ::testing::TempDir() + "/init_llama_inf";
  WriteHfCheckpoint(inf, hf, 3);
  s = CheckInitFile(inf, spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s.message(), absl::StrCat("--init: ", inf, "/", ShardName(3, 3),
                                                 ": tensor 'model.norm.weight' element 1 ([1] in "
                                                 "shape [16]) is inf")));
}

}  // namespace
}  // namespace zosched
