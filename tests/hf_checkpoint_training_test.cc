// A Hugging Face checkpoint of each family the runtime trains, in the
// family's own names, BF16 and sharded as transformers saves it (GPT-2 with
// transformers' "transformer." prefix), trains from `train --init=DIR` on
// real MPI ranks, and the weights.safetensors the run writes holds the same
// tensors under the same names and shapes, every one of them trained, and
// starts a further run (it loads back).
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/files.h"
#include "base/output_dir.h"
#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "runtime/checkpoint/hf_checkpoint_testdata.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/dtype/convert.h"

namespace zosched {
namespace {

// Runs train with `flags` (from the test's runfiles, where train/train is);
// the output into `log`. Returns its exit status.
int Train(const std::string& flags, const std::string& log) {
  const std::string command =
      absl::StrCat("train/train --strategy=zo2 --steps=3 --batch=4 --seq=16 --lr=1e-4 ",
                   "--eval_examples=16 --collective_timeout_s=120 ", flags, " >", log, " 2>&1");
  return std::system(command.c_str());
}

std::string Log(const std::string& path) {
  std::string text;
  EXPECT_TRUE(ReadFileToString(path, &text).ok()) << path;
  return text;
}

void TrainFromCheckpoint(const std::string& model, const std::string& prefix) {
  SCOPED_TRACE(model);
  absl::StatusOr<ModelSpec> spec = LoadModelSpec(model);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const std::string root = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", model);
  ASSERT_TRUE(MakeDirectories(root).ok()) << root;
  const std::vector<HfTensor> tensors = HfParameters(*spec, /*seed=*/5);
  WriteHfCheckpoint(root + "/checkpoint", WithPrefix(tensors, prefix), /*shards=*/3);

  const std::string log = root + "/train.log";
  ASSERT_EQ(Train(absl::StrFormat("--model=%s --init=%s/checkpoint --out_dir=%s/run", model,
                                  root, root),
                  log),
            0)
      << Log(log);

  absl::StatusOr<SafetensorsFile> saved = ReadSafetensors(root + "/run/weights.safetensors");
  ASSERT_TRUE(saved.ok()) << saved.status();
  std::map<std::string, const HfTensor*> expected;
  for (const HfTensor& t : tensors) expected[t.name] = &t;
  ASSERT_EQ(saved->tensors().size(), expected.size());
  for (const SafetensorsTensor& t : saved->tensors()) {
    const auto it = expected.find(t.name);
    ASSERT_NE(it, expected.end()) << "weights.safetensors holds '" << t.name
                                  << "', which the checkpoint did not";
    EXPECT_EQ(t.shape, it->second->shape) << t.name;
    const int64_t n = static_cast<int64_t>(it->second->values.size());
    std::vector<float> values(n);
    ConvertBuffer(t.dtype, t.bytes.data(), FP32, values.data(), n);
    int64_t changed = 0;
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_TRUE(std::isfinite(values[i])) << t.name << " element " << i;
      changed += values[i] != it->second->values[i];
    }
    EXPECT_GT(changed, 0) << t.name << " was not trained";
  }
  // What it saved starts a run of its own.
  ASSERT_EQ(Train(absl::StrFormat("--model=%s --init=%s/run/weights.safetensors --out_dir=%s/again",
                                  model, root, root),
                  log),
            0)
      << Log(log);
}

TEST(HfCheckpointTraining, Llama) { TrainFromCheckpoint("llama-tiny", ""); }
TEST(HfCheckpointTraining, Qwen2) { TrainFromCheckpoint("qwen2-tiny", ""); }
TEST(HfCheckpointTraining, Qwen3) { TrainFromCheckpoint("qwen3-tiny", ""); }
TEST(HfCheckpointTraining, Gpt2WithTransformersPrefix) {
  TrainFromCheckpoint("gpt2-tiny", "transformer.");
}

}  // namespace
}  // namespace zosched
