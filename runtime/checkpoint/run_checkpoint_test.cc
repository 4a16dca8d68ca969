#include "runtime/checkpoint/run_checkpoint.h"

#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/textproto.h"
#include "gtest/gtest.h"
#include "runtime/checkpoint/tiny_schedule_testdata.h"
#include "models/model_spec.h"
#include "models/model_tensors.h"
#include "runtime/checkpoint/content_hash.h"

namespace zosched {
namespace {

Schedule TinySchedule() {
  Schedule schedule;
  EXPECT_TRUE(ParseTextProto(kTinyScheduleText, "tiny", &schedule).ok());
  return schedule;
}

struct Parameters {
  std::vector<TensorSpec> tensors;
  std::vector<float> values;
  std::vector<ParameterPart> Parts() const { return {{tensors, FP32, values.data()}}; }
};

Parameters TinyParameters(const ModelSpec& spec) {
  Parameters p;
  p.tensors = EmbeddingTensors(spec);
  for (int64_t l = 0; l < spec.num_layers(); ++l) {
    for (const TensorSpec& t : BlockTensors(spec, l)) p.tensors.push_back(t);
  }
  p.values.resize(CountElements(p.tensors));
  for (size_t i = 0; i < p.values.size(); ++i) p.values[i] = 0.001f * i;
  return p;
}

std::vector<TrajectoryEntry> Trajectory(int steps, float g0 = 0.5f) {
  std::vector<TrajectoryEntry> t;
  for (int s = 0; s < steps; ++s) {
    TrajectoryEntry e;
    e.step = s;
    e.directions = {{1000u + s, g0 + s}};
    e.lr = 1e-4f;
    t.push_back(e);
  }
  return t;
}

class RunCheckpointTest : public ::testing::Test {
 protected:
  const std::string path_ = absl::StrCat(::testing::TempDir(), "/run_checkpoint.safetensors");
  const Schedule schedule_ = TinySchedule();
  const Parameters parameters_ = TinyParameters(schedule_.model());
  const RunData data_ = {"0123456789abcdef0123456789abcdef", "--data=synthetic --task=sst2"};
};

TEST_F(RunCheckpointTest, RefusesARunOnOtherData) {
  ASSERT_TRUE(WriteRunCheckpoint(path_, schedule_, data_, parameters_.Parts(), Trajectory(3)).ok());
  const RunData other = {"fedcba9876543210fedcba9876543210", "--data=/data/boolq --task=boolq"};
  const absl::Status s = OpenRunCheckpoint(path_, schedule_, other, Trajectory(3)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "was written by a run on other data: it trained on "
                                             "--data=synthetic --task=sst2, this run reads "
                                             "--data=/data/boolq --task=boolq"))
      << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "resume with the data the run started with")) << s;
}

TEST_F(RunCheckpointTest, OpensWhatItWroteAndSaysHowMuchOfTheLogItHolds) {
  const std::vector<TrajectoryEntry> log = Trajectory(9);
  const std::vector<TrajectoryEntry> first(log.begin(), log.begin() + 5);
  ASSERT_TRUE(WriteRunCheckpoint(path_, schedule_, data_, parameters_.Parts(), first).ok());
  // The log may run past the checkpoint (those steps replay on top of it).
  absl::StatusOr<RunCheckpoint> c = OpenRunCheckpoint(path_, schedule_, data_, log);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->trajectory_length, 5);
  EXPECT_EQ(c->file.metadata().at("zosched.step"), "4");
  // The initial checkpoint holds no step.
  ASSERT_TRUE(WriteRunCheckpoint(path_, schedule_, data_, parameters_.Parts(), {}).ok());
  c = OpenRunCheckpoint(path_, schedule_, data_, log);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->trajectory_length, 0);
  EXPECT_EQ(c->file.metadata().at("zosched.step"), "-1");
}

TEST_F(RunCheckpointTest, AFlippedBitIsRefused) {
  ASSERT_TRUE(WriteRunCheckpoint(path_, schedule_, data_, parameters_.Parts(), Trajectory(3)).ok());
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-5, std::ios::end);
    char c = 0;
    f.read(&c, 1);
    f.seekp(-5, std::ios::end);
    c ^= 0x10;
    f.write(&c, 1);
  }
  const absl::Status s = OpenRunCheckpoint(path_, schedule_, data_, Trajectory(3)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("is corrupted"), std::string::npos) << s;
}

TEST_F(RunCheckpointTest, TheFinalWeightsFileIsNotACheckpoint) {
  ASSERT_TRUE(SaveModelParameters(path_, schedule_.model(), parameters_.Parts(),
                                  {{"zosched.kind", "weights"}, {"zosched.step", "2"}})
                  .ok());
  const absl::Status s = OpenRunCheckpoint(path_, schedule_, data_, Trajectory(3)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("holds weights, not a run checkpoint"), std::string::npos) << s;
  // Nor is a file zosched did not write as one.
  ASSERT_TRUE(SaveModelParameters(path_, schedule_.model(), parameters_.Parts(), {}).ok());
  EXPECT_EQ(OpenRunCheckpoint(path_, schedule_, data_, Trajectory(3)).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(RunCheckpointTest, AnotherModelScheduleOrRunIsRefused) {
  ASSERT_TRUE(WriteRunCheckpoint(path_, schedule_, data_, parameters_.Parts(), Trajectory(4)).ok());
  Schedule other_model = schedule_;
  other_model.mutable_model()->set_name("other-opt");
  absl::Status s = OpenRunCheckpoint(path_, other_model, data_, Trajectory(4)).status();
  EXPECT_NE(s.message().find("model 'tiny-opt', but this run trains 'other-opt'"),
            std::string::npos) << s;

  Schedule other_schedule = schedule_;
  other_schedule.mutable_training()->set_learning_rate(2e-4);
  s = OpenRunCheckpoint(path_, other_schedule, data_, Trajectory(4)).status();
  EXPECT_NE(s.message().find("another schedule"), std::string::npos) << s;
  // The cluster is not part of what a schedule computes.
  Schedule other_cluster = schedule_;
  other_cluster.mutable_cluster()->set_name("faster links");
  EXPECT_TRUE(OpenRunCheckpoint(path_, other_cluster, data_, Trajectory(4)).ok());

  s = OpenRunCheckpoint(path_, schedule_, data_, Trajectory(4, /*g0=*/0.25f)).status();
  EXPECT_NE(s.message().find("belongs to another run"), std::string::npos) << s;
  s = OpenRunCheckpoint(path_, schedule_, data_, Trajectory(3)).status();
  EXPECT_NE(s.message().find("includes 4 steps but trajectory.log has only 3"),
            std::string::npos) << s;
}

// What --init refuses: a run checkpoint of any run; not the final weights
// nor a file zosched did not write.
TEST_F(RunCheckpointTest, IsRunCheckpointTellsACheckpointFromWeights) {
  ASSERT_TRUE(WriteRunCheckpoint(path_, schedule_, data_, parameters_.Parts(), Trajectory(3)).ok());
  EXPECT_TRUE(IsRunCheckpoint(*ReadSafetensors(path_)));
  ASSERT_TRUE(SaveModelParameters(path_, schedule_.model(), parameters_.Parts(),
                                  {{"zosched.kind", "weights"}})
                  .ok());
  EXPECT_FALSE(IsRunCheckpoint(*ReadSafetensors(path_)));
  ASSERT_TRUE(SaveModelParameters(path_, schedule_.model(), parameters_.Parts(), {}).ok());
  EXPECT_FALSE(IsRunCheckpoint(*ReadSafetensors(path_)));
}

// A checkpoint whose hash is right but whose weights are not finite (a run
// that diverged before it stopped): --resume loads it with
// LoadModelParameters, which refuses it, naming the element.
TEST_F(RunCheckpointTest, ResumingRefusesNonFiniteWeights) {
  Parameters bad = parameters_;
  bad.values[7] = std::numeric_limits<float>::infinity();
  ASSERT_TRUE(WriteRunCheckpoint(path_, schedule_, data_, bad.Parts(), Trajectory(3)).ok());
  ASSERT_TRUE(OpenRunCheckpoint(path_, schedule_, data_, Trajectory(3)).ok());
  std::vector<float> out(bad.values.size());
  const absl::Status s =
      LoadModelParameters(path_, schedule_.model(), bad.tensors, FP32, out.data());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find(path_ + ": tensor 'model.decoder.embed_tokens.weight' element 7 "
                                     "([0, 7] in shape [32, 8]) is inf"),
            std::string::npos)
      << s;
}

// A one-direction log hashes as it always did (step, seed, g, lr of each
// entry, as the machine holds them), so checkpoints written before n-SPSA
// still open; every direction's seed and g count.
TEST(TrajectoryHash, OneDirectionKeepsTheFormerBytesAndEveryDirectionCounts) {
  const std::vector<TrajectoryEntry> one = Trajectory(3);
  std::string bytes;
  for (const TrajectoryEntry& e : one) {
    bytes.append(reinterpret_cast<const char*>(&e.step), sizeof(e.step));
    bytes.append(reinterpret_cast<const char*>(&e.directions[0].seed), sizeof(uint64_t));
    bytes.append(reinterpret_cast<const char*>(&e.directions[0].g), sizeof(float));
    bytes.append(reinterpret_cast<const char*>(&e.lr), sizeof(float));
  }
  EXPECT_EQ(TrajectoryHash(one, 3), HashBytes(bytes));
  std::vector<TrajectoryEntry> two = one;
  for (TrajectoryEntry& e : two) e.directions.push_back({7u, 0.25f});
  const std::string with_two = TrajectoryHash(two, 3);
  EXPECT_NE(with_two, TrajectoryHash(one, 3));
  two[1].directions[1].g = 0.5f;
  EXPECT_NE(TrajectoryHash(two, 3), with_two);
}

TEST(ContentHash, DependsOnEveryByteAndNameButNotOnOrder) {
  const std::string a = "abcd", b = "abce";
  SafetensorsTensor x{"x", "U8", DTYPE_UNSPECIFIED, {4}, a};
  SafetensorsTensor y{"y", "U8", DTYPE_UNSPECIFIED, {4}, a};
  SafetensorsTensor x2{"x", "U8", DTYPE_UNSPECIFIED, {4}, b};
  SafetensorsTensor z{"z", "U8", DTYPE_UNSPECIFIED, {4}, a};
  EXPECT_EQ(ContentHash({x, y}), ContentHash({y, x}));
  EXPECT_NE(ContentHash({x, y}), ContentHash({x2, y}));
  EXPECT_NE(ContentHash({x, y}), ContentHash({x, z}));
  EXPECT_EQ(ContentHash({x}).size(), 32u);
}

}  // namespace
}  // namespace zosched
