#include "runtime/checkpoint/checkpoint_files.h"

#include <sys/stat.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

// Whether `text` contains `part`, showing both if not.
::testing::AssertionResult Contains(absl::string_view text, absl::string_view part) {
  if (text.find(part) != absl::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

// A fresh directory for one test.
std::string Dir(const std::string& name) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/checkpoint_files_", name);
  mkdir(dir.c_str(), 0755);
  return dir;
}

// Writes a safetensors file at `path` holding one F32 scalar per name, the
// value of each its index in `names` plus `base`.
void WriteScalars(const std::string& path, const std::vector<std::string>& names,
                  float base = 0) {
  std::vector<float> values(names.size());
  std::vector<SafetensorsTensor> tensors;
  for (size_t i = 0; i < names.size(); ++i) {
    values[i] = base + i;
    SafetensorsTensor t;
    t.name = names[i];
    t.dtype = FP32;
    t.bytes = absl::string_view(reinterpret_cast<const char*>(&values[i]), 4);
    tensors.push_back(t);
  }
  ASSERT_TRUE(WriteSafetensors(path, tensors, {{"format", "pt"}}).ok());
}

float ValueOf(const SafetensorsTensor* t) {
  float v;
  memcpy(&v, t->bytes.data(), 4);
  return v;
}

// Two shards: a, b in the first; c in the second; and the index.
std::string WriteTwoShards(const std::string& dir) {
  WriteScalars(dir + "/model-00001-of-00002.safetensors", {"a", "b"}, 10);
  WriteScalars(dir + "/model-00002-of-00002.safetensors", {"c"}, 20);
  const std::string index = dir + "/model.safetensors.index.json";
  EXPECT_TRUE(WriteFile(index, R"({"metadata": {"total_size": 12}, "weight_map": {
      "a": "model-00001-of-00002.safetensors", "b": "model-00001-of-00002.safetensors",
      "c": "model-00002-of-00002.safetensors"}})")
                  .ok());
  return index;
}

TEST(CheckpointFilesTest, OpensASingleFileByItsPathOrItsDirectory) {
  const std::string dir = Dir("single");
  WriteScalars(dir + "/model.safetensors", {"x", "y"});
  for (const std::string& path : {dir + "/model.safetensors", dir, dir + "/"}) {
    absl::StatusOr<CheckpointFiles> checkpoint = CheckpointFiles::Open(path);
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
    EXPECT_EQ(checkpoint->path(), path);
    ASSERT_EQ(checkpoint->files().size(), 1u);
    ASSERT_EQ(checkpoint->tensors().size(), 2u);
    EXPECT_EQ(checkpoint->tensors()[1]->name, "y");
    ASSERT_NE(checkpoint->Find("y"), nullptr);
    EXPECT_EQ(ValueOf(checkpoint->Find("y")), 1.0f);
    EXPECT_EQ(checkpoint->Find("z"), nullptr);
    EXPECT_TRUE(Contains(checkpoint->PathOf(*checkpoint->Find("x")), "/model.safetensors"));
  }
}

// Each tensor from the shard the index names, by the directory or the
// index itself; every shard opened once.
TEST(CheckpointFilesTest, FindsTensorsAcrossShardsByDirectoryOrIndex) {
  const std::string dir = Dir("sharded");
  const std::string index = WriteTwoShards(dir);
  for (const std::string& path : {dir, index}) {
    absl::StatusOr<CheckpointFiles> opened = CheckpointFiles::Open(path);
    ASSERT_TRUE(opened.ok()) << opened.status();
    const CheckpointFiles checkpoint = *std::move(opened);  // pointers survive a move
    ASSERT_EQ(checkpoint.files().size(), 2u);
    ASSERT_EQ(checkpoint.tensors().size(), 3u);
    EXPECT_EQ(ValueOf(checkpoint.Find("a")), 10.0f);
    EXPECT_EQ(ValueOf(checkpoint.Find("b")), 11.0f);
    EXPECT_EQ(ValueOf(checkpoint.Find("c")), 20.0f);
    EXPECT_EQ(checkpoint.PathOf(*checkpoint.Find("c")),
              dir + "/model-00002-of-00002.safetensors");
    EXPECT_EQ(checkpoint.PathOf(*checkpoint.Find("a")),
              dir + "/model-00001-of-00002.safetensors");
  }
}

// Hugging Face's from_pretrained looks for model.safetensors first.
TEST(CheckpointFilesTest, ASingleFileWinsOverAnIndexInTheSameDirectory) {
  const std::string dir = Dir("both");
  WriteTwoShards(dir);
  WriteScalars(dir + "/model.safetensors", {"only"});
  absl::StatusOr<CheckpointFiles> checkpoint = CheckpointFiles::Open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ(checkpoint->files().size(), 1u);
  EXPECT_NE(checkpoint->Find("only"), nullptr);
}

// The index maps a tensor two shards hold to the second: that one is found.
// A tensor a shard holds but the index omits is found too.
TEST(CheckpointFilesTest, TheIndexChoosesTheShardAndUnlistedTensorsAreFound) {
  const std::string dir = Dir("choose");
  WriteScalars(dir + "/s1.safetensors", {"a", "extra"}, 10);
  WriteScalars(dir + "/s2.safetensors", {"a"}, 20);
  const std::string index = dir + "/x.index.json";
  ASSERT_TRUE(WriteFile(index, R"({"weight_map": {"a": "s2.safetensors"}})").ok());
  absl::StatusOr<CheckpointFiles> checkpoint = CheckpointFiles::Open(index);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  // Only s2 is named by the index: s1 is not opened.
  EXPECT_EQ(checkpoint->files().size(), 1u);
  EXPECT_EQ(ValueOf(checkpoint->Find("a")), 20.0f);
  ASSERT_TRUE(WriteFile(index, R"({"weight_map": {"a": "s2.safetensors",
                                                   "extra": "s1.safetensors"}})").ok());
  checkpoint = CheckpointFiles::Open(index);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ(ValueOf(checkpoint->Find("a")), 20.0f);
  EXPECT_EQ(ValueOf(checkpoint->Find("extra")), 11.0f);
  EXPECT_EQ(checkpoint->tensors().size(), 2u);
}

TEST(CheckpointFilesErrorTest, ADirectoryWithoutACheckpoint) {
  const std::string dir = Dir("empty");
  const absl::StatusOr<CheckpointFiles> checkpoint = CheckpointFiles::Open(dir);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(checkpoint.status().message(),
            dir + " is a directory holding neither model.safetensors nor "
                  "model.safetensors.index.json; expected a .safetensors file, a Hugging Face "
                  "checkpoint directory or its index (PyTorch .bin checkpoints are not read: "
                  "save the model with safe_serialization)");
}

// A zosched run's directory holds its weights under other names.
TEST(CheckpointFilesErrorTest, ADirectoryOfOtherSafetensorsFilesNamesThem) {
  const std::string dir = Dir("run");
  WriteScalars(dir + "/weights.safetensors", {"x"});
  WriteScalars(dir + "/checkpoint.safetensors", {"x"});
  const absl::StatusOr<CheckpointFiles> checkpoint = CheckpointFiles::Open(dir);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(checkpoint.status().message(),
                       "or its index (it holds checkpoint.safetensors, weights.safetensors: pass "
                       "the file by its path)"));
}

TEST(CheckpointFilesErrorTest, AMissingShardIsNamedWithATensorItHolds) {
  const std::string dir = Dir("missing_shard");
  const std::string index = WriteTwoShards(dir);
  ASSERT_EQ(unlink((dir + "/model-00002-of-00002.safetensors").c_str()), 0);
  const absl::StatusOr<CheckpointFiles> checkpoint = CheckpointFiles::Open(dir);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(checkpoint.status().message(),
                       index + ": shard 'model-00002-of-00002.safetensors', which holds tensor "
                               "'c' by the index, is missing: "));
  EXPECT_TRUE(Contains(checkpoint.status().message(), "No such file or directory"));
}

TEST(CheckpointFilesErrorTest, AShardNotHoldingWhatTheIndexSays) {
  const std::string dir = Dir("wrong_shard");
  const std::string index = WriteTwoShards(dir);
  ASSERT_TRUE(WriteFile(index, R"({"weight_map": {"a": "model-00001-of-00002.safetensors",
                                                   "c": "model-00001-of-00002.safetensors"}})")
                  .ok());
  const absl::StatusOr<CheckpointFiles> checkpoint = CheckpointFiles::Open(index);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(checkpoint.status().message(),
            index + ": tensor 'c' is mapped to shard 'model-00001-of-00002.safetensors', which "
                    "does not hold it (it holds 2 tensors): the index and the shards are not of "
                    "the same checkpoint");
}

TEST(CheckpointFilesErrorTest, MalformedIndexes) {
  const std::string dir = Dir("malformed");
  WriteTwoShards(dir);
  const std::string index = dir + "/model.safetensors.index.json";
  const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {R"({"weight_map": {"a": )",
       ": not valid JSON (a safetensors index): [json.exception.parse_error"},
      {R"([1])", ": no \"weight_map\" object"},
      {R"({"metadata": {}})", ": no \"weight_map\" object"},
      {R"({"weight_map": ["a"]})", ": no \"weight_map\" object"},
      {R"({"weight_map": {}})", ": \"weight_map\" lists no tensor"},
      {R"({"weight_map": {"a": 1}})",
       ": tensor 'a' is mapped to number, not the name of a shard file in the index's directory"},
      {R"({"weight_map": {"a": "../model-00001-of-00002.safetensors"}})",
       ": tensor 'a' is mapped to '../model-00001-of-00002.safetensors', not the name of a "
       "shard file"},
      {R"({"weight_map": {"a": ""}})", ": tensor 'a' is mapped to '', not the name"},
  };
  for (const auto& c : cases) {
    ASSERT_TRUE(WriteFile(index, c.text).ok());
    const absl::StatusOr<CheckpointFiles> checkpoint = CheckpointFiles::Open(dir);
    EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_TRUE(Contains(checkpoint.status().message(), index + c.message)) << c.text;
  }
}

// A shard that is not safetensors is refused with ReadSafetensors' message,
// naming the shard.
TEST(CheckpointFilesErrorTest, ABrokenShardIsNamed) {
  const std::string dir = Dir("broken_shard");
  WriteTwoShards(dir);
  ASSERT_TRUE(WriteFile(dir + "/model-00002-of-00002.safetensors", "abc").ok());
  const absl::StatusOr<CheckpointFiles> checkpoint = CheckpointFiles::Open(dir);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(checkpoint.status().message(),
                       dir + "/model-00002-of-00002.safetensors: 3 bytes, shorter than"));
}

TEST(CheckpointFilesErrorTest, AMissingFileOrIndex) {
  absl::StatusOr<CheckpointFiles> checkpoint =
      CheckpointFiles::Open(Dir("absent") + "/model.safetensors");
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kNotFound);
  checkpoint = CheckpointFiles::Open(Dir("absent") + "/model.safetensors.index.json");
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(checkpoint.status().message(), "model.safetensors.index.json"));
}

}  // namespace
}  // namespace zosched
