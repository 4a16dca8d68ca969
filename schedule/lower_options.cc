#include "schedule/lower_options.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_format.h"
#include "base/status_macros.h"
#include "schedule/cluster_lookup.h"
#include "schedule/first_order_model.h"

namespace zosched {
namespace {

// Devices the strategy runs on: P·D for DISTZO2, D for the first-order
// strategies, 1 for MEZO and ZO2.
int DeviceCount(const LowerOptions& options) {
  if (options.strategy == DISTZO2) return options.pertp * options.dp;
  return IsFirstOrder(options.strategy) ? options.dp : 1;
}

// The cluster devices the strategy runs on, in rank order.
absl::StatusOr<std::vector<const Device*>> SelectDevices(const Cluster& cluster,
                                                         const LowerOptions& options) {
  std::vector<const Device*> devices;
  const int wanted = DeviceCount(options);
  if (options.devices.empty()) {
    if (cluster.devices_size() < wanted) {
      return InvalidArgument("cluster '%s' has %d devices; the strategy needs %d", cluster.name(),
                     cluster.devices_size(), wanted);
    }
    for (int i = 0; i < wanted; ++i) devices.push_back(&cluster.devices(i));
    return devices;
  }
  for (const std::string& name : options.devices) {
    const Device* device = FindDevice(cluster, name);
    if (device == nullptr) {
      std::vector<std::string> known;
      for (const Device& d : cluster.devices()) known.push_back(d.name());
      return InvalidArgument("cluster '%s' has no device '%s' (devices: %s)", cluster.name(), name,
                     absl::StrJoin(known, ", "));
    }
    devices.push_back(device);
  }
  if (static_cast<int>(devices.size()) != wanted) {
    return InvalidArgument("%d devices given, but %s needs %d%s", devices.size(),
                   StrategyKind_Name(options.strategy), wanted,
                   options.strategy == DISTZO2
                       ? absl::StrFormat(" (P·D = %d·%d)", options.pertp, options.dp)
                       : "");
  }
  return devices;
}

bool HasPeak(const Device& device, DType dtype) {
  for (const ComputePeak& p : device.peaks()) {
    if (p.dtype() == dtype) return true;
  }
  return false;
}

// The compute dtype: the requested one, which every device must support; by
// default the model's weight dtype where every device has a peak for it,
// else FP32 (the CPU testbed computes in FP32 only).
absl::StatusOr<DType> ChooseComputeDType(DType preferred, DType requested,
                                         const std::vector<const Device*>& devices) {
  const DType dtype = requested != DTYPE_UNSPECIFIED ? requested : preferred;
  for (const Device* d : devices) {
    if (HasPeak(*d, dtype)) continue;
    if (requested == DTYPE_UNSPECIFIED && HasPeak(*d, FP32)) return FP32;
    std::vector<std::string> supported;
    for (const ComputePeak& p : d->peaks()) supported.push_back(DType_Name(p.dtype()));
    return InvalidArgument(
        "device '%s' (%s) does not compute in %s (it has peaks for %s); choose another "
        "compute dtype",
        d->name(), d->model(), DType_Name(dtype), absl::StrJoin(supported, ", "));
  }
  return dtype;
}

absl::Status CheckGrid(const LowerOptions& options) {
  switch (options.strategy) {
    case MEZO:
    case ZO2:
      if (options.pertp != 1 || options.dp != 1) {
        return InvalidArgument("pertp %d and dp %d apply to DISTZO2 only (%s runs on one device)",
                       options.pertp, options.dp, StrategyKind_Name(options.strategy));
      }
      break;
    case DISTZO2:
      if (const int paths = 2 * DirectionsOf(options.training);
          options.pertp < 1 || paths % options.pertp != 0) {
        return InvalidArgument(
            "pertp is %d: perturbation parallelism splits a step's %d forward passes (+ε and "
            "-ε along each of its q = %d directions) evenly, so P must divide %d",
            options.pertp, paths, paths / 2, paths);
      }
      if (options.dp < 1 || options.dp > 4096) {
        return InvalidArgument("dp is %d (expected 1 to 4096 data-parallel groups)", options.dp);
      }
      break;
    case SINGLE_DEVICE:
    case DDP:
    case ZERO_1:
    case ZERO_2:
    case ZERO_3:
      if (options.pertp != 1) {
        return InvalidArgument("pertp %d applies to DISTZO2 only (%s has no perturbations)",
                               options.pertp, StrategyKind_Name(options.strategy));
      }
      if (DirectionsOf(options.training) != 1) {
        return InvalidArgument(
            "directions %d applies to the ZO strategies (MEZO, ZO2, DISTZO2) only: %s computes "
            "gradients by backpropagation",
            options.training.directions(), StrategyKind_Name(options.strategy));
      }
      if (options.training.peft().kind() != PEFT_NONE) {
        return InvalidArgument(
            "peft %s applies to the ZO strategies (MEZO, ZO2, DISTZO2) only: the first-order "
            "baselines train every parameter",
            PeftKind_Name(options.training.peft().kind()));
      }
      if (options.dp < 1 || options.dp > 4096 ||
          (options.strategy == SINGLE_DEVICE && options.dp != 1)) {
        return InvalidArgument("dp is %d (expected %s)", options.dp,
                               options.strategy == SINGLE_DEVICE
                                   ? "1: SINGLE_DEVICE runs on one device"
                                   : "1 to 4096 data-parallel devices");
      }
      if (options.precision != AMP_FP32_MASTER && options.precision != BF16_FP32_GRADS) {
        return InvalidArgument("no precision recipe (expected AMP_FP32_MASTER or BF16_FP32_GRADS)");
      }
      if (options.bucket_bytes < (1 << 20)) {
        return InvalidArgument("bucket_bytes is %d (expected at least 1 MiB; PyTorch uses 25 MiB)",
                               options.bucket_bytes);
      }
      return absl::OkStatus();
    default:
      return InvalidArgument(
          "no strategy given (expected MEZO, ZO2, DISTZO2, SINGLE_DEVICE, DDP, ZERO_1, ZERO_2 or "
          "ZERO_3)");
  }
  if (options.strategy != MEZO && (options.block_slots < 1 || options.block_slots > 1024)) {
    return InvalidArgument("block_slots is %d (expected 1 to 1024; ZO2 uses 3)", options.block_slots);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ResolvedLowerOptions> ResolveLowerOptions(const ModelSpec& model,
                                                         const Cluster& cluster,
                                                         const LowerOptions& options) {
  RETURN_IF_ERROR(CheckGrid(options));
  ResolvedLowerOptions r;
  r.options = options;
  TrainingSettings& t = r.options.training;
  const int dp = options.strategy == DISTZO2 || IsFirstOrder(options.strategy) ? options.dp : 1;
  if (t.batch_size() < 1 || t.batch_size() % dp != 0) {
    return InvalidArgument("batch %d is not a positive multiple of D = %d data-parallel groups",
                   t.batch_size(), dp);
  }
  const int share = t.batch_size() / dp;
  if (t.micro_batch_size() == 0) t.set_micro_batch_size(share);
  if (t.micro_batch_size() < 1 || share % t.micro_batch_size() != 0) {
    return InvalidArgument("each device's share of %d examples is not divisible by the micro-batch %d",
                   share, t.micro_batch_size());
  }
  ASSIGN_OR_RETURN(r.devices, SelectDevices(cluster, options));
  const bool first_order = IsFirstOrder(options.strategy);
  const DType preferred = !first_order                           ? model.weight_dtype()
                          : options.precision == BF16_FP32_GRADS ? BF16
                                                                 : FP16;
  ASSIGN_OR_RETURN(DType compute, ChooseComputeDType(preferred, t.compute_dtype(), r.devices));
  t.set_compute_dtype(compute);
  if (first_order) {
    const DType params = RecipeParamDType(options.precision);
    for (const auto& [name, given] :
         {std::pair<const char*, DType>{"host", t.host_dtype()}, {"wire", t.wire_dtype()}}) {
      if (given != DTYPE_UNSPECIFIED && given != params) {
        return InvalidArgument(
            "%s dtype %s: a first-order strategy keeps its parameters in the "
            "precision recipe's %s (%s); leave it unset",
            name, DType_Name(given), DType_Name(params), PrecisionRecipe_Name(options.precision));
      }
    }
    t.set_host_dtype(params);
    t.set_wire_dtype(params);
  }
  if (t.host_dtype() == DTYPE_UNSPECIFIED) t.set_host_dtype(model.weight_dtype());
  if (t.wire_dtype() == DTYPE_UNSPECIFIED) t.set_wire_dtype(t.host_dtype());
  RETURN_IF_ERROR(ValidateTrainingSettings(model, t));
  return r;
}

}  // namespace zosched
