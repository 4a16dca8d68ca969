#include "experiments/sweep_space.h"

#include <string>

#include "absl/strings/match.h"
#include "base/textproto.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

Sweep Parse(const std::string& text) {
  Sweep sweep;
  const absl::Status s = ParseTextProto(text, "test.pbtxt", &sweep);
  EXPECT_TRUE(s.ok()) << s;
  return sweep;
}

absl::Status ExpandError(const std::string& text) {
  return ExpandSweep(Parse(text), "sweep.pbtxt").status();
}

constexpr char kBase[] = R"pb(
  models: "opt-1.3b" batch: 16 seq_len: 512
  clusters { base: "hgx_h100" price_per_gpu_hour: 3 }
)pb";

// DistZO2 without dp tries every D whose P·D fits the 8 GPUs and divides the
// batch; the first-order strategies start at 2 devices, SINGLE_DEVICE uses 1.
TEST(SweepSpaceTest, EnumeratesGridsThatFit) {
  absl::StatusOr<SweepSpace> space = ExpandSweep(
      Parse(std::string(kBase) + R"pb(
        strategies { kind: DISTZO2 }
        strategies { kind: DDP }
        strategies { kind: SINGLE_DEVICE recompute: [ false, true ] }
      )pb"),
      "sweep.pbtxt");
  ASSERT_TRUE(space.ok()) << space.status();
  std::vector<std::string> labels;
  for (const SweepConfig& c : space->configs) labels.push_back(StrategyLabel(c));
  const std::vector<std::string> expected = {
      "distzo2 P1xD1 sliced, 3 slots", "distzo2 P1xD2 sliced, 3 slots",
      "distzo2 P1xD4 sliced, 3 slots", "distzo2 P1xD8 sliced, 3 slots",
      "distzo2 P2xD1 sliced, 3 slots", "distzo2 P2xD2 sliced, 3 slots",
      "distzo2 P2xD4 sliced, 3 slots", "ddp x2, amp",
      "ddp x4, amp",                   "ddp x8, amp",
      "single_device, amp",            "single_device, amp, recompute"};
  EXPECT_EQ(labels, expected);
  EXPECT_EQ(space->configs[6].gpus, 8);
  EXPECT_EQ(space->sweep.objective(), TOKENS_PER_S);  // the default
  EXPECT_EQ(space->sweep.best(), 10);
}

// A micro-batch that does not divide a D's share leaves that D out.
TEST(SweepSpaceTest, MicroBatchPrunesDegrees) {
  absl::StatusOr<SweepSpace> space = ExpandSweep(
      Parse(R"pb(
        models: "opt-1.3b" batch: 16 seq_len: 512 micro_batch: 4
        clusters { base: "hgx_h100" }
        strategies { kind: ZERO_3 }
      )pb"),
      "sweep.pbtxt");
  ASSERT_TRUE(space.ok()) << space.status();
  ASSERT_EQ(space->configs.size(), 2u);  // D = 2 (share 8) and 4 (share 4), not 8
  EXPECT_EQ(space->configs[1].options.dp, 4);
  EXPECT_EQ(space->configs[1].options.training.micro_batch_size(), 4);
}

TEST(SweepSpaceTest, KnobValuesFollowTheColumns) {
  absl::StatusOr<SweepSpace> space = ExpandSweep(
      Parse(std::string(kBase) + R"pb(strategies { kind: ZO2 wire_dtype: FP32 })pb"),
      "sweep.pbtxt");
  ASSERT_TRUE(space.ok()) << space.status();
  const std::vector<std::string> values = SweepKnobValues(*space, space->configs[0]);
  ASSERT_EQ(values.size(), SweepKnobColumns().size());
  auto value = [&](const std::string& column) {
    for (size_t i = 0; i < values.size(); ++i) {
      if (SweepKnobColumns()[i] == column) return values[i];
    }
    return std::string("no such column");
  };
  EXPECT_EQ(value("model"), "opt-1.3b");
  EXPECT_EQ(value("cluster"), "hgx_h100");
  EXPECT_EQ(value("strategy"), "zo2");
  EXPECT_EQ(value("wire_dtype"), "FP32");
  EXPECT_EQ(value("block_slots"), "3");
  EXPECT_EQ(value("pertp"), "");  // not a ZO2 knob
  EXPECT_EQ(value("price_per_gpu_hour"), "3");
  EXPECT_EQ(value("gpus"), "1");
}

// Every mistake names the file and the place, and says what would be right.
TEST(SweepSpaceTest, RefusesWhatWouldSweepNothingOrTheWrongThing) {
  const std::string base = kBase;
  const struct {
    std::string text, message;
  } cases[] = {
      {base, "at least one each of models, clusters and strategies"},
      {base + "strategies { }", "sweep.pbtxt: strategies[0]: kind is unset"},
      {base + "strategies { kind: MEZO pertp: 2 }",
       "strategies[0] (MEZO): pertp applies to DISTZO2 only"},
      {base + "strategies { kind: SINGLE_DEVICE dp: 2 }",
       "strategies[0] (SINGLE_DEVICE): dp applies to DISTZO2, DDP and ZERO_1/2/3 only"},
      {base + "strategies { kind: DISTZO2 pertp: 3 }", "pertp[0] is 3 (expected 1 or 2)"},
      {base + "strategies { kind: ZO2 block_slots: 0 }", "block_slots[0] is 0"},
      {base + "strategies { kind: DDP precision: PRECISION_RECIPE_UNSPECIFIED }",
       "precision[0] is unset"},
      {"models: \"opt-9z\" clusters { base: \"hgx_h100\" } strategies { kind: ZO2 }",
       "sweep.pbtxt: models[0]: unknown model 'opt-9z'"},
      {"models: \"opt-1.3b\" batch: 0 clusters { base: \"hgx_h100\" } strategies { kind: ZO2 }",
       "batch[0] is 0"},
      {"models: \"opt-1.3b\" clusters { base: \"hgx_h100\" } strategies { kind: ZO2 } "
       "objective: TOKENS_PER_DOLLAR",
       "cluster 'hgx_h100' has no price_per_gpu_hour"},
      {base + "strategies { kind: ZO2 } heat_maps { x: \"host_link\" y: \"model\" }",
       "heat_maps[0]: 'host_link' is not a knob column"},
      {base + "strategies { kind: ZO2 } best: 0 best: -1", "best is -1"},
      {"models: \"opt-1.3b\" clusters { base: \"hgx_h100\" host_link_gbps: -1 } "
       "strategies { kind: ZO2 }",
       "sweep.pbtxt: clusters[0]"},
  };
  for (const auto& c : cases) {
    const absl::Status s = ExpandError(c.text);
    EXPECT_TRUE(absl::IsInvalidArgument(s) || absl::IsNotFound(s)) << c.text << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), c.message)) << s.message();
  }
}

}  // namespace
}  // namespace zosched
