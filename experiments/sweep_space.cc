#include "experiments/sweep_space.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/textproto.h"
#include "models/model_zoo.h"
#include "schedule/training_settings.h"

namespace zosched {
namespace {

absl::Status Invalid(const std::string& source, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", what));
}

bool UsesBlockRing(StrategyKind k) { return k == ZO2 || k == DISTZO2; }
bool IsFirstOrder(StrategyKind k) {
  return k == SINGLE_DEVICE || k == DDP || k == ZERO_1 || k == ZERO_2 || k == ZERO_3;
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
  if (k == STRATEGY_KIND_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        where + ": kind is unset (expected MEZO, ZO2, DISTZO2, SINGLE_DEVICE, DDP, ZERO_1, "
                "ZERO_2 or ZERO_3)");
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
  for (int i = 0; i < s.block_slots_size(); ++i) {
    if (s.block_slots(i) < 1) {
      return Invalid(where, absl::StrFormat("block_slots[%d] is %d (expected 1 or more)", i,
                                            s.block_slots(i)));
    }
  }
  for (int i = 0; i < s.pertp_size(); ++i) {
    if (s.pertp(i) != 1 && s.pertp(i) != 2) {
      return Invalid(where, absl::StrFormat("pertp[%d] is %d (expected 1 or 2)", i, s.pertp(i)));
    }
  }
  for (int i = 0; i < s.dp_size(); ++i) {
    if (s.dp(i) < 1) {
      return Invalid(where, absl::StrFormat("dp[%d] is %d (expected 1 or more)", i, s.dp(i)));
    }
  }
  for (int i = 0; i < s.wire_dtype_size(); ++i) {
    if (s.wire_dtype(i) == DTYPE_UNSPECIFIED) {
      return Invalid(where, absl::StrFormat("wire_dtype[%d] is unset (expected FP32, FP16 or "
                                            "BF16)", i));
    }
  }
  for (int i = 0; i < s.precision_size(); ++i) {
    if (s.precision(i) == PRECISION_RECIPE_UNSPECIFIED) {
      return Invalid(where, absl::StrFormat("precision[%d] is unset (expected AMP_FP32_MASTER "
                                            "or BF16_FP32_GRADS)", i));
    }
  }
  return absl::OkStatus();
}

template <typename T>
std::vector<T> OrDefault(const google::protobuf::RepeatedField<T>& values, std::vector<T> dflt) {
  return values.empty() ? dflt : std::vector<T>(values.begin(), values.end());
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

// Appends `base` with each of the strategy's knob combinations to `out`.
void ExpandStrategy(const StrategyChoice& s, const SweepConfig& base, int devices,
                    std::vector<SweepConfig>& out) {
  const TrainingSettings& t = base.options.training;
  SweepConfig c = base;
  c.options.strategy = s.kind();
  if (s.kind() == MEZO) {
    c.gpus = 1;
    out.push_back(c);
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
          out.push_back(c);
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
        for (int slots : OrDefault<int>(s.block_slots(), {3})) {
          for (int wire : OrDefault<int>(s.wire_dtype(), {DTYPE_UNSPECIFIED})) {
            c.options.pertp = pertp;
            c.options.dp = d;
            c.options.slicing = slicing;
            c.options.block_slots = slots;
            c.options.training.set_wire_dtype(static_cast<DType>(wire));
            c.gpus = pertp * d;
            out.push_back(c);
          }
        }
      }
    }
  }
}

absl::Status CheckTrainingLists(const Sweep& sweep, const std::string& source) {
  for (int i = 0; i < sweep.batch_size(); ++i) {
    if (sweep.batch(i) < 1 || sweep.batch(i) > kMaxBatchSize) {
      return Invalid(source, absl::StrFormat("batch[%d] is %d (expected 1 to %d examples)", i,
                                             sweep.batch(i), kMaxBatchSize));
    }
  }
  for (int i = 0; i < sweep.seq_len_size(); ++i) {
    if (sweep.seq_len(i) < 1) {
      return Invalid(source, absl::StrFormat("seq_len[%d] is %d (expected 1 or more tokens)", i,
                                             sweep.seq_len(i)));
    }
  }
  for (int i = 0; i < sweep.micro_batch_size(); ++i) {
    if (sweep.micro_batch(i) < 0) {
      return Invalid(source, absl::StrFormat("micro_batch[%d] is %d (expected 0, each device's "
                                             "share, or more)", i, sweep.micro_batch(i)));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckObjectiveAndReport(const SweepSpace& space, const std::string& source) {
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
  const Constraints& c = sweep.constraints();
  if (c.min_tokens_per_s() < 0 || c.max_gpus() < 0 || c.max_dollars_per_hour() < 0 ||
      c.min_headroom_gib() < 0) {
    return Invalid(source, "constraints: bounds are 0 (none) or positive");
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
  return absl::OkStatus();
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
      "pertp",        "dp",             "slicing",         "block_slots",
      "wire_dtype",   "precision",      "recompute",       "gpus"};
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
          if_applies(k == DISTZO2, absl::StrCat(o.pertp)),
          if_applies(k == DISTZO2 || IsFirstOrder(k), absl::StrCat(o.dp)),
          if_applies(k == DISTZO2, o.slicing ? "sliced" : "naive"),
          if_applies(UsesBlockRing(k), absl::StrCat(o.block_slots)),
          if_applies(UsesBlockRing(k), t.wire_dtype() == DTYPE_UNSPECIFIED
                                           ? "host"
                                           : DType_Name(t.wire_dtype())),
          if_applies(IsFirstOrder(k), o.precision == AMP_FP32_MASTER ? "amp" : "bf16"),
          if_applies(IsFirstOrder(k), o.recompute ? "on" : "off"),
          absl::StrCat(config.gpus)};
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
  for (int i = 0; i < sweep.models_size(); ++i) {
    absl::StatusOr<ModelSpec> model = LoadModelSpec(sweep.models(i));
    if (!model.ok()) {
      return Invalid(source, absl::StrFormat("models[%d]: %s", i, model.status().message()));
    }
    space.models.push_back(*std::move(model));
  }
  RETURN_IF_ERROR(CheckTrainingLists(sweep, source));
  for (int i = 0; i < sweep.clusters_size(); ++i) {
    ASSIGN_OR_RETURN(std::vector<ClusterMember> members,
                     ExpandClusterFamily(sweep.clusters(i),
                                         absl::StrFormat("%s: clusters[%d]", source, i)));
    for (ClusterMember& m : members) space.members.push_back(std::move(m));
  }
  for (int i = 0; i < sweep.strategies_size(); ++i) {
    RETURN_IF_ERROR(CheckStrategyChoice(absl::StrFormat("%s: strategies[%d]", source, i),
                                        sweep.strategies(i)));
  }
  RETURN_IF_ERROR(CheckObjectiveAndReport(space, source));

  SweepConfig base;
  for (base.model = 0; base.model < sweep.models_size(); ++base.model) {
    for (int batch : OrDefault<int>(sweep.batch(), {16})) {
      for (int seq : OrDefault<int>(sweep.seq_len(), {2048})) {
        for (int micro : OrDefault<int>(sweep.micro_batch(), {0})) {
          base.options.training = DefaultTrainingSettings();
          base.options.training.set_batch_size(batch);
          base.options.training.set_seq_len(seq);
          base.options.training.set_micro_batch_size(micro);
          for (base.member = 0; base.member < static_cast<int>(space.members.size());
               ++base.member) {
            const int devices = space.members[base.member].cluster.devices_size();
            for (const StrategyChoice& s : sweep.strategies()) {
              ExpandStrategy(s, base, devices, space.configs);
              if (space.configs.size() > kMaxSweepConfigs) {
                return Invalid(source, absl::StrFormat(
                                           "the sweep expands to more than %d configurations; "
                                           "split it or shorten its lists",
                                           kMaxSweepConfigs));
              }
            }
          }
        }
      }
    }
  }
  return space;
}

absl::StatusOr<SweepSpace> LoadSweep(const std::string& path) {
  Sweep sweep;
  RETURN_IF_ERROR(ReadTextProtoFile(path, &sweep));
  return ExpandSweep(sweep, path);
}

}  // namespace zosched
