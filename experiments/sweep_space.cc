#include "experiments/sweep_space.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "base/textproto.h"
#include "google/protobuf/descriptor.h"
#include "models/adapters.h"
#include "models/model_zoo.h"
#include "schedule/compute_profile_fit.h"
#include "schedule/training_settings.h"

namespace zosched {
namespace {

// The ranges lowering accepts (schedule/lower_options.cc), checked here so
// that a sweep is refused before it is expanded.
constexpr int kMaxBlockSlots = 1024;
constexpr int kMaxDataParallel = 4096;
constexpr double kMeZoLoraAlpha = 16;  // α of MeZO's LoRA runs (r 8)
constexpr int kMeZoLoraRank = 8;
constexpr int kMeZoPrefixTokens = 5;  // k of MeZO's prefix-tuning runs
constexpr int kMaxNameLength = 100;

absl::Status Invalid(const std::string& source, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", what));
}

bool UsesBlockRing(StrategyKind k) { return k == ZO2 || k == DISTZO2; }
bool IsFirstOrder(StrategyKind k) {
  return k == SINGLE_DEVICE || k == DDP || k == ZERO_1 || k == ZERO_2 || k == ZERO_3;
}

template <typename T>
std::vector<T> OrDefault(const google::protobuf::RepeatedField<T>& values, std::vector<T> dflt) {
  return values.empty() ? dflt : std::vector<T>(values.begin(), values.end());
}

// "WHERE: FIELD[i] is V (expected EXPECTED)" for the first of `values`
// outside [lowest, highest].
absl::Status CheckRange(const std::string& where, const char* field,
                        const google::protobuf::RepeatedField<int32_t>& values, int64_t lowest,
                        int64_t highest, const char* expected) {
  for (int i = 0; i < values.size(); ++i) {
    if (values[i] < lowest || values[i] > highest) {
      return Invalid(where, absl::StrFormat("%s[%d] is %d (expected %s)", field, i, values[i],
                                            expected));
    }
  }
  return absl::OkStatus();
}

constexpr char kRankedTwice[] = "a repeated value would rank one configuration twice";

// "WHERE: FIELD[j]: VALUE is FIELD[i] again (list each value once; WHY)"
// for the first of `values` listed twice; `text(value)` prints a value, and
// tells values apart.
template <typename Values, typename Text>
absl::Status CheckUnique(const std::string& where, const char* field, const Values& values,
                         Text text, const char* why = kRankedTwice) {
  std::map<std::string, int> first;
  for (int j = 0; j < static_cast<int>(values.size()); ++j) {
    const auto [it, inserted] = first.emplace(text(values[j]), j);
    if (!inserted) {
      return Invalid(where, absl::StrFormat("%s[%d]: %s is %s[%d] again (list each value once; "
                                            "%s)",
                                            field, j, it->first, field, it->second, why));
    }
  }
  return absl::OkStatus();
}

std::string IntText(int32_t v) { return absl::StrCat(v); }
std::string BoolText(bool v) { return v ? "true" : "false"; }
std::string Quoted(const std::string& s) { return absl::StrCat("'", s, "'"); }

// "WHERE: FIELD[i] is unset" or "... is N, not a NAME" for the first of an
// enum list that is unset (0) or has no name (`is_valid`).
absl::Status CheckEnumList(const std::string& where, const char* field,
                           const google::protobuf::RepeatedField<int>& values,
                           bool (*is_valid)(int), const char* enum_name, const char* expected) {
  for (int i = 0; i < values.size(); ++i) {
    if (values[i] == 0) {
      return Invalid(where, absl::StrFormat("%s[%d] is unset (expected %s)", field, i, expected));
    }
    if (!is_valid(values[i])) {
      return Invalid(where, absl::StrFormat("%s[%d] is %d, not a %s (expected %s)", field, i,
                                            values[i], enum_name, expected));
    }
  }
  return absl::OkStatus();
}

// The name names the output directory, out/explore/NAME: a plain directory
// name, so that outputs never land beside it or above it.
absl::Status CheckName(const std::string& name, const std::string& source) {
  constexpr char kExpected[] =
      "expected a directory name for out/explore/NAME: letters, digits, '-', '_' and '.', not "
      "starting with '.', at most 100 characters, e.g. name: \"my_sweep\"";
  if (name.empty()) return Invalid(source, absl::StrCat("name is missing (", kExpected, ")"));
  if (name.size() > kMaxNameLength) {
    return Invalid(source, absl::StrFormat("name has %d characters (%s)", name.size(), kExpected));
  }
  if (name[0] == '.') {
    return Invalid(source, absl::StrFormat("name '%s' starts with '.' (%s)", name, kExpected));
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.') continue;
    return Invalid(source, absl::StrFormat("name '%s' has '%s' at character %d (%s)", name,
                                           absl::CHexEscape(std::string(1, c)), i + 1,
                                           kExpected));
  }
  return absl::OkStatus();
}

// A knob list given to a strategy that has no use for it is an error.
absl::Status CheckKnobApplies(const std::string& where, const StrategyChoice& s, int size,
                              const char* knob, bool applies, const char* applies_to) {
  if (size == 0 || applies) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s (%s): %s applies to %s only", where,
                                                    StrategyKind_Name(s.kind()), knob,
                                                    applies_to));
}

absl::Status CheckStrategyChoice(const std::string& where, const StrategyChoice& s) {
  const StrategyKind k = s.kind();
  constexpr char kKinds[] =
      "expected MEZO, ZO2, DISTZO2, SINGLE_DEVICE, DDP, ZERO_1, ZERO_2 or ZERO_3";
  if (k == STRATEGY_KIND_UNSPECIFIED) {
    return Invalid(where, absl::StrCat("kind is unset (", kKinds, ")"));
  }
  if (!StrategyKind_IsValid(k)) {
    return Invalid(where, absl::StrFormat("kind is %d, not a strategy (%s)", k, kKinds));
  }
  RETURN_IF_ERROR(CheckKnobApplies(where, s, s.block_slots_size(), "block_slots",
                                   UsesBlockRing(k), "ZO2 and DISTZO2"));
  RETURN_IF_ERROR(CheckKnobApplies(where, s, s.wire_dtype_size(), "wire_dtype", UsesBlockRing(k),
                                   "ZO2 and DISTZO2"));
  RETURN_IF_ERROR(
      CheckKnobApplies(where, s, s.pertp_size(), "pertp", k == DISTZO2, "DISTZO2"));
  RETURN_IF_ERROR(
      CheckKnobApplies(where, s, s.slicing_size(), "slicing", k == DISTZO2, "DISTZO2"));
  RETURN_IF_ERROR(CheckKnobApplies(where, s, s.dp_size(), "dp",
                                   k == DISTZO2 || (IsFirstOrder(k) && k != SINGLE_DEVICE),
                                   "DISTZO2, DDP and ZERO_1/2/3"));
  RETURN_IF_ERROR(CheckKnobApplies(where, s, s.precision_size(), "precision", IsFirstOrder(k),
                                   "the first-order strategies"));
  RETURN_IF_ERROR(CheckKnobApplies(where, s, s.recompute_size(), "recompute", IsFirstOrder(k),
                                   "the first-order strategies"));
  RETURN_IF_ERROR(CheckKnobApplies(where, s, s.directions_size(), "directions", !IsFirstOrder(k),
                                   "MEZO, ZO2 and DISTZO2"));
  RETURN_IF_ERROR(CheckRange(where, "directions", s.directions(), 1, kMaxDirections,
                             "1 to 1024 perturbation directions a step"));
  RETURN_IF_ERROR(CheckUnique(where, "directions", s.directions(), IntText));
  RETURN_IF_ERROR(CheckKnobApplies(where, s, s.peft_size(), "peft", !IsFirstOrder(k),
                                   "MEZO, ZO2 and DISTZO2"));
  for (int i = 0; i < s.peft_size(); ++i) {  // PEFT_NONE is 0: a value, not unset
    if (!PeftKind_IsValid(s.peft(i))) {
      return Invalid(where, absl::StrFormat(
                                "peft[%d] is %d (expected PEFT_NONE, LORA or PREFIX)", i,
                                s.peft(i)));
    }
  }
  RETURN_IF_ERROR(CheckUnique(where, "peft", s.peft(),
                              [](int v) { return PeftKind_Name(static_cast<PeftKind>(v)); }));
  // A knob of one kind of adapters needs that kind in peft.
  auto needs_kind = [&](const char* knob, int size, PeftKind kind) {
    if (size == 0 || std::find(s.peft().begin(), s.peft().end(), kind) != s.peft().end()) {
      return absl::OkStatus();
    }
    const std::string name = PeftKind_Name(kind);
    return Invalid(where, absl::StrFormat("%s is set but peft lists no %s (add peft: %s, or drop "
                                          "%s)",
                                          knob, name, name, knob));
  };
  RETURN_IF_ERROR(needs_kind("lora_rank", s.lora_rank_size(), LORA));
  RETURN_IF_ERROR(needs_kind("prefix_tokens", s.prefix_tokens_size(), PREFIX));
  RETURN_IF_ERROR(CheckRange(where, "lora_rank", s.lora_rank(), 1, kMaxLoraRank,
                             "1 to 4096, the adapters' rank"));
  RETURN_IF_ERROR(CheckUnique(where, "lora_rank", s.lora_rank(), IntText));
  RETURN_IF_ERROR(CheckRange(where, "prefix_tokens", s.prefix_tokens(), 1, kMaxPrefixTokens,
                             "1 to 4096 virtual tokens"));
  RETURN_IF_ERROR(CheckUnique(where, "prefix_tokens", s.prefix_tokens(), IntText));
  RETURN_IF_ERROR(CheckRange(where, "block_slots", s.block_slots(), 1, kMaxBlockSlots,
                             "1 to 1024 device slots"));
  RETURN_IF_ERROR(CheckRange(where, "pertp", s.pertp(), 1, 2 * kMaxDirections,
                             "1 to 2048, dividing 2q"));
  RETURN_IF_ERROR(CheckRange(where, "dp", s.dp(), 1, kMaxDataParallel,
                             "1 to 4096 data-parallel groups"));
  RETURN_IF_ERROR(CheckEnumList(where, "wire_dtype", s.wire_dtype(), DType_IsValid, "DType",
                                "FP32, FP16 or BF16"));
  RETURN_IF_ERROR(CheckEnumList(where, "precision", s.precision(), PrecisionRecipe_IsValid,
                                "PrecisionRecipe", "AMP_FP32_MASTER or BF16_FP32_GRADS"));
  RETURN_IF_ERROR(CheckUnique(where, "block_slots", s.block_slots(), IntText));
  RETURN_IF_ERROR(CheckUnique(where, "wire_dtype", s.wire_dtype(),
                              [](int v) { return DType_Name(static_cast<DType>(v)); }));
  RETURN_IF_ERROR(CheckUnique(where, "pertp", s.pertp(), IntText));
  // Each P splits the 2q passes of some q the strategy tries.
  const std::vector<int> qs = OrDefault<int>(s.directions(), {1});
  for (int i = 0; i < s.pertp_size(); ++i) {
    const int p = s.pertp(i);
    if (std::none_of(qs.begin(), qs.end(), [p](int q) { return 2 * q % p == 0; })) {
      return Invalid(where,
                     absl::StrFormat("pertp[%d] is %d (expected a P that divides 2q, the "
                                     "forward passes of a step, for some q of directions %s: "
                                     "1 or 2 at one direction)",
                                     i, p, absl::StrJoin(qs, ", ")));
    }
  }
  RETURN_IF_ERROR(CheckUnique(where, "dp", s.dp(), IntText));
  RETURN_IF_ERROR(CheckUnique(where, "slicing", s.slicing(), BoolText));
  RETURN_IF_ERROR(CheckUnique(where, "precision", s.precision(), [](int v) {
    return PrecisionRecipe_Name(static_cast<PrecisionRecipe>(v));
  }));
  return CheckUnique(where, "recompute", s.recompute(), BoolText);
}

// The D values a strategy tries on `devices` devices with P = `pertp`.
std::vector<int> DataParallelDegrees(const StrategyChoice& s, int pertp, int devices, int batch,
                                     int micro_batch) {
  if (s.kind() == SINGLE_DEVICE) return {1};
  if (!s.dp().empty()) return {s.dp().begin(), s.dp().end()};
  std::vector<int> degrees;
  for (int d = s.kind() == DISTZO2 ? 1 : 2; pertp * d <= devices; ++d) {
    if (batch % d == 0 && (micro_batch == 0 || (batch / d) % micro_batch == 0)) {
      degrees.push_back(d);
    }
  }
  return degrees;
}

// Calls `emit(config)` with `base` and each of the strategy's knob
// combinations on a member with `devices` devices (one SweepConfig,
// rewritten between calls: copy what you keep).
template <typename Emit>
void ForEachStrategyConfig(const StrategyChoice& s, const SweepConfig& base, int devices,
                           Emit&& emit) {
  const TrainingSettings& t = base.options.training;
  SweepConfig c = base;
  c.options.strategy = s.kind();
  if (!IsFirstOrder(s.kind()) && s.directions_size() > 0) {
    // Each q in turn, the other knobs under it (q = 1 left unset: the
    // schedule of a sweep without the axis).
    StrategyChoice one = s;
    one.clear_directions();
    for (int q : s.directions()) {
      SweepConfig with_q = base;
      if (q > 1) {
        with_q.options.training.set_directions(q);
      } else {
        with_q.options.training.clear_directions();
      }
      ForEachStrategyConfig(one, with_q, devices, emit);
    }
    return;
  }
  if (!IsFirstOrder(s.kind()) && s.peft_size() > 0) {
    // Each peft (and LoRA rank or prefix length) in turn, the other knobs
    // under it.
    StrategyChoice one = s;
    one.clear_peft();
    one.clear_lora_rank();
    one.clear_prefix_tokens();
    for (int kind : s.peft()) {
      const std::vector<int> sizes =
          kind == LORA     ? OrDefault<int>(s.lora_rank(), {kMeZoLoraRank})
          : kind == PREFIX ? OrDefault<int>(s.prefix_tokens(), {kMeZoPrefixTokens})
                           : std::vector<int>{0};
      for (int size : sizes) {
        SweepConfig with_peft = base;
        Peft& peft = *with_peft.options.training.mutable_peft();
        peft.Clear();
        peft.set_kind(static_cast<PeftKind>(kind));
        if (kind == LORA) {
          peft.set_lora_rank(size);
          peft.set_lora_alpha(kMeZoLoraAlpha);
        } else if (kind == PREFIX) {
          peft.set_prefix_tokens(size);
        }
        ForEachStrategyConfig(one, with_peft, devices, emit);
      }
    }
    return;
  }
  if (s.kind() == MEZO) {
    c.gpus = 1;
    emit(c);
    return;
  }
  if (IsFirstOrder(s.kind())) {
    for (int d : DataParallelDegrees(s, 1, devices, t.batch_size(), t.micro_batch_size())) {
      for (int precision : OrDefault<int>(s.precision(), {AMP_FP32_MASTER})) {
        for (bool recompute : OrDefault<bool>(s.recompute(), {false})) {
          c.options.dp = d;
          c.options.precision = static_cast<PrecisionRecipe>(precision);
          c.options.recompute = recompute;
          c.gpus = d;
          emit(c);
        }
      }
    }
    return;
  }
  const std::vector<int> pertps =
      s.kind() == DISTZO2 ? OrDefault<int>(s.pertp(), {1, 2}) : std::vector<int>{1};
  for (int pertp : pertps) {
    const std::vector<int> degrees =
        s.kind() == DISTZO2
            ? DataParallelDegrees(s, pertp, devices, t.batch_size(), t.micro_batch_size())
            : std::vector<int>{1};
    for (int d : degrees) {
      for (bool slicing : s.kind() == DISTZO2 ? OrDefault<bool>(s.slicing(), {true})
                                              : std::vector<bool>{true}) {
        // A frozen base (LoRA, a prefix) is never offloaded: 2 slots
        // overlap an upload with compute.
        const int default_slots = TrainsAdapters(t.peft()) ? 2 : 3;
        for (int slots : OrDefault<int>(s.block_slots(), {default_slots})) {
          for (int wire : OrDefault<int>(s.wire_dtype(), {DTYPE_UNSPECIFIED})) {
            c.options.pertp = pertp;
            c.options.dp = d;
            c.options.slicing = slicing;
            c.options.block_slots = slots;
            c.options.training.set_wire_dtype(static_cast<DType>(wire));
            c.gpus = pertp * d;
            emit(c);
          }
        }
      }
    }
  }
}

absl::Status CheckTrainingLists(const Sweep& sweep, const std::string& source) {
  RETURN_IF_ERROR(CheckRange(source, "batch", sweep.batch(), 1, kMaxBatchSize,
                             "1 to 1048576 examples"));
  RETURN_IF_ERROR(CheckRange(source, "seq_len", sweep.seq_len(), 1,
                             std::numeric_limits<int32_t>::max(), "1 or more tokens"));
  RETURN_IF_ERROR(CheckRange(source, "micro_batch", sweep.micro_batch(), 0, kMaxBatchSize,
                             "0, each device's share, or 1 to 1048576 examples"));
  RETURN_IF_ERROR(CheckUnique(source, "batch", sweep.batch(), IntText));
  RETURN_IF_ERROR(CheckUnique(source, "seq_len", sweep.seq_len(), IntText));
  return CheckUnique(source, "micro_batch", sweep.micro_batch(), IntText);
}

// The objective, the constraints, `best` and the heat maps of `sweep`
// (defaults filled in).
absl::Status CheckObjectiveAndReport(const Sweep& sweep, const std::string& source) {
  if (!Objective_IsValid(sweep.objective())) {
    return Invalid(source, absl::StrFormat("objective is %d, not an objective (expected "
                                           "STEP_TIME, TOKENS_PER_S, TOKENS_PER_DOLLAR or "
                                           "MEMORY_HEADROOM)",
                                           sweep.objective()));
  }
  const Constraints& c = sweep.constraints();
  const struct {
    const char* field;
    double value;
    const char* unit;
  } bounds[] = {
      {"min_tokens_per_s", c.min_tokens_per_s(), "tokens/s"},
      {"max_gpus", static_cast<double>(c.max_gpus()), "GPUs"},
      {"max_dollars_per_hour", c.max_dollars_per_hour(), "dollars per hour"},
      {"min_headroom_gib", c.min_headroom_gib(), "GiB"},
  };
  for (const auto& bound : bounds) {
    if (std::isfinite(bound.value) && bound.value >= 0) continue;
    return Invalid(source, absl::StrFormat("constraints.%s is %g (expected a finite number of "
                                           "%s >= 0; 0: no bound)",
                                           bound.field, bound.value, bound.unit));
  }
  if (sweep.best() < 1 || sweep.best() > 1000) {
    return Invalid(source, absl::StrFormat("best is %d (expected 1 to 1000)", sweep.best()));
  }
  for (int i = 0; i < sweep.heat_maps_size(); ++i) {
    for (const std::string& axis : {sweep.heat_maps(i).x(), sweep.heat_maps(i).y()}) {
      bool known = false;
      for (const std::string& column : SweepKnobColumns()) known |= column == axis;
      if (!known) {
        return Invalid(source, absl::StrFormat("heat_maps[%d]: '%s' is not a knob column "
                                               "(expected one of %s)", i, axis,
                                               absl::StrJoin(SweepKnobColumns(), ", ")));
      }
    }
    if (sweep.heat_maps(i).x() == sweep.heat_maps(i).y()) {
      return Invalid(source, absl::StrFormat("heat_maps[%d]: x and y are both '%s'", i,
                                             sweep.heat_maps(i).x()));
    }
  }
  return CheckUnique(
      source, "heat_maps", sweep.heat_maps(),
      [](const HeatMap& map) { return absl::StrFormat("x '%s' by y '%s'", map.x(), map.y()); },
      "a repeated heat map would be drawn twice");
}

// The sweep's compute_profile, or nullopt when it names none (each
// configuration's own kernel-level profile).
// Errors: InvalidArgument for a name that is no profile.
absl::StatusOr<std::optional<ComputeProfile>> NamedProfile(const Sweep& sweep,
                                                           const std::string& source) {
  if (sweep.compute_profile().empty()) return std::nullopt;
  ComputeProfile profile = ROOFLINE;
  if (!ComputeProfile_Parse(absl::AsciiStrToUpper(sweep.compute_profile()), &profile)) {
    return Invalid(source, absl::StrFormat("compute_profile '%s' is not a compute profile "
                                           "(expected roofline, zosched_cuda, pytorch_mezo, "
                                           "pytorch_zo2, pytorch_first_order or "
                                           "megatron_first_order, in any case; "
                                           "or leave it out for each configuration's "
                                           "kernel-level profile)",
                                           sweep.compute_profile()));
  }
  return profile;
}

// "DDP, precision AMP_FP32_MASTER, recompute" or "ZO2": a strategy entry's
// configuration, for error messages.
std::string ProfiledText(const ProfiledConfig& config) {
  if (!IsFirstOrder(config.strategy)) return StrategyKind_Name(config.strategy);
  return absl::StrFormat("%s, precision %s%s", StrategyKind_Name(config.strategy),
                         PrecisionRecipe_Name(config.precision),
                         config.recompute ? ", recompute" : "");
}

// Checks that every configuration is predicted with the same realism: under
// `named` (the sweep's compute_profile), which must run them all, or, with
// none named, under a kernel-level profile of its own (KernelProfileFor),
// so that no step at the roofline is ranked beside kernel-level ones. Each
// strategy entry with each of its precisions and recompute settings, on
// each model.
absl::Status CheckProfiles(const std::optional<ComputeProfile>& named, const SweepSpace& space,
                           const std::string& source) {
  const Sweep& sweep = space.sweep;
  for (int i = 0; i < sweep.strategies_size(); ++i) {
    const StrategyChoice& s = sweep.strategies(i);
    for (int precision : OrDefault<int>(s.precision(), {AMP_FP32_MASTER})) {
      for (bool recompute : OrDefault<bool>(s.recompute(), {false})) {
        for (int m = 0; m < sweep.models_size(); ++m) {
          ProfiledConfig config;
          config.strategy = s.kind();
          config.precision = static_cast<PrecisionRecipe>(precision);
          config.recompute = recompute;
          config.family = space.models[m].family();
          const std::string where = absl::StrFormat(
              "strategies[%d] (%s) of models[%d] '%s'", i, ProfiledText(config), m,
              sweep.models(m));
          if (named.has_value()) {
            const absl::Status runs = CheckProfileRuns(*named, config);
            if (runs.ok()) continue;
            return Invalid(source, absl::StrFormat("compute_profile '%s' cannot cost %s: %s; or "
                                                   "leave compute_profile out for each "
                                                   "configuration's kernel-level profile",
                                                   sweep.compute_profile(), where,
                                                   runs.message()));
          }
          if (KernelProfileFor(config) != ROOFLINE) continue;
          // Why the first-order profile of its precision recipe refuses it.
          const absl::Status why = CheckProfileRuns(
              config.precision == BF16_FP32_GRADS ? MEGATRON_FIRST_ORDER : PYTORCH_FIRST_ORDER,
              config);
          return Invalid(source, absl::StrFormat(
                                     "%s has no kernel-level compute profile: %s. A step at the "
                                     "roofline ranked beside kernel-level ones would mislead: "
                                     "set compute_profile: \"roofline\" to predict every "
                                     "configuration at the roofline, or leave this one out of "
                                     "the sweep",
                                     where, why.message()));
        }
      }
    }
  }
  return absl::OkStatus();
}

// The members of `family`, counted without building any: the product of the
// lengths of the axes it sets (every repeated field of ClusterFamily is an
// axis), in a double so that no list makes it overflow. `axes` gets the
// lengths, e.g. "100 host_link_gbps × 3 nvlink_gbps".
double CountFamilyMembers(const ClusterFamily& family, std::string* axes) {
  const google::protobuf::Descriptor* descriptor = family.GetDescriptor();
  const google::protobuf::Reflection* reflection = family.GetReflection();
  double members = 1;
  std::vector<std::string> lengths;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    if (!field->is_repeated()) continue;
    const int length = reflection->FieldSize(family, field);
    if (length == 0) continue;
    members *= length;
    lengths.push_back(absl::StrCat(length, " ", field->name()));
  }
  *axes = lengths.empty() ? "the base alone" : absl::StrJoin(lengths, " × ");
  return members;
}

absl::Status CheckClusterCount(const Sweep& sweep, const std::string& source) {
  double total = 0;
  std::vector<std::string> families;
  for (int i = 0; i < sweep.clusters_size(); ++i) {
    std::string axes;
    const double members = CountFamilyMembers(sweep.clusters(i), &axes);
    total += members;
    families.push_back(absl::StrFormat("clusters[%d] %.0f (%s)", i, members, axes));
  }
  if (total <= kMaxSweepClusters) return absl::OkStatus();
  return Invalid(source, absl::StrFormat("the cluster families have %.0f members in all, above "
                                         "the limit of %d: %s; shorten the axes or split the "
                                         "sweep",
                                         total, kMaxSweepClusters, absl::StrJoin(families, ", ")));
}

// Loads the models; two names for equal specs are refused.
absl::Status LoadModels(const Sweep& sweep, const std::string& source, SweepSpace& space) {
  RETURN_IF_ERROR(CheckUnique(source, "models", sweep.models(), Quoted));
  std::map<std::string, int> first_of_spec;  // serialized spec -> its first index
  for (int i = 0; i < sweep.models_size(); ++i) {
    absl::StatusOr<ModelSpec> model = LoadModelSpec(sweep.models(i));
    if (!model.ok()) {
      return Invalid(source, absl::StrFormat("models[%d]: %s", i, model.status().message()));
    }
    const auto [it, inserted] = first_of_spec.emplace(model->SerializeAsString(), i);
    if (!inserted) {
      return Invalid(source, absl::StrFormat("models[%d]: '%s' is the same model as models[%d] "
                                             "'%s' (list each model once)",
                                             i, sweep.models(i), it->second,
                                             sweep.models(it->second)));
    }
    space.models.push_back(*std::move(model));
  }
  return absl::OkStatus();
}

// Expands the cluster families; two families may not share a member.
absl::Status ExpandClusters(const Sweep& sweep, const std::string& source, SweepSpace& space) {
  std::map<std::string, int> family_of_label;
  for (int i = 0; i < sweep.clusters_size(); ++i) {
    ASSIGN_OR_RETURN(std::vector<ClusterMember> members,
                     ExpandClusterFamily(sweep.clusters(i),
                                         absl::StrFormat("%s: clusters[%d]", source, i)));
    for (ClusterMember& m : members) {
      const auto [it, inserted] = family_of_label.emplace(m.label, i);
      if (!inserted) {
        return Invalid(source, absl::StrFormat("clusters[%d]: member '%s' is a member of "
                                               "clusters[%d] too (list each cluster once)",
                                               i, m.label, it->second));
      }
      space.members.push_back(std::move(m));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPrices(const SweepSpace& space, const std::string& source) {
  const Sweep& sweep = space.sweep;
  const bool priced = sweep.objective() == TOKENS_PER_DOLLAR ||
                      sweep.constraints().max_dollars_per_hour() > 0;
  for (const ClusterMember& m : space.members) {
    if (priced && m.price_per_gpu_hour <= 0) {
      return Invalid(source, absl::StrFormat("cluster '%s' has no price_per_gpu_hour, which "
                                             "the objective or constraints need (set it in its "
                                             "family, or in its gpu type)", m.label));
    }
  }
  return absl::OkStatus();
}

SweepConfig BaseConfig(int batch, int seq_len, int micro_batch) {
  SweepConfig base;
  base.options.training = DefaultTrainingSettings();
  base.options.training.set_batch_size(batch);
  base.options.training.set_seq_len(seq_len);
  base.options.training.set_micro_batch_size(micro_batch);
  return base;
}

// The configurations ExpandSweep would build, counted without building any
// (they depend on a member only through its device count, and not on the
// model or seq_len), in a double so that no list makes it overflow.
// Errors: InvalidArgument when two entries of one strategy kind give the
// same configuration.
absl::StatusOr<double> CountConfigs(const SweepSpace& space, const std::string& source) {
  const Sweep& sweep = space.sweep;
  std::map<int, int> members_with_devices;
  for (const ClusterMember& m : space.members) ++members_with_devices[m.cluster.devices_size()];
  std::map<int, int> entries_of_kind;
  for (const StrategyChoice& s : sweep.strategies()) ++entries_of_kind[s.kind()];
  double per_model_and_seq_len = 0;
  for (int batch : OrDefault<int>(sweep.batch(), {16})) {
    for (int micro : OrDefault<int>(sweep.micro_batch(), {0})) {
      const SweepConfig base = BaseConfig(batch, 0, micro);
      for (const auto& [devices, members] : members_with_devices) {
        double per_member = 0;
        std::map<std::string, int> entry_of_label;  // of the kinds given in several entries
        absl::Status repeated;
        for (int i = 0; i < sweep.strategies_size() && repeated.ok(); ++i) {
          const StrategyChoice& s = sweep.strategies(i);
          const bool kind_repeats = entries_of_kind[s.kind()] > 1;
          ForEachStrategyConfig(s, base, devices, [&](const SweepConfig& c) {
            ++per_member;
            if (!kind_repeats || !repeated.ok()) return;
            const auto [it, inserted] = entry_of_label.emplace(StrategyLabel(c), i);
            if (inserted) return;
            repeated = Invalid(source, absl::StrFormat(
                                           "strategies[%d] (%s) gives '%s' as strategies[%d] "
                                           "does (list each knob value once, in one entry: "
                                           "a repeated configuration would be ranked twice)",
                                           i, StrategyKind_Name(s.kind()), it->first,
                                           it->second));
          });
        }
        RETURN_IF_ERROR(repeated);
        per_model_and_seq_len += per_member * members;
      }
    }
  }
  return per_model_and_seq_len * sweep.models_size() * std::max(1, sweep.seq_len_size());
}

absl::Status CheckConfigCount(const SweepSpace& space, double count, const std::string& source) {
  const Sweep& sweep = space.sweep;
  if (count == 0) {
    return Invalid(source, "the sweep expands to no configuration: on every cluster member, no "
                           "data-parallel degree D of the strategies that choose it (P·D within "
                           "the member's devices, D dividing the batch and the micro-batch its "
                           "share) exists; list dp, or add a cluster with more devices");
  }
  if (count <= kMaxSweepConfigs) return absl::OkStatus();
  const int lists[] = {sweep.models_size(), std::max(1, sweep.batch_size()),
                       std::max(1, sweep.seq_len_size()), std::max(1, sweep.micro_batch_size()),
                       static_cast<int>(space.members.size())};
  double groups = 1;
  for (int n : lists) groups *= n;
  return Invalid(source, absl::StrFormat(
                             "the sweep expands to %.0f configurations, above the limit of %d: "
                             "%d models × %d batch × %d seq_len × %d micro_batch × %d cluster "
                             "members × %.3g strategy configurations per member on average; "
                             "shorten a list or split the sweep",
                             count, kMaxSweepConfigs, lists[0], lists[1], lists[2], lists[3],
                             lists[4], count / groups));
}

std::string Lower(const std::string& s) { return absl::AsciiStrToLower(s); }

std::string Number(double v) { return absl::StrFormat("%g", v); }

}  // namespace

const std::vector<std::string>& SweepKnobColumns() {
  static const auto* columns = new std::vector<std::string>{
      "model",        "batch",          "seq_len",         "micro_batch",
      "cluster",      "nodes",          "gpus_per_node",   "gpu_model",
      "host_link_gbps", "host_link_duplex_gbps", "nvlink_gbps", "gpus_per_pcie_switch",
      "host_memory_gib", "device_memory_gib", "price_per_gpu_hour", "strategy",
      "directions",   "peft",         "pertp",        "dp",             "slicing",         "block_slots",
      "wire_dtype",   "precision",      "recompute",       "gpus",
      "compute_profile"};
  return *columns;
}

std::vector<std::string> SweepKnobValues(const SweepSpace& space, const SweepConfig& config) {
  const ClusterMember& m = space.members[config.member];
  const LowerOptions& o = config.options;
  const StrategyKind k = o.strategy;
  const TrainingSettings& t = o.training;
  auto if_applies = [](bool applies, const std::string& value) {
    return applies ? value : std::string();
  };
  return {space.sweep.models(config.model),
          absl::StrCat(t.batch_size()),
          absl::StrCat(t.seq_len()),
          absl::StrCat(t.micro_batch_size()),
          m.label,
          absl::StrCat(m.nodes),
          absl::StrCat(m.gpus_per_node),
          m.gpu_model,
          Number(m.host_link_gbps),
          Number(m.host_link_duplex_gbps),
          Number(m.nvlink_gbps),
          absl::StrCat(m.gpus_per_pcie_switch),
          Number(m.host_memory_gib),
          Number(m.device_memory_gib),
          Number(m.price_per_gpu_hour),
          Lower(StrategyKind_Name(k)),
          if_applies(!IsFirstOrder(k), absl::StrCat(DirectionsOf(t))),
          if_applies(!IsFirstOrder(k),
                     TrainsAdapters(t.peft()) ? PeftLabel(t.peft()) : std::string("none")),
          if_applies(k == DISTZO2, absl::StrCat(o.pertp)),
          if_applies(k == DISTZO2 || IsFirstOrder(k), absl::StrCat(o.dp)),
          if_applies(k == DISTZO2, o.slicing ? "sliced" : "naive"),
          if_applies(UsesBlockRing(k), absl::StrCat(o.block_slots)),
          if_applies(UsesBlockRing(k), t.wire_dtype() == DTYPE_UNSPECIFIED
                                           ? "host"
                                           : DType_Name(t.wire_dtype())),
          if_applies(IsFirstOrder(k), o.precision == AMP_FP32_MASTER ? "amp" : "bf16"),
          if_applies(IsFirstOrder(k), o.recompute ? "on" : "off"),
          absl::StrCat(config.gpus),
          ComputeProfileFlagName(config.profile)};
}

std::string StrategyLabel(const SweepConfig& config) {
  const LowerOptions& o = config.options;
  const StrategyKind k = o.strategy;
  std::string label = Lower(StrategyKind_Name(k));
  if (k == DISTZO2) {
    absl::StrAppend(&label, absl::StrFormat(" P%dxD%d %s", o.pertp, o.dp,
                                            o.slicing ? "sliced" : "naive"));
  }
  if (IsFirstOrder(k) && k != SINGLE_DEVICE) absl::StrAppend(&label, " x", o.dp);
  if (UsesBlockRing(k)) absl::StrAppend(&label, ", ", o.block_slots, " slots");
  if (UsesBlockRing(k) && o.training.wire_dtype() != DTYPE_UNSPECIFIED) {
    absl::StrAppend(&label, ", wire ", DType_Name(o.training.wire_dtype()));
  }
  if (IsFirstOrder(k)) {
    absl::StrAppend(&label, o.precision == AMP_FP32_MASTER ? ", amp" : ", bf16",
                    o.recompute ? ", recompute" : "");
  }
  if (o.training.micro_batch_size() > 0) {
    absl::StrAppend(&label, ", micro-batch ", o.training.micro_batch_size());
  }
  if (DirectionsOf(o.training) > 1) {
    absl::StrAppend(&label, ", ", DirectionsOf(o.training), " directions");
  }
  if (TrainsAdapters(o.training.peft())) {
    absl::StrAppend(&label, ", ", PeftLabel(o.training.peft()));
  }
  return label;
}

absl::StatusOr<SweepSpace> ExpandSweep(const Sweep& sweep, const std::string& source) {
  SweepSpace space;
  space.sweep = sweep;
  if (space.sweep.objective() == OBJECTIVE_UNSPECIFIED) space.sweep.set_objective(TOKENS_PER_S);
  if (space.sweep.best() == 0) space.sweep.set_best(10);
  if (sweep.models().empty() || sweep.clusters().empty() || sweep.strategies().empty()) {
    return Invalid(source, "a sweep needs at least one each of models, clusters and strategies");
  }
  // First what needs nothing loaded or built.
  RETURN_IF_ERROR(CheckName(sweep.name(), source));
  RETURN_IF_ERROR(CheckTrainingLists(sweep, source));
  for (int i = 0; i < sweep.strategies_size(); ++i) {
    RETURN_IF_ERROR(CheckStrategyChoice(absl::StrFormat("%s: strategies[%d]", source, i),
                                        sweep.strategies(i)));
  }
  RETURN_IF_ERROR(CheckObjectiveAndReport(space.sweep, source));
  ASSIGN_OR_RETURN(const std::optional<ComputeProfile> named, NamedProfile(sweep, source));
  RETURN_IF_ERROR(CheckClusterCount(sweep, source));

  RETURN_IF_ERROR(LoadModels(sweep, source, space));
  RETURN_IF_ERROR(CheckProfiles(named, space, source));
  RETURN_IF_ERROR(ExpandClusters(sweep, source, space));
  RETURN_IF_ERROR(CheckPrices(space, source));
  ASSIGN_OR_RETURN(const double count, CountConfigs(space, source));
  RETURN_IF_ERROR(CheckConfigCount(space, count, source));

  space.configs.reserve(static_cast<size_t>(count));
  auto keep = [&space, &named](const SweepConfig& c) {
    space.configs.push_back(c);
    SweepConfig& kept = space.configs.back();
    ProfiledConfig profiled;
    profiled.strategy = c.options.strategy;
    profiled.precision = c.options.precision;
    profiled.recompute = c.options.recompute;
    profiled.family = space.models[c.model].family();
    kept.profile = named.has_value() ? *named : KernelProfileFor(profiled);
  };
  for (int model = 0; model < sweep.models_size(); ++model) {
    for (int batch : OrDefault<int>(sweep.batch(), {16})) {
      for (int seq : OrDefault<int>(sweep.seq_len(), {2048})) {
        for (int micro : OrDefault<int>(sweep.micro_batch(), {0})) {
          SweepConfig base = BaseConfig(batch, seq, micro);
          base.model = model;
          for (base.member = 0; base.member < static_cast<int>(space.members.size());
               ++base.member) {
            const int devices = space.members[base.member].cluster.devices_size();
            for (const StrategyChoice& s : sweep.strategies()) {
              ForEachStrategyConfig(s, base, devices, keep);
            }
          }
        }
      }
    }
  }
  CHECK(space.configs.size() == static_cast<size_t>(count))
      << "counted " << count << " configurations, built " << space.configs.size();
  return space;
}

absl::StatusOr<SweepSpace> LoadSweep(const std::string& path) {
  Sweep sweep;
  RETURN_IF_ERROR(ReadTextProtoFile(path, &sweep));
  return ExpandSweep(sweep, path);
}

}  // namespace zosched
