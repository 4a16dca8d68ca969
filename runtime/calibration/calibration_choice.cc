#include "runtime/calibration/calibration_choice.h"

#include "absl/strings/str_join.h"
#include "schedule/cluster_catalog.h"

namespace zosched {
namespace {

// The names of the entries of `known` whose devices share host cores, or
// whose do not, joined by `separator`.
std::string NamesWhere(const std::vector<KnownCalibration>& known, bool devices_share_host_cores,
                       const std::string& separator) {
  std::vector<std::string> names;
  for (const KnownCalibration& k : known) {
    if (k.devices_share_host_cores == devices_share_host_cores) names.push_back(k.name);
  }
  return absl::StrJoin(names, separator);
}

}  // namespace

absl::StatusOr<const KnownCalibration*> ChooseCalibration(
    const CalibrationSettings& settings, const std::vector<KnownCalibration>& known) {
  const KnownCalibration* chosen = nullptr;
  std::vector<std::string> names;
  for (const KnownCalibration& k : known) {
    if (k.name == settings.backend) chosen = &k;
    names.push_back(k.name);
  }
  if (chosen == nullptr) {
    return absl::InvalidArgumentError("--backend='" + settings.backend + "': expected " +
                                      absl::StrJoin(names, " or "));
  }
  const std::string testbeds = "--backend=" + NamesWhere(known, true, " or --backend=");
  const std::string accelerators = "--backend=" + NamesWhere(known, false, " or --backend=");
  if (!chosen->devices_share_host_cores) {
    if (settings.threads != 1) {
      return absl::InvalidArgumentError("--threads applies to " + testbeds + " only");
    }
    if (!settings.hosts.empty()) {
      return absl::InvalidArgumentError("--hosts applies to " + testbeds + " only");
    }
    if (settings.directions != 1 || settings.peft.kind != "none") {
      return absl::InvalidArgumentError(
          (settings.directions != 1 ? "--directions" : "--peft") + std::string(" applies to ") +
          testbeds + " only (an accelerator measures the shapes of --schedules, directions, "
          "adapters and all)");
    }
    return chosen;
  }
  if (!settings.compute_dtype.empty() || settings.tf32) {
    return absl::InvalidArgumentError("--compute_dtype and --tf32 apply to " + accelerators +
                                      " only (the CPU testbed computes in FP32)");
  }
  if (!settings.schedules.empty()) {
    return absl::InvalidArgumentError(
        "--schedules applies to " + accelerators +
        " only (the CPU testbed measures the shapes of --model, --batch, --seq and --directions)");
  }
  return chosen;
}

std::string DefaultCluster(const KnownCalibration& calibration) {
  for (const std::string& name : calibration.default_clusters) {
    if (!CatalogClusterPath(name).empty()) return name;
  }
  return calibration.default_clusters.back();
}

}  // namespace zosched
