#include "runtime/calibration/gpu_model_match.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "schedule/cluster_catalog.h"

namespace zosched {
namespace {

// The words of `name` in upper case, split at '-', ' ' and '_'.
std::vector<std::string> Words(const std::string& name) {
  std::vector<std::string> words =
      absl::StrSplit(absl::AsciiStrToUpper(name), absl::ByAnyChar("- _"), absl::SkipEmpty());
  return words;
}

bool HasDigit(const std::string& word) {
  return std::any_of(word.begin(), word.end(), [](char c) { return absl::ascii_isdigit(c); });
}

}  // namespace

bool ModelNamesGpu(const std::string& cluster_model, const std::string& gpu_name) {
  const std::vector<std::string> model = Words(cluster_model);
  auto first_digit = std::find_if(model.begin(), model.end(), HasDigit);
  if (first_digit == model.end()) return false;
  const std::vector<std::string> generation(model.begin(), first_digit + 1);
  const std::vector<std::string> gpu = Words(gpu_name);
  return std::search(gpu.begin(), gpu.end(), generation.begin(), generation.end()) != gpu.end();
}

std::vector<std::string> CatalogClustersOfGpu(const std::string& gpu_name, int devices) {
  std::vector<std::string> names;
  for (const std::string& name : CatalogClusterNames()) {
    absl::StatusOr<Cluster> cluster = LoadCluster(name);
    if (!cluster.ok() || cluster->devices_size() != devices) continue;
    if (std::all_of(cluster->devices().begin(), cluster->devices().end(),
                    [&](const Device& d) { return ModelNamesGpu(d.model(), gpu_name); })) {
      names.push_back(name);
    }
  }
  return names;
}

absl::Status CheckClusterDescribesGpu(const Cluster& cluster, const std::string& gpu_name) {
  for (const Device& device : cluster.devices()) {
    if (ModelNamesGpu(device.model(), gpu_name)) continue;
    const std::vector<std::string> fitting =
        CatalogClustersOfGpu(gpu_name, cluster.devices_size());
    const std::string instead =
        fitting.empty()
            ? absl::StrFormat("the catalog has no cluster of %d x %s: pass --cluster=FILE, a "
                              "cluster file whose devices are this GPU's model",
                              cluster.devices_size(), gpu_name)
            : absl::StrFormat("pass --cluster=%s", absl::StrJoin(fitting, " or --cluster="));
    return absl::InvalidArgumentError(absl::StrFormat(
        "cluster %s describes device %s as a %s, but this machine's GPU is a %s: its figures "
        "that calibration does not measure (peaks, memory, HBM bandwidth) would be filed as "
        "this GPU's; %s",
        cluster.name(), device.name(), device.model(), gpu_name, instead));
  }
  return absl::OkStatus();
}

}  // namespace zosched
