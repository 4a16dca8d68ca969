#include "schedule/lower_flags.h"

#include <string>
#include <vector>

#include "absl/flags/reflection.h"
#include "base/command_line.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"
#include "schedule/training_settings.h"

namespace zosched {
namespace {

using ::testing::HasSubstr;

class LowerFlagsTest : public ::testing::Test {
 protected:
  // Sets the flags from the command line "lower ARGS...", as lower does.
  void GiveFlags(std::vector<std::string> args) {
    args.insert(args.begin(), "lower");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    const absl::StatusOr<CommandLine> line =
        ParseCommandLineStrict(static_cast<int>(argv.size()), argv.data(), {"lower", "", ""});
    ASSERT_TRUE(line.ok()) << line.status();
  }

  // The message LowerOptionsFromFlags refuses ARGS with.
  std::string Refusal(const std::vector<std::string>& args) {
    GiveFlags(args);
    const absl::StatusOr<LowerOptions> options = LowerOptionsFromFlags();
    EXPECT_FALSE(options.ok()) << "accepted";
    return options.ok() ? "" : std::string(options.status().message());
  }

  absl::FlagSaver restore_;
};

TEST_F(LowerFlagsTest, FlagGivenForAStrategyThatDoesNotReadItIsRefused) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::string first_order =
      "it applies to single_device, ddp, zero_1, zero_2 and zero_3 only";
  const std::string ring = "it applies to zo2 and distzo2 only";
  const std::string zo = "it applies to mezo, zo2 and distzo2 only";
  const std::vector<Case> cases = {
      {{"--strategy=zo2", "--precision=bf16"},
       "--precision=bf16 does not apply to --strategy=zo2: " + first_order + "; drop it"},
      {{"--strategy=zo2", "--recompute"}, "--recompute=true does not apply to --strategy=zo2"},
      {{"--strategy=distzo2", "--flash_attention"},
       "--flash_attention=true does not apply to --strategy=distzo2: " + first_order},
      {{"--strategy=ddp", "--dp=2", "--block_slots=2"},
       "--block_slots=2 does not apply to --strategy=ddp: " + ring},
      {{"--strategy=mezo", "--block_slots=2"}, "--block_slots=2 does not apply to --strategy=mezo"},
      {{"--strategy=mezo", "--wire_dtype=FP16"},
       "--wire_dtype=FP16 does not apply to --strategy=mezo: " + ring},
      {{"--strategy=zero_2", "--dp=2", "--host_dtype=FP16"},
       "--host_dtype=FP16 does not apply to --strategy=zero_2: " + ring},
      {{"--strategy=zero_1", "--dp=2", "--bucket_mb=50"},
       "--bucket_mb=50 does not apply to --strategy=zero_1: it applies to ddp only; drop it"},
      {{"--strategy=fsdp_full_shard", "--dp=2", "--bucket_mb=50"},
       "--bucket_mb=50 does not apply to --strategy=fsdp_full_shard: it applies to ddp only"},
      {{"--strategy=zo2", "--pertp=2"},
       "--pertp=2 does not apply to --strategy=zo2: it applies to distzo2 only; drop it"},
      // Given at its default is given all the same.
      {{"--strategy=mezo", "--pertp=1"}, "--pertp=1 does not apply to --strategy=mezo"},
      {{"--strategy=zo2", "--slicing=false"}, "--slicing=false does not apply to --strategy=zo2"},
      {{"--strategy=single_device", "--dp=1"},
       "--dp=1 does not apply to --strategy=single_device: it applies to distzo2, ddp, zero_1, "
       "zero_2 and zero_3 only"},
      {{"--strategy=zo2", "--dp=2"}, "--dp=2 does not apply to --strategy=zo2"},
      {{"--strategy=ddp", "--dp=2", "--lr=0.1"},
       "--lr=0.1 does not apply to --strategy=ddp: " + zo},
      {{"--strategy=zero_3", "--dp=2", "--epsilon=0.01"}, "--epsilon=0.01 does not apply"},
      {{"--strategy=ddp", "--seed=3"}, "--seed=3 does not apply to --strategy=ddp"},
      {{"--strategy=ddp", "--weight_decay=0.1"}, "--weight_decay=0.1 does not apply"},
      {{"--strategy=ddp", "--label_words=3"}, "--label_words=3 does not apply"},
      {{"--strategy=zero_2", "--dp=2", "--directions=4"}, "--directions=4 does not apply"},
      {{"--strategy=zo2", "--directions=0"}, "--directions=0"},
      // Without --strategy, the default's.
      {{"--pertp=2"}, "--pertp=2 does not apply to --strategy=zo2 (the default)"},
  };
  for (const Case& c : cases) {
    absl::FlagSaver restore;  // each case from the defaults
    EXPECT_THAT(Refusal(c.args), HasSubstr(c.message)) << c.args.back();
  }
}

TEST_F(LowerFlagsTest, EachStrategyTakesItsOwnFlags) {
  GiveFlags({"--strategy=distzo2", "--pertp=2", "--dp=2", "--slicing=false", "--block_slots=2",
             "--host_dtype=FP16", "--wire_dtype=BF16", "--lr=1e-3", "--epsilon=1e-2", "--seed=4",
             "--weight_decay=0.1", "--label_words=3", "--batch=8", "--seq=16",
             "--directions=4"});
  absl::StatusOr<LowerOptions> o = LowerOptionsFromFlags();
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->strategy, DISTZO2);
  EXPECT_EQ(o->training.directions(), 4);
  EXPECT_EQ(o->pertp, 2);
  EXPECT_EQ(o->dp, 2);
  EXPECT_FALSE(o->slicing);
  EXPECT_EQ(o->block_slots, 2);
  EXPECT_EQ(o->training.wire_dtype(), BF16);
  EXPECT_EQ(o->training.base_seed(), 4u);
}

TEST_F(LowerFlagsTest, FirstOrderStrategiesTakeTheirs) {
  GiveFlags({"--strategy=ddp", "--dp=2", "--bucket_mb=50", "--precision=bf16", "--recompute",
             "--noflash_attention", "--compute_dtype=BF16", "--micro_batch=2"});
  absl::StatusOr<LowerOptions> o = LowerOptionsFromFlags();
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->strategy, DDP);
  EXPECT_EQ(o->bucket_bytes, int64_t{50} << 20);
  EXPECT_EQ(o->precision, BF16_FP32_GRADS);
  EXPECT_TRUE(o->recompute);
  EXPECT_FALSE(o->flash_attention);
}

TEST_F(LowerFlagsTest, FlagsLeftAtTheirDefaultsAreFine) {
  for (const char* strategy :
       {"mezo", "zo2", "distzo2", "single_device", "ddp", "zero_1", "zero_2", "zero_3"}) {
    absl::FlagSaver restore;  // each strategy from the defaults
    GiveFlags({std::string("--strategy=") + strategy, "--batch=8"});
    const absl::StatusOr<LowerOptions> o = LowerOptionsFromFlags();
    EXPECT_TRUE(o.ok()) << strategy << ": " << o.status();
  }
}

class AgreeWithScheduleTest : public LowerFlagsTest {
 protected:
  Schedule Lowered(StrategyKind strategy, int pertp) {
    LowerOptions o;
    o.strategy = strategy;
    o.pertp = pertp;
    o.training = DefaultTrainingSettings();
    absl::StatusOr<Schedule> s =
        LowerSchedule(*LoadModelSpec("opt-tiny"), *LoadCluster("local_cpu"), o);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : Schedule();
  }
};

TEST_F(AgreeWithScheduleTest, FlagsTheSchedulesStrategyReadsMayBeGivenWithoutStrategy) {
  GiveFlags({"--pertp=2", "--slicing=true", "--lr=5e-4"});
  EXPECT_TRUE(CheckFlagsAgreeWithSchedule(Lowered(DISTZO2, 2), "s.pb").ok());
}

TEST_F(AgreeWithScheduleTest, FlagTheSchedulesStrategyDoesNotReadIsRefused) {
  GiveFlags({"--slicing=false"});
  EXPECT_EQ(CheckFlagsAgreeWithSchedule(Lowered(ZO2, 1), "s.pb").message(),
            "--slicing=false does not apply to the schedule in s.pb (strategy zo2): it applies "
            "to distzo2 only; drop it");
}

TEST_F(AgreeWithScheduleTest, DisagreementIsRefused) {
  GiveFlags({"--lr=0.001"});
  EXPECT_THAT(CheckFlagsAgreeWithSchedule(Lowered(DISTZO2, 2), "s.pb").message(),
              HasSubstr("--lr=0.001 disagrees with learning_rate 0.0005 of the schedule in s.pb"));
}

TEST_F(AgreeWithScheduleTest, StrategyDisagreementIsReportedAsSuch) {
  GiveFlags({"--strategy=zo2", "--pertp=2"});
  EXPECT_THAT(CheckFlagsAgreeWithSchedule(Lowered(DISTZO2, 2), "s.pb").message(),
              HasSubstr("--strategy=zo2 disagrees with strategy distzo2 of the schedule in s.pb"));
}

}  // namespace
}  // namespace zosched
