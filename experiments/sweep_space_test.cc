#include "experiments/sweep_space.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/textproto.h"
#include "models/model_zoo.h"
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

// The value of configurations.csv's `column` for `config`.
std::string KnobValue(const SweepSpace& space, const SweepConfig& config,
                      const std::string& column) {
  const std::vector<std::string> values = SweepKnobValues(space, config);
  for (size_t i = 0; i < values.size(); ++i) {
    if (SweepKnobColumns()[i] == column) return values[i];
  }
  ADD_FAILURE() << "no column " << column;
  return "";
}

constexpr char kBase[] = R"pb(
  name: "test"
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
        name: "test"
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
  EXPECT_EQ(value("directions"), "1");
  EXPECT_EQ(value("price_per_gpu_hour"), "3");
  EXPECT_EQ(value("gpus"), "1");
  EXPECT_EQ(value("compute_profile"), "zosched_cuda");
}

// The directions axis: each q in turn with every other knob under it; a P
// that does not divide 2q stays in the sweep, for lowering to refuse with
// its reason.
TEST(SweepSpaceTest, DirectionsMultiplyTheZoConfigurations) {
  absl::StatusOr<SweepSpace> space = ExpandSweep(
      Parse(std::string(kBase) +
            R"pb(strategies { kind: ZO2 directions: 1 directions: 4 }
                 strategies { kind: DISTZO2 pertp: 2 pertp: 4 dp: 1 directions: 1 directions: 4 })pb"),
      "sweep.pbtxt");
  ASSERT_TRUE(space.ok()) << space.status();
  std::vector<std::pair<int, int>> q_and_p;
  for (const SweepConfig& c : space->configs) {
    q_and_p.push_back({c.options.training.directions(), c.options.pertp});
  }
  EXPECT_EQ(q_and_p, (std::vector<std::pair<int, int>>{{0, 1}, {4, 1}, {0, 2}, {0, 4}, {4, 2},
                                                       {4, 4}}));
  EXPECT_EQ(StrategyLabel(space->configs[1]), "zo2, 3 slots, 4 directions");
}

// The peft axis: full-parameter ZO and LoRA at each rank, every other knob
// under each; LoRA's ring keeps 2 slots unless block_slots says otherwise.
TEST(SweepSpaceTest, PeftAndRankMultiplyTheZoConfigurations) {
  absl::StatusOr<SweepSpace> space = ExpandSweep(
      Parse(std::string(kBase) +
            R"pb(strategies { kind: ZO2 peft: PEFT_NONE peft: LORA lora_rank: 8 lora_rank: 64 })pb"),
      "sweep.pbtxt");
  ASSERT_TRUE(space.ok()) << space.status();
  ASSERT_EQ(space->configs.size(), 3u);
  EXPECT_EQ(space->configs[0].options.training.peft().kind(), PEFT_NONE);
  EXPECT_EQ(space->configs[0].options.block_slots, 3);
  EXPECT_EQ(space->configs[1].options.training.peft().lora_rank(), 8);
  EXPECT_EQ(space->configs[1].options.block_slots, 2);
  EXPECT_EQ(space->configs[2].options.training.peft().lora_rank(), 64);
  EXPECT_EQ(StrategyLabel(space->configs[2]), "zo2, 2 slots, lora r64");
  EXPECT_EQ(KnobValue(*space, space->configs[0], "peft"), "none");
  EXPECT_EQ(KnobValue(*space, space->configs[1], "peft"), "lora r8");
  absl::StatusOr<SweepSpace> stray = ExpandSweep(
      Parse(std::string(kBase) + R"pb(strategies { kind: ZO2 lora_rank: 8 })pb"), "sweep.pbtxt");
  ASSERT_FALSE(stray.ok());
  EXPECT_NE(stray.status().message().find("lora_rank is set but peft lists no LORA"),
            std::string::npos)
      << stray.status();
  absl::StatusOr<SweepSpace> first_order = ExpandSweep(
      Parse(std::string(kBase) + R"pb(strategies { kind: DDP peft: LORA })pb"), "sweep.pbtxt");
  ASSERT_FALSE(first_order.ok());
}

// Prefix tuning beside LoRA and every parameter: k virtual tokens, MeZO's
// 5 by default, each k listed a configuration of its own with the other
// knobs under it; the Peft holds the kind and k alone, the ring keeps 2
// slots (a frozen base), and the CSV and labels show "prefix k5".
TEST(SweepSpaceTest, PrefixTokensMultiplyThePrefixConfigurations) {
  absl::StatusOr<SweepSpace> space = ExpandSweep(
      Parse(std::string(kBase) +
            R"pb(strategies { kind: ZO2 peft: [ PEFT_NONE, LORA, PREFIX ] }
                 strategies { kind: MEZO peft: PREFIX prefix_tokens: [ 5, 32 ] })pb"),
      "sweep.pbtxt");
  ASSERT_TRUE(space.ok()) << space.status();
  ASSERT_EQ(space->configs.size(), 5u);
  const SweepConfig& zo2_prefix = space->configs[2];
  const Peft& peft = zo2_prefix.options.training.peft();
  EXPECT_EQ(peft.kind(), PREFIX);
  EXPECT_EQ(peft.prefix_tokens(), 5);
  EXPECT_EQ(peft.lora_rank(), 0);
  EXPECT_EQ(peft.lora_alpha(), 0);
  EXPECT_EQ(zo2_prefix.options.block_slots, 2);
  EXPECT_EQ(StrategyLabel(zo2_prefix), "zo2, 2 slots, prefix k5");
  EXPECT_EQ(KnobValue(*space, zo2_prefix, "peft"), "prefix k5");
  EXPECT_EQ(StrategyLabel(space->configs[1]), "zo2, 2 slots, lora r8");
  EXPECT_EQ(space->configs[1].options.training.peft().prefix_tokens(), 0);
  EXPECT_EQ(StrategyLabel(space->configs[3]), "mezo, prefix k5");
  EXPECT_EQ(StrategyLabel(space->configs[4]), "mezo, prefix k32");
  EXPECT_EQ(KnobValue(*space, space->configs[4], "peft"), "prefix k32");

  for (const auto& [strategy, message] : std::vector<std::pair<std::string, std::string>>{
           {"strategies { kind: ZO2 peft: LORA prefix_tokens: 5 }",
            "prefix_tokens is set but peft lists no PREFIX (add peft: PREFIX, or drop "
            "prefix_tokens)"},
           {"strategies { kind: ZO2 peft: PREFIX prefix_tokens: 0 }", "prefix_tokens"},
           {"strategies { kind: ZO2 peft: PREFIX prefix_tokens: 4097 }", "prefix_tokens"},
           {"strategies { kind: ZO2 peft: PREFIX prefix_tokens: [ 5, 5 ] }", "prefix_tokens"},
           {"strategies { kind: ZO2 peft: [ PREFIX, PREFIX ] }", "peft"},
           {"strategies { kind: ZERO_3 peft: PREFIX }", "peft applies to MEZO, ZO2 and DISTZO2"}}) {
    const absl::Status status = ExpandError(std::string(kBase) + strategy);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << strategy;
    EXPECT_TRUE(absl::StrContains(status.message(), message)) << strategy << ": " << status;
  }
}

// Without a compute_profile, each configuration takes its kernel-level
// profile: zosched's CUDA kernels for ZO (every family), PyTorch eager for
// first-order AMP training of OPT and GPT-2.
TEST(SweepSpaceTest, EachConfigurationHasItsKernelLevelProfile) {
  absl::StatusOr<SweepSpace> space = ExpandSweep(
      Parse(R"pb(
        name: "test"
        models: [ "opt-1.3b", "llama3.2-1b" ]
        batch: 16 seq_len: 512
        clusters { base: "h100_sxm_x2" }
        strategies { kind: MEZO }
        strategies { kind: DISTZO2 pertp: 2 }
      )pb"),
      "sweep.pbtxt");
  ASSERT_TRUE(space.ok()) << space.status();
  absl::StatusOr<SweepSpace> first_order = ExpandSweep(
      Parse(std::string(kBase) + R"pb(strategies { kind: DDP dp: 2 })pb"), "sweep.pbtxt");
  ASSERT_TRUE(first_order.ok()) << first_order.status();
  space->configs.push_back(first_order->configs[0]);
  std::vector<std::string> profiles;
  for (const SweepConfig& c : space->configs) {
    profiles.push_back(space->sweep.models(c.model) + " " + StrategyLabel(c) + ": " +
                       ComputeProfile_Name(c.profile));
  }
  const std::vector<std::string> expected = {
      "opt-1.3b mezo: ZOSCHED_CUDA",
      "opt-1.3b distzo2 P2xD1 sliced, 3 slots: ZOSCHED_CUDA",
      "llama3.2-1b mezo: ZOSCHED_CUDA",
      "llama3.2-1b distzo2 P2xD1 sliced, 3 slots: ZOSCHED_CUDA",
      "opt-1.3b ddp x2, amp: PYTORCH_FIRST_ORDER"};
  EXPECT_EQ(profiles, expected);
}

// A named profile, in any case, costs every configuration.
TEST(SweepSpaceTest, ANamedProfileCostsEveryConfiguration) {
  for (const char* name : {"roofline", "ROOFLINE"}) {
    absl::StatusOr<SweepSpace> space = ExpandSweep(
        Parse(std::string(kBase) + "strategies { kind: ZO2 } strategies { kind: DDP dp: 2 " +
              "recompute: [ false, true ] precision: [ AMP_FP32_MASTER, BF16_FP32_GRADS ] } " +
              "compute_profile: \"" + name + "\""),
        "sweep.pbtxt");
    ASSERT_TRUE(space.ok()) << space.status();
    for (const SweepConfig& c : space->configs) EXPECT_EQ(c.profile, ROOFLINE);
  }
  absl::StatusOr<SweepSpace> space = ExpandSweep(
      Parse(std::string(kBase) + R"pb(strategies { kind: ZO2 } compute_profile: "pytorch_zo2")pb"),
      "sweep.pbtxt");
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(space->configs[0].profile, PYTORCH_ZO2);
}

// A profile that names none, or that does not run every configuration, is
// refused naming the file, the field, the strategy and model it cannot cost
// and what would.
TEST(SweepSpaceTest, RefusesAProfileThatDoesNotFit) {
  const std::string base = kBase;
  const struct {
    std::string text, message;
  } cases[] = {
      {base + R"pb(strategies { kind: ZO2 } compute_profile: "flash")pb",
       "sweep.pbtxt: compute_profile 'flash' is not a compute profile (expected roofline, "
       "zosched_cuda, pytorch_mezo, pytorch_zo2, pytorch_first_order or megatron_first_order, "
       "in any case; or leave it out for each configuration's kernel-level profile)"},
      {base + R"pb(strategies { kind: MEZO } compute_profile: "pytorch_first_order")pb",
       "sweep.pbtxt: compute_profile 'pytorch_first_order' cannot cost strategies[0] (MEZO) of "
       "models[0] 'opt-1.3b': pytorch_first_order (PyTorch eager training) runs the first-order "
       "strategies (SINGLE_DEVICE, DDP, ZERO_1/2/3), not MEZO (expected zosched_cuda, "
       "pytorch_mezo, pytorch_zo2 or roofline); or leave compute_profile out for each "
       "configuration's kernel-level profile"},
      {base + R"pb(strategies { kind: ZO2 }
                   strategies { kind: DDP }
                   compute_profile: "zosched_cuda")pb",
       "compute_profile 'zosched_cuda' cannot cost strategies[1] (DDP, precision "
       "AMP_FP32_MASTER) of models[0] 'opt-1.3b': zosched_cuda (zosched's CUDA backend) runs "
       "the ZO strategies (MEZO, ZO2, DISTZO2), not DDP (expected pytorch_first_order or "
       "roofline)"},
      {base + R"pb(strategies { kind: DDP precision: [ AMP_FP32_MASTER, BF16_FP32_GRADS ] }
                   compute_profile: "pytorch_first_order")pb",
       "cannot cost strategies[0] (DDP, precision BF16_FP32_GRADS) of models[0] 'opt-1.3b': "
       "pytorch_first_order (PyTorch eager training) trains FP32 parameters (precision "
       "AMP_FP32_MASTER), not BF16_FP32_GRADS (expected megatron_first_order or roofline)"},
      {R"pb(name: "t" models: [ "opt-1.3b", "qwen3-0.6b" ] clusters { base: "hgx_h100" }
            strategies { kind: ZO2 } compute_profile: "pytorch_zo2")pb",
       "cannot cost strategies[0] (ZO2) of models[1] 'qwen3-0.6b': pytorch_zo2 (ZO2's PyTorch "
       "code) runs OPT and GPT-2 models, not QWEN3 (expected zosched_cuda or roofline)"},
      {base + R"pb(strategies { kind: ZERO_3 recompute: [ false, true ] }
                   compute_profile: "megatron_first_order")pb",
       "cannot cost strategies[0] (ZERO_3, precision AMP_FP32_MASTER) of models[0] "
       "'opt-1.3b': megatron_first_order (Megatron-LM's GPT training) trains BF16 parameters "
       "with FP32 gradients (precision BF16_FP32_GRADS), not AMP_FP32_MASTER (expected "
       "pytorch_first_order or roofline)"},
      // With none named, what no kernel-level profile runs: its roofline step
      // would be ranked beside kernel-level ones.
      {R"pb(name: "t" models: "qwen3-0.6b" clusters { base: "hgx_h100" }
            strategies { kind: ZO2 } strategies { kind: DDP recompute: [ false, true ] })pb",
       "sweep.pbtxt: strategies[1] (DDP, precision AMP_FP32_MASTER) of models[0] 'qwen3-0.6b' "
       "has no kernel-level compute profile: pytorch_first_order (PyTorch eager training) runs "
       "OPT and GPT-2 models, not QWEN3 (expected roofline). A step at the roofline ranked "
       "beside kernel-level ones would mislead: set compute_profile: \"roofline\" to predict "
       "every configuration at the roofline, or leave this one out of the sweep"},
      {base + R"pb(strategies { kind: DISTZO2 } compute_profile: "pytorch_mezo")pb",
       "pytorch_mezo (ZO2's PyTorch code) runs MEZO and ZO2 on one GPU, not DISTZO2"},
  };
  for (const auto& c : cases) {
    const absl::Status s = ExpandError(c.text);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << c.text << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), c.message)) << s.message();
  }
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
      {base + "strategies { kind: DISTZO2 pertp: 3 }",
       "pertp[0] is 3 (expected a P that divides 2q, the forward passes of a step, for some q of "
       "directions 1"},
      {base + "strategies { kind: DISTZO2 pertp: 1 pertp: 4 directions: 1 directions: 3 }",
       "pertp[1] is 4"},
      {base + "strategies { kind: DDP directions: 2 }", "directions applies to"},
      {base + "strategies { kind: ZO2 directions: 0 }", "directions[0] is 0"},
      {base + "strategies { kind: ZO2 block_slots: 0 }", "block_slots[0] is 0"},
      {base + "strategies { kind: DDP precision: PRECISION_RECIPE_UNSPECIFIED }",
       "precision[0] is unset"},
      {"name: \"t\" models: \"opt-9z\" clusters { base: \"hgx_h100\" } strategies { kind: ZO2 }",
       "sweep.pbtxt: models[0]: unknown model 'opt-9z'"},
      {"name: \"t\" models: \"opt-1.3b\" batch: 0 clusters { base: \"hgx_h100\" } "
       "strategies { kind: ZO2 }",
       "batch[0] is 0"},
      {"name: \"t\" models: \"opt-1.3b\" clusters { base: \"hgx_h100\" } "
       "strategies { kind: ZO2 } objective: TOKENS_PER_DOLLAR",
       "cluster 'hgx_h100' has no price_per_gpu_hour"},
      {base + "strategies { kind: ZO2 } heat_maps { x: \"host_link\" y: \"model\" }",
       "heat_maps[0]: 'host_link' is not a knob column"},
      {base + "strategies { kind: ZO2 } best: 0 best: -1", "best is -1"},
      {"name: \"t\" models: \"opt-1.3b\" clusters { base: \"hgx_h100\" host_link_gbps: -1 } "
       "strategies { kind: ZO2 }",
       "sweep.pbtxt: clusters[0]"},
  };
  for (const auto& c : cases) {
    const absl::Status s = ExpandError(c.text);
    EXPECT_TRUE(absl::IsInvalidArgument(s) || absl::IsNotFound(s)) << c.text << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), c.message)) << s.message();
  }
}

// Where outputs go is out/explore/NAME: a name is required, and it must be a
// plain directory name, so that nothing lands in out/explore/ or above it.
TEST(SweepSpaceTest, RequiresAPlainName) {
  const std::string rest = R"pb(
    models: "opt-1.3b"
    clusters { base: "hgx_h100" }
    strategies { kind: ZO2 }
  )pb";
  EXPECT_TRUE(ExpandSweep(Parse("name: \"my-sweep_2.b\"" + rest), "sweep.pbtxt").ok());
  const struct {
    std::string name, message;
  } cases[] = {
      {"", "sweep.pbtxt: name is missing (expected a directory name for out/explore/NAME"},
      {"..", "name '..' starts with '.'"},
      {".hidden", "name '.hidden' starts with '.'"},
      {"a/b", "name 'a/b' has '/' at character 2"},
      {"my sweep", "name 'my sweep' has ' ' at character 3"},
      {std::string(101, 'x'), "name has 101 characters"},
  };
  for (const auto& c : cases) {
    const absl::Status s = ExpandError("name: \"" + c.name + "\"" + rest);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << c.name << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), c.message)) << s.message();
  }
}

// No number of a sweep is taken on trust: NaN, infinities, negatives and
// enum values without a name are refused, naming the field.
TEST(SweepSpaceTest, RefusesNumbersOutOfRange) {
  const std::string base = std::string(kBase) + "strategies { kind: ZO2 } ";
  const struct {
    std::string text, message;
  } cases[] = {
      {base + "constraints { min_tokens_per_s: nan }",
       "sweep.pbtxt: constraints.min_tokens_per_s is nan (expected a finite number of tokens/s "
       ">= 0; 0: no bound)"},
      {base + "constraints { min_tokens_per_s: -inf }", "constraints.min_tokens_per_s is -inf"},
      {base + "constraints { max_dollars_per_hour: inf }",
       "constraints.max_dollars_per_hour is inf"},
      {base + "constraints { min_headroom_gib: -0.5 }", "constraints.min_headroom_gib is -0.5"},
      {base + "constraints { max_gpus: -1 }", "constraints.max_gpus is -1"},
      {base + "objective: 9", "objective is 9, not an objective (expected STEP_TIME"},
      {base + "best: 1001", "best is 1001 (expected 1 to 1000)"},
      {std::string(kBase) + "strategies { kind: 42 }",
       "strategies[0]: kind is 42, not a strategy (expected MEZO"},
      {std::string(kBase) + "strategies { kind: ZO2 wire_dtype: 7 }",
       "strategies[0]: wire_dtype[0] is 7, not a DType (expected FP32, FP16 or BF16)"},
      {std::string(kBase) + "strategies { kind: DDP precision: 9 }",
       "strategies[0]: precision[0] is 9, not a PrecisionRecipe"},
      {std::string(kBase) + "strategies { kind: ZO2 block_slots: 1025 }",
       "strategies[0]: block_slots[0] is 1025 (expected 1 to 1024 device slots)"},
      {std::string(kBase) + "strategies { kind: DISTZO2 dp: [ 2, 4097 ] }",
       "strategies[0]: dp[1] is 4097 (expected 1 to 4096"},
      {std::string(kBase) + "strategies { kind: ZO2 } micro_batch: -1",
       "micro_batch[0] is -1 (expected 0, each device's share, or 1 to 1048576 examples)"},
      {std::string(kBase) + "strategies { kind: ZO2 } batch: 2000000",
       "batch[1] is 2000000 (expected 1 to 1048576 examples)"},
      {std::string(kBase) + "strategies { kind: ZO2 } seq_len: 0",
       "seq_len[1] is 0 (expected 1 or more tokens)"},
  };
  for (const auto& c : cases) {
    const absl::Status s = ExpandError(c.text);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << c.text << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), c.message)) << s.message();
  }
}

// A value listed twice would fill the best ranks with copies of one
// configuration: every list refuses one, naming the field and the value.
TEST(SweepSpaceTest, RefusesDuplicates) {
  const std::string base = std::string(kBase) + "strategies { kind: ZO2 } ";
  const struct {
    std::string text, message;
  } cases[] = {
      {std::string(kBase) + "models: \"opt-1.3b\" strategies { kind: ZO2 }",
       "sweep.pbtxt: models[1]: 'opt-1.3b' is models[0] again (list each value once; a "
       "repeated value would rank one configuration twice)"},
      {base + "batch: [ 8, 16 ]", "batch[2]: 16 is batch[0] again"},
      {base + "seq_len: 512", "seq_len[1]: 512 is seq_len[0] again"},
      {base + "micro_batch: [ 0, 0 ]", "micro_batch[1]: 0 is micro_batch[0] again"},
      {std::string(kBase) + "strategies { kind: ZO2 block_slots: [ 2, 3, 2 ] }",
       "strategies[0]: block_slots[2]: 2 is block_slots[0] again"},
      {std::string(kBase) + "strategies { kind: ZO2 wire_dtype: [ FP16, FP16 ] }",
       "strategies[0]: wire_dtype[1]: FP16 is wire_dtype[0] again"},
      {std::string(kBase) + "strategies { kind: DISTZO2 slicing: [ true, true ] }",
       "strategies[0]: slicing[1]: true is slicing[0] again"},
      {std::string(kBase) + "strategies { kind: DISTZO2 dp: [ 2, 2 ] }",
       "strategies[0]: dp[1]: 2 is dp[0] again"},
      {std::string(kBase) + "strategies { kind: DISTZO2 pertp: [ 1, 1 ] }",
       "strategies[0]: pertp[1]: 1 is pertp[0] again"},
      {std::string(kBase) + "strategies { kind: DDP recompute: [ false, false ] }",
       "strategies[0]: recompute[1]: false is recompute[0] again"},
      {std::string(kBase) +
           "strategies { kind: DDP precision: [ BF16_FP32_GRADS, BF16_FP32_GRADS ] }",
       "strategies[0]: precision[1]: BF16_FP32_GRADS is precision[0] again"},
      // Two entries of one kind may split the knobs, but not give one
      // configuration twice.
      {std::string(kBase) + "strategies { kind: MEZO } strategies { kind: ZO2 } "
                            "strategies { kind: MEZO }",
       "strategies[2] (MEZO) gives 'mezo' as strategies[0] does"},
      {std::string(kBase) + "strategies { kind: DDP } strategies { kind: DDP dp: 4 }",
       "strategies[1] (DDP) gives 'ddp x4, amp' as strategies[0] does"},
      {base + "clusters { base: \"hgx_h100\" }",
       "clusters[1]: member 'hgx_h100' is a member of clusters[0] too"},
      {base + "heat_maps { x: \"model\" y: \"strategy\" } "
              "heat_maps { x: \"model\" y: \"strategy\" }",
       "heat_maps[1]: x 'model' by y 'strategy' is heat_maps[0] again"},
  };
  for (const auto& c : cases) {
    const absl::Status s = ExpandError(c.text);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << c.text << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), c.message)) << s.message();
  }
  // Entries of one kind that split the knobs are fine.
  EXPECT_TRUE(ExpandSweep(Parse(std::string(kBase) +
                                "strategies { kind: ZO2 block_slots: 2 wire_dtype: FP16 } "
                                "strategies { kind: ZO2 block_slots: 3 wire_dtype: FP32 }"),
                          "sweep.pbtxt")
                  .ok());
}

// A model named twice in two ways (its zoo name and a file with its spec).
TEST(SweepSpaceTest, RefusesOneModelUnderTwoNames) {
  absl::StatusOr<ModelSpec> spec = LoadModelSpec("opt-1.3b");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const std::string file = ::testing::TempDir() + "/my-opt.pbtxt";
  ASSERT_TRUE(WriteFile(file, spec->DebugString()).ok());
  const absl::Status s = ExpandError(std::string(kBase) + "models: \"" + file +
                                     "\" strategies { kind: ZO2 }");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "models[1]: '" + file +
                                                 "' is the same model as models[0] 'opt-1.3b'"))
      << s.message();
}

// Sweeps too large are refused from their lists' lengths, before anything
// is built: a million cluster members would take gigabytes to build (this
// test would run out of time or memory if they were).
TEST(SweepSpaceTest, RefusesTooLargeBeforeBuildingAnything) {
  std::string axis;
  for (int i = 1; i <= 100; ++i) absl::StrAppend(&axis, i == 1 ? "" : ", ", i);
  const absl::Status members = ExpandError(absl::StrCat(
      "name: \"big\" models: \"opt-1.3b\" strategies { kind: ZO2 } "
      "clusters { base: \"dgx_a100\" } clusters { base: \"hgx_h100\" host_link_gbps: [", axis,
      "] nvlink_gbps: [", axis, "] device_memory_gib: [", axis, "] }"));
  EXPECT_TRUE(absl::IsInvalidArgument(members)) << members;
  EXPECT_TRUE(absl::StrContains(
      members.message(),
      "the cluster families have 1000001 members in all, above the limit of 10000: "
      "clusters[0] 1 (the base alone), clusters[1] 1000000 (100 host_link_gbps × 100 "
      "nvlink_gbps × 100 device_memory_gib)"))
      << members.message();

  const absl::Status configs = ExpandError(absl::StrCat(
      "name: \"big\" models: [\"opt-1.3b\", \"opt-13b\"] clusters { base: \"hgx_h100\" } "
      "strategies { kind: MEZO } strategies { kind: ZO2 block_slots: [2, 3] } ",
      "batch: [", axis, "] seq_len: [", axis, "] micro_batch: [", axis, "]"));
  EXPECT_TRUE(absl::IsInvalidArgument(configs)) << configs;
  EXPECT_TRUE(absl::StrContains(configs.message(),
                                "the sweep expands to 6000000 configurations, above the limit "
                                "of 1000000: 2 models × 100 batch × 100 seq_len × 100 "
                                "micro_batch × 1 cluster members × 3 strategy configurations "
                                "per member on average"))
      << configs.message();
}

// A sweep that expands to nothing says so, rather than writing empty tables.
TEST(SweepSpaceTest, RefusesASweepOfNothing) {
  const absl::Status s = ExpandError(R"pb(
    name: "none"
    models: "opt-1.3b"
    clusters { base: "h100_sxm_x1" }
    strategies { kind: DDP }
  )pb");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "sweep.pbtxt: the sweep expands to no configuration"))
      << s.message();
}

}  // namespace
}  // namespace zosched
