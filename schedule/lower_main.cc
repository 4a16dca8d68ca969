// Lowers a ZO strategy for a model on a cluster into a Schedule file.
//
//   bazel run //schedule:lower -- --model=opt-1.3b
//       --cluster=clusters/dgx_a100.pbtxt --strategy=distzo2 --pertp=2 --dp=2
//       --slicing=true --batch=16 --seq=2048 --out=/tmp/s.pbtxt
//
// The lowering flags (schedule/lower_flags.h) are train's too, with the same
// defaults; one given for a strategy that does not read it is refused.
// --compute_profile names how the simulator costs the schedule's GPU compute
// (schedule.proto's ComputeProfile: roofline, the default; zosched_cuda;
// pytorch_mezo; pytorch_zo2; pytorch_first_order and megatron_first_order, for
// first-order strategies); one whose implementation does not run the
// schedule (schedule/compute_profile_fit.h) is refused, naming those that do.
// --out: text format for .pbtxt, binary otherwise. Command line and exit
// status as every tool's (base/command_line.h): 0 on success; 2 for bad
// flags, an unknown model or cluster, a schedule that cannot be lowered or
// does not fit, or an --out path that cannot be created (the message says
// why); 1 when writing the file fails.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "base/command_line.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/user_path.h"
#include "models/model_spec.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/compute_profile_fit.h"
#include "schedule/compute_profile_flag.h"
#include "schedule/lower_flags.h"
#include "schedule/lowering.h"
#include "schedule/schedule_stats.h"

ABSL_FLAG(std::string, out, "", "output Schedule file (.pbtxt: text)");
ABSL_FLAG(std::string, compute_profile, "roofline",
          "how the simulator costs GPU compute: roofline, zosched_cuda, pytorch_mezo or "
          "pytorch_zo2 (ZO strategies), or pytorch_first_order or megatron_first_order "
          "(first-order ones)");

namespace zosched {
namespace {

absl::Status Run() {
  if (absl::GetFlag(FLAGS_out).empty()) {
    return absl::InvalidArgumentError("--out is required (the Schedule file to write)");
  }
  ASSIGN_OR_RETURN(const LowerOptions options, LowerOptionsFromFlags());
  ASSIGN_OR_RETURN(const ComputeProfile profile,
                   ParseComputeProfileFlag(absl::GetFlag(FLAGS_compute_profile)));
  ASSIGN_OR_RETURN(const ModelSpec model, LoadModelSpec(absl::GetFlag(FLAGS_model)));
  ASSIGN_OR_RETURN(const Cluster cluster, LoadCluster(absl::GetFlag(FLAGS_cluster)));
  ASSIGN_OR_RETURN(Schedule schedule, LowerSchedule(model, cluster, options));
  ProfiledConfig config;
  config.strategy = options.strategy;
  config.precision = options.precision;
  config.recompute = options.recompute;
  config.family = model.family();
  if (absl::Status fits = CheckProfileRuns(profile, config); !fits.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--compute_profile=", fits.message()));
  }
  schedule.set_compute_profile(profile);
  const std::string out = ResolveUserPath(absl::GetFlag(FLAGS_out));
  RETURN_IF_ERROR(WriteProtoFile(out, schedule));
  int64_t peak = 0;
  for (const DeviceStats& s : ComputeDeviceStats(schedule)) {
    peak = std::max(peak, s.memory_bytes);
  }
  std::printf("wrote %s: '%s', %d devices, %d ops, %d edges, %d buffers, "
              "peak device memory %.2f GB\n",
              out.c_str(), schedule.name().c_str(), schedule.devices_size(),
              schedule.ops_size(), schedule.edges_size(), schedule.buffers_size(),
              peak / 1e9);
  return absl::OkStatus();
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"lower", "",
       "Lowers a strategy (--strategy) for a model (--model) on a cluster (--cluster) into a\n"
       "Schedule file (--out; .pbtxt: text, else binary). The lowering flags are train's too."});
  return zosched::ExitWith("lower", zosched::Run());
}
