#include "schedule/lower_flags.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/command_line.h"
#include "base/flag_checks.h"
#include "base/status_format.h"
#include "base/status_macros.h"
#include "models/adapters.h"
#include "models/model_spec.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/peft_choice.h"
#include "schedule/training_settings.h"

ABSL_FLAG(std::string, model, "opt-tiny", "zoo name or ModelSpec textproto path");
ABSL_FLAG(std::string, cluster, "local_cpu", "catalog name or Cluster textproto path");
ABSL_FLAG(std::string, strategy, "zo2",
          "mezo, zo2 or distzo2; or a first-order baseline (simulated only): single_device, ddp, "
          "zero_1, zero_2 (= fsdp_shard_grad_op) or zero_3 (= fsdp_full_shard)");
ABSL_FLAG(int32_t, pertp, 1,
          "distzo2: P, perturbation-parallel degree (divides 2q: 1 or 2 at one direction)");
ABSL_FLAG(int32_t, dp, 1, "distzo2: D, data-parallel degree; ddp, zero_1/2/3: the device count");
ABSL_FLAG(std::string, precision, "amp",
          "first-order: amp (FP32 weights and gradients, AdamW: 16 bytes per parameter) or bf16 "
          "(Megatron: BF16 weights, FP32 gradients, master and AdamW: 18)");
ABSL_FLAG(int32_t, bucket_mb, 25, "ddp: gradient bucket cap in MiB (PyTorch's default: 25)");
ABSL_FLAG(bool, recompute, false, "first-order: full activation recomputation per block");
ABSL_FLAG(bool, flash_attention, true,
          "first-order: a fused attention kernel that keeps no attention scores for the backward");
ABSL_FLAG(bool, slicing, true, "distzo2: sliced transfers (false: naive scheme)");
ABSL_FLAG(int32_t, block_slots, 3, "zo2/distzo2: device block slots in the ring");
ABSL_FLAG(std::vector<std::string>, devices, {},
          "cluster device names to use, in rank order (default: the first ones)");
ABSL_FLAG(int32_t, batch, 16, "examples per step over all devices");
ABSL_FLAG(int32_t, micro_batch, 0, "examples per forward op (0: each device's share)");
ABSL_FLAG(int32_t, seq, 32, "sequence length in tokens (MeZO's prompts: up to the model's limit)");
ABSL_FLAG(double, epsilon, 1e-3, "mezo/zo2/distzo2: perturbation scale ε");
ABSL_FLAG(int32_t, directions, 1,
          "mezo/zo2/distzo2: q, perturbation directions a step (n-SPSA: 2q forwards over the "
          "same examples, their q projected gradients averaged into one update)");
ABSL_FLAG(double, lr, 5e-4,
          "mezo/zo2/distzo2: learning rate η (opt-tiny from scratch: 5e-4; fine-tuning a "
          "pretrained model: MeZO's 1e-6 or 1e-7)");
ABSL_FLAG(double, weight_decay, 0, "mezo/zo2/distzo2: weight decay λ (not on biases and norms)");
ABSL_FLAG(uint64_t, seed, 0,
          "mezo/zo2/distzo2: base seed of the per-step seeds and the data order");
ABSL_FLAG(std::string, host_dtype, "",
          "zo2/distzo2: the host store's dtype, FP32, FP16 or BF16 (default: the model's)");
ABSL_FLAG(std::string, wire_dtype, "",
          "zo2/distzo2: the dtype blocks cross the host link in, FP32, FP16 or BF16 (default: "
          "the host dtype)");
ABSL_FLAG(std::string, compute_dtype, "",
          "FP32, FP16 or BF16 (default: the model's where the devices compute in it, else FP32)");
ABSL_FLAG(std::string, peft, "none",
          "mezo/zo2/distzo2: which parameters train: none (every parameter), lora (LoRA "
          "adapters) or prefix (prefix tuning), the last two over a frozen base: blocks are "
          "uploaded and never offloaded");
ABSL_FLAG(int32_t, lora_rank, 8, "--peft=lora: the adapters' rank r (MeZO: 8)");
ABSL_FLAG(double, lora_alpha, 16, "--peft=lora: α; the adapters' output is scaled by α / r");
ABSL_FLAG(std::vector<std::string>, lora_targets, std::vector<std::string>({"query", "value"}),
          "--peft=lora: the adapted projections, from query, key, value, output, gate, up, down");
ABSL_FLAG(int32_t, prefix_tokens, 5,
          "--peft=prefix: the virtual tokens k of every block's prefix (MeZO: 5); the real "
          "tokens follow them, at positions k, k + 1, ...");
ABSL_FLAG(int32_t, label_words, 2, "mezo/zo2/distzo2: label words of the classification prompt");

namespace zosched {
namespace {

constexpr std::initializer_list<StrategyKind> kZerothOrder = {MEZO, ZO2, DISTZO2};
constexpr std::initializer_list<StrategyKind> kFirstOrder = {SINGLE_DEVICE, DDP, ZERO_1, ZERO_2,
                                                             ZERO_3};

// A lowering flag that only some strategies read, and those strategies.
// Every lowering flag not listed applies to every strategy.
struct StrategyFlag {
  const absl::CommandLineFlag& flag;
  std::vector<StrategyKind> strategies;
};

// From what the lowerings read (schedule/lowering.cc, memory_plan.cc,
// first_order_lowering.cc) and what the runtime does with the schedule:
// only distzo2 has a P × D grid and slices; the first-order strategies take
// their device count from --dp (single_device has one); only zo2 and
// distzo2 stream blocks through device slots from a host store over the
// wire (mezo keeps every weight on the device; the first-order strategies
// keep their parameters in the precision recipe's dtype); ε, η, λ, the
// seeds and the label words are the ZO update's and loss's (the first-order
// baselines are simulated, never trained, and compute the whole LM head);
// the precision recipe, recomputation and the attention kernel are the
// first-order backward's; and only ddp all-reduces in buckets (ZeRO
// reduce-scatters each unit's gradient).
const std::vector<StrategyFlag>& StrategyFlags() {
  static const auto* table = new std::vector<StrategyFlag>{
      {absl::GetFlagReflectionHandle(FLAGS_pertp), {DISTZO2}},
      {absl::GetFlagReflectionHandle(FLAGS_dp), {DISTZO2, DDP, ZERO_1, ZERO_2, ZERO_3}},
      {absl::GetFlagReflectionHandle(FLAGS_slicing), {DISTZO2}},
      {absl::GetFlagReflectionHandle(FLAGS_block_slots), {ZO2, DISTZO2}},
      {absl::GetFlagReflectionHandle(FLAGS_host_dtype), {ZO2, DISTZO2}},
      {absl::GetFlagReflectionHandle(FLAGS_wire_dtype), {ZO2, DISTZO2}},
      {absl::GetFlagReflectionHandle(FLAGS_epsilon), kZerothOrder},
      {absl::GetFlagReflectionHandle(FLAGS_directions), kZerothOrder},
      {absl::GetFlagReflectionHandle(FLAGS_lr), kZerothOrder},
      {absl::GetFlagReflectionHandle(FLAGS_weight_decay), kZerothOrder},
      {absl::GetFlagReflectionHandle(FLAGS_seed), kZerothOrder},
      {absl::GetFlagReflectionHandle(FLAGS_label_words), kZerothOrder},
      {absl::GetFlagReflectionHandle(FLAGS_peft), kZerothOrder},
      {absl::GetFlagReflectionHandle(FLAGS_lora_rank), kZerothOrder},
      {absl::GetFlagReflectionHandle(FLAGS_lora_alpha), kZerothOrder},
      {absl::GetFlagReflectionHandle(FLAGS_lora_targets), kZerothOrder},
      {absl::GetFlagReflectionHandle(FLAGS_prefix_tokens), kZerothOrder},
      {absl::GetFlagReflectionHandle(FLAGS_precision), kFirstOrder},
      {absl::GetFlagReflectionHandle(FLAGS_recompute), kFirstOrder},
      {absl::GetFlagReflectionHandle(FLAGS_flash_attention), kFirstOrder},
      {absl::GetFlagReflectionHandle(FLAGS_bucket_mb), {DDP}},
  };
  return *table;
}

// "zo2", as --strategy takes it.
std::string StrategyName(StrategyKind kind) {
  return absl::AsciiStrToLower(StrategyKind_Name(kind));
}

// "distzo2", "zo2 and distzo2", "mezo, zo2 and distzo2".
std::string StrategyNames(const std::vector<StrategyKind>& kinds) {
  std::vector<std::string> names;
  for (StrategyKind kind : kinds) names.push_back(StrategyName(kind));
  const std::string last = names.back();
  names.pop_back();
  return names.empty() ? last : absl::StrCat(absl::StrJoin(names, ", "), " and ", last);
}

// OK unless a flag given on the command line is one `strategy` does not
// read; `chosen_by` says where the strategy comes from ("--strategy=zo2").
absl::Status CheckGivenFlagsApply(StrategyKind strategy, const std::string& chosen_by) {
  for (const StrategyFlag& f : StrategyFlags()) {
    if (!GivenOnCommandLine(f.flag) ||
        std::find(f.strategies.begin(), f.strategies.end(), strategy) != f.strategies.end()) {
      continue;
    }
    return InvalidArgument("--%s=%s does not apply to %s: it applies to %s only; drop it",
                           f.flag.Name(), f.flag.CurrentValue(), chosen_by,
                           StrategyNames(f.strategies));
  }
  return absl::OkStatus();
}

absl::StatusOr<StrategyKind> StrategyFromFlag() {
  const std::string strategy = absl::GetFlag(FLAGS_strategy);
  const std::string upper = absl::AsciiStrToUpper(strategy);
  if (upper == "FSDP_SHARD_GRAD_OP") return ZERO_2;
  if (upper == "FSDP_FULL_SHARD") return ZERO_3;
  StrategyKind kind;
  if (!StrategyKind_Parse(upper, &kind) || kind == STRATEGY_KIND_UNSPECIFIED) {
    return InvalidArgument(
        "--strategy=%s: expected mezo, zo2, distzo2, single_device, ddp, zero_1, zero_2, zero_3, "
        "fsdp_shard_grad_op or fsdp_full_shard",
        strategy);
  }
  return kind;
}

// The Peft of --peft, the --lora_* flags (which need --peft=lora) and
// --prefix_tokens (which needs --peft=prefix).
absl::StatusOr<Peft> PeftFromFlags() {
  const std::string kind = absl::GetFlag(FLAGS_peft);
  const std::vector<std::pair<const absl::CommandLineFlag*, std::string>> kinds = {
      {&absl::GetFlagReflectionHandle(FLAGS_lora_rank), "lora"},
      {&absl::GetFlagReflectionHandle(FLAGS_lora_alpha), "lora"},
      {&absl::GetFlagReflectionHandle(FLAGS_lora_targets), "lora"},
      {&absl::GetFlagReflectionHandle(FLAGS_prefix_tokens), "prefix"},
  };
  for (const auto& [f, applies] : kinds) {
    if (GivenOnCommandLine(*f) && kind != applies) {
      return InvalidArgument("--%s=%s applies with --peft=%s only; add it or drop --%s",
                             f->Name(), f->CurrentValue(), applies, f->Name());
    }
  }
  PeftFlags flags;
  flags.kind = kind;
  flags.lora_rank = absl::GetFlag(FLAGS_lora_rank);
  flags.lora_alpha = absl::GetFlag(FLAGS_lora_alpha);
  flags.lora_targets = absl::GetFlag(FLAGS_lora_targets);
  flags.prefix_tokens = absl::GetFlag(FLAGS_prefix_tokens);
  return ParsePeft(flags);
}

// The LowerOptions the flags' values give, range-checked, for `strategy`;
// whether each flag applies to it is the caller's to check.
absl::StatusOr<LowerOptions> OptionsFromFlags(StrategyKind strategy) {
  LowerOptions o;
  o.strategy = strategy;
  const std::string precision = absl::GetFlag(FLAGS_precision);
  if (precision == "amp") {
    o.precision = AMP_FP32_MASTER;
  } else if (precision == "bf16") {
    o.precision = BF16_FP32_GRADS;
  } else {
    return InvalidArgument("--precision=%s: expected amp or bf16", precision);
  }
  RETURN_IF_ERROR(CheckFlagRange("bucket_mb", absl::GetFlag(FLAGS_bucket_mb), 1, 1 << 20, "MiB"));
  o.bucket_bytes = static_cast<int64_t>(absl::GetFlag(FLAGS_bucket_mb)) << 20;
  o.recompute = absl::GetFlag(FLAGS_recompute);
  o.flash_attention = absl::GetFlag(FLAGS_flash_attention);
  o.pertp = absl::GetFlag(FLAGS_pertp);
  o.dp = absl::GetFlag(FLAGS_dp);
  o.slicing = absl::GetFlag(FLAGS_slicing);
  o.block_slots = absl::GetFlag(FLAGS_block_slots);
  o.devices = absl::GetFlag(FLAGS_devices);
  RETURN_IF_ERROR(CheckFlagRange("directions", absl::GetFlag(FLAGS_directions), 1, kMaxDirections,
                                 "perturbation directions a step"));
  RETURN_IF_ERROR(CheckFlagRange("pertp", o.pertp, 1, 2 * kMaxDirections,
                                 "devices the 2q forward passes are split over; 1: all on each"));
  RETURN_IF_ERROR(CheckFlagRange("dp", o.dp, 1, 4096, "data-parallel groups"));
  RETURN_IF_ERROR(CheckFlagRange("block_slots", o.block_slots, 1, 1024, "device block slots"));
  TrainingSettings& t = o.training;
  t = DefaultTrainingSettings();
  RETURN_IF_ERROR(
      CheckFlagRange("batch", absl::GetFlag(FLAGS_batch), 1, kMaxBatchSize, "examples per step"));
  RETURN_IF_ERROR(CheckFlagRange("micro_batch", absl::GetFlag(FLAGS_micro_batch), 0,
                             absl::GetFlag(FLAGS_batch), "examples; 0: each device's share"));
  RETURN_IF_ERROR(CheckFlagRange("seq", absl::GetFlag(FLAGS_seq), 1, 1 << 24, "tokens"));
  RETURN_IF_ERROR(CheckFlagRange("label_words", absl::GetFlag(FLAGS_label_words), 1, 1 << 20,
                             "label words"));
  RETURN_IF_ERROR(CheckFlagFinite("epsilon", absl::GetFlag(FLAGS_epsilon), true, "ε (e.g. 1e-3)"));
  RETURN_IF_ERROR(CheckFlagFinite("lr", absl::GetFlag(FLAGS_lr), false, "learning rate"));
  RETURN_IF_ERROR(
      CheckFlagFinite("weight_decay", absl::GetFlag(FLAGS_weight_decay), false, "weight decay"));
  t.set_batch_size(absl::GetFlag(FLAGS_batch));
  t.set_micro_batch_size(absl::GetFlag(FLAGS_micro_batch));
  t.set_seq_len(absl::GetFlag(FLAGS_seq));
  t.set_epsilon(absl::GetFlag(FLAGS_epsilon));
  t.set_learning_rate(absl::GetFlag(FLAGS_lr));
  t.set_weight_decay(absl::GetFlag(FLAGS_weight_decay));
  t.set_base_seed(absl::GetFlag(FLAGS_seed));
  t.set_num_label_words(absl::GetFlag(FLAGS_label_words));
  // Unset for one direction: the schedule is then what it was before n-SPSA.
  if (absl::GetFlag(FLAGS_directions) > 1) t.set_directions(absl::GetFlag(FLAGS_directions));
  ASSIGN_OR_RETURN(const DType host, ParseDTypeFlag("host_dtype", absl::GetFlag(FLAGS_host_dtype)));
  ASSIGN_OR_RETURN(const DType wire, ParseDTypeFlag("wire_dtype", absl::GetFlag(FLAGS_wire_dtype)));
  ASSIGN_OR_RETURN(const DType compute,
                   ParseDTypeFlag("compute_dtype", absl::GetFlag(FLAGS_compute_dtype)));
  t.set_host_dtype(host);
  t.set_wire_dtype(wire);
  t.set_compute_dtype(compute);
  ASSIGN_OR_RETURN(*t.mutable_peft(), PeftFromFlags());
  // A frozen base is never offloaded, so a slot is free again once its
  // block's forwards are done: two slots overlap an upload with compute.
  if (TrainsAdapters(t.peft()) &&
      !GivenOnCommandLine(absl::GetFlagReflectionHandle(FLAGS_block_slots))) {
    o.block_slots = 2;
  }
  return o;
}

}  // namespace

absl::StatusOr<LowerOptions> LowerOptionsFromFlags() {
  ASSIGN_OR_RETURN(const StrategyKind strategy, StrategyFromFlag());
  const absl::CommandLineFlag& flag = absl::GetFlagReflectionHandle(FLAGS_strategy);
  RETURN_IF_ERROR(CheckGivenFlagsApply(
      strategy, absl::StrCat("--strategy=", flag.CurrentValue(),
                             GivenOnCommandLine(flag) ? "" : " (the default)")));
  return OptionsFromFlags(strategy);
}

absl::Status CheckFlagsAgreeWithSchedule(const Schedule& schedule, const std::string& path) {
  const TrainingSettings& t = schedule.training();
  const Strategy& s = schedule.strategy();
  ASSIGN_OR_RETURN(const StrategyKind strategy, StrategyFromFlag());
  ASSIGN_OR_RETURN(const LowerOptions flags, OptionsFromFlags(strategy));
  // The schedule's strategy is the one the other flags must apply to
  // (unless --strategy disagrees with it, which the checks below report).
  if (strategy == s.kind() || !GivenOnCommandLine(absl::GetFlagReflectionHandle(FLAGS_strategy))) {
    const std::string chosen_by =
        absl::StrFormat("the schedule in %s (strategy %s)", path, StrategyName(s.kind()));
    RETURN_IF_ERROR(CheckGivenFlagsApply(s.kind(), chosen_by));
  }
  // A --model or --cluster flag names the schedule's when it is its name or
  // a file holding it.
  const std::string model_flag = absl::GetFlag(FLAGS_model);
  const absl::StatusOr<ModelSpec> model = LoadModelSpec(model_flag);
  const bool same_model = model_flag == schedule.model().name() ||
                          (model.ok() && model->name() == schedule.model().name());
  const std::string cluster_flag = absl::GetFlag(FLAGS_cluster);
  const absl::StatusOr<Cluster> cluster = LoadCluster(cluster_flag);
  const bool same_cluster = cluster_flag == schedule.cluster().name() ||
                            (cluster.ok() && cluster->name() == schedule.cluster().name());
  // (flag, the flag's value, the schedule's field and value, agree?)
  struct Check {
    const absl::CommandLineFlag& flag;
    std::string field, flag_value, schedule_value;
    bool agree;
  };
  const TrainingSettings& f = flags.training;
  auto str = [](auto v) { return absl::StrCat(v); };
  auto dtype = [](DType d) { return DType_Name(d); };
  const std::vector<Check> checks = {
      {absl::GetFlagReflectionHandle(FLAGS_model), "model", model_flag, schedule.model().name(),
       same_model},
      {absl::GetFlagReflectionHandle(FLAGS_cluster), "cluster", cluster_flag,
       schedule.cluster().name(), same_cluster},
      {absl::GetFlagReflectionHandle(FLAGS_strategy), "strategy", absl::GetFlag(FLAGS_strategy),
       absl::AsciiStrToLower(StrategyKind_Name(s.kind())), flags.strategy == s.kind()},
      {absl::GetFlagReflectionHandle(FLAGS_pertp), "strategy pertp", str(flags.pertp),
       str(s.pertp()), flags.pertp == s.pertp()},
      {absl::GetFlagReflectionHandle(FLAGS_dp), "strategy dp", str(flags.dp), str(s.dp()),
       flags.dp == s.dp()},
      {absl::GetFlagReflectionHandle(FLAGS_slicing), "strategy slicing", str(flags.slicing),
       str(s.slicing()), flags.slicing == s.slicing()},
      {absl::GetFlagReflectionHandle(FLAGS_block_slots), "strategy block_slots",
       str(flags.block_slots), str(s.block_slots()), flags.block_slots == s.block_slots()},
      {absl::GetFlagReflectionHandle(FLAGS_batch), "batch_size", str(f.batch_size()),
       str(t.batch_size()), f.batch_size() == t.batch_size()},
      {absl::GetFlagReflectionHandle(FLAGS_micro_batch), "micro_batch_size",
       str(f.micro_batch_size()), str(t.micro_batch_size()),
       f.micro_batch_size() == t.micro_batch_size()},
      {absl::GetFlagReflectionHandle(FLAGS_seq), "seq_len", str(f.seq_len()), str(t.seq_len()),
       f.seq_len() == t.seq_len()},
      {absl::GetFlagReflectionHandle(FLAGS_epsilon), "epsilon", str(f.epsilon()),
       str(t.epsilon()), f.epsilon() == t.epsilon()},
      {absl::GetFlagReflectionHandle(FLAGS_directions), "directions", str(DirectionsOf(f)),
       str(DirectionsOf(t)), DirectionsOf(f) == DirectionsOf(t)},
      {absl::GetFlagReflectionHandle(FLAGS_lr), "learning_rate", str(f.learning_rate()),
       str(t.learning_rate()), f.learning_rate() == t.learning_rate()},
      {absl::GetFlagReflectionHandle(FLAGS_weight_decay), "weight_decay", str(f.weight_decay()),
       str(t.weight_decay()), f.weight_decay() == t.weight_decay()},
      {absl::GetFlagReflectionHandle(FLAGS_seed), "base_seed", str(f.base_seed()),
       str(t.base_seed()), f.base_seed() == t.base_seed()},
      {absl::GetFlagReflectionHandle(FLAGS_host_dtype), "host_dtype", dtype(f.host_dtype()),
       dtype(t.host_dtype()), f.host_dtype() == t.host_dtype()},
      {absl::GetFlagReflectionHandle(FLAGS_wire_dtype), "wire_dtype", dtype(f.wire_dtype()),
       dtype(t.wire_dtype()), f.wire_dtype() == t.wire_dtype()},
      {absl::GetFlagReflectionHandle(FLAGS_compute_dtype), "compute_dtype",
       dtype(f.compute_dtype()), dtype(t.compute_dtype()), f.compute_dtype() == t.compute_dtype()},
      {absl::GetFlagReflectionHandle(FLAGS_label_words), "num_label_words",
       str(f.num_label_words()), str(t.num_label_words()),
       f.num_label_words() == t.num_label_words()},
      {absl::GetFlagReflectionHandle(FLAGS_peft), "peft", absl::GetFlag(FLAGS_peft),
       PeftFlagName(t.peft()), f.peft().kind() == t.peft().kind()},
      {absl::GetFlagReflectionHandle(FLAGS_lora_rank), "peft lora_rank",
       str(f.peft().lora_rank()), str(t.peft().lora_rank()),
       f.peft().lora_rank() == t.peft().lora_rank()},
      {absl::GetFlagReflectionHandle(FLAGS_lora_alpha), "peft lora_alpha",
       str(f.peft().lora_alpha()), str(t.peft().lora_alpha()),
       f.peft().lora_alpha() == t.peft().lora_alpha()},
      {absl::GetFlagReflectionHandle(FLAGS_lora_targets), "peft lora_targets",
       LoraTargetList(f.peft()), LoraTargetList(t.peft()), LoraTargetsOf(f.peft()) == LoraTargetsOf(t.peft())},
      {absl::GetFlagReflectionHandle(FLAGS_prefix_tokens), "peft prefix_tokens",
       str(f.peft().prefix_tokens()), str(t.peft().prefix_tokens()),
       f.peft().prefix_tokens() == t.peft().prefix_tokens()},
  };
  for (const Check& c : checks) {
    if (!GivenOnCommandLine(c.flag) || c.agree) continue;
    return InvalidArgument(
        "--%s=%s disagrees with %s %s of the schedule in %s, which wins: drop --%s, or lower "
        "the schedule again with --%s=%s",
        c.flag.Name(), c.flag_value, c.field, c.schedule_value, path, c.flag.Name(),
        c.flag.Name(), c.flag_value);
  }
  if (GivenOnCommandLine(absl::GetFlagReflectionHandle(FLAGS_devices))) {
    return InvalidArgument("--devices applies when lowering; the schedule in %s names its devices",
                           path);
  }
  return absl::OkStatus();
}

}  // namespace zosched
