#include "runtime/calibration/cluster_kind.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace zosched {

absl::Status CheckClusterKind(const CalibrationSettings& settings,
                              const KnownCalibration& calibration, const Cluster& cluster) {
  const bool testbed = calibration.devices_share_host_cores;
  const std::string which =
      settings.cluster == cluster.name()
          ? absl::StrCat("--cluster=", cluster.name())
          : absl::StrFormat("--cluster=%s (cluster '%s')", settings.cluster, cluster.name());
  std::vector<const Device*> wrong_kind;
  for (const Device& d : cluster.devices()) {
    if (d.shares_host_cores() != testbed) wrong_kind.push_back(&d);
  }
  if (wrong_kind.empty()) {
    if (testbed && cluster.peer_domains().empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s has no peer_domains; the CPU testbed needs the one its devices share, whose "
          "gbps_per_device the runtime throttles all-gathers to (as local_cpu's peer_domains { "
          "name: \"mpi\" link_class: EMULATED gbps_per_device: 4 latency_s: 2e-5 })",
          which));
    }
    return absl::OkStatus();
  }
  const std::string devices = absl::StrFormat(
      "device '%s' (%s)%s", wrong_kind[0]->name(), wrong_kind[0]->model(),
      wrong_kind.size() > 1 ? absl::StrFormat(" and %d more", wrong_kind.size() - 1) : "");
  if (testbed) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s not the CPU testbed's (shares_host_cores is not set), and --backend=cpu "
        "measures this machine's CPU as the testbed: its timings would be written as that "
        "hardware's. Calibrate a GPU cluster with --backend=cuda on its GPU machine (a "
        "--config=cuda build); here, calibrate a CPU testbed cluster (local_cpu, or a copy of "
        "clusters/local_cpu.pbtxt)",
        which, devices + (wrong_kind.size() > 1 ? " are" : " is")));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: %s the CPU testbed's (shares_host_cores: true), and --backend=cuda measures this "
      "machine's NVIDIA GPUs: calibrate the testbed with --backend=cpu, or name a GPU cluster "
      "(e.g. --cluster=h100_sxm_x1)",
      which, devices + (wrong_kind.size() > 1 ? " are" : " is")));
}

}  // namespace zosched
