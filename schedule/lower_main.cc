// Lowers a ZO strategy for a model on a cluster into a Schedule file.
//
//   bazel run //schedule:lower -- --model=opt-1.3b \
//       --cluster=clusters/dgx_a100.pbtxt --strategy=distzo2 --pertp=2 --dp=2 \
//       --slicing=true --batch=16 --seq=2048 --out=/tmp/s.pbtxt
//
// --out: text format for .pbtxt, binary otherwise. Exit status 0 on success,
// 2 for bad flags or a schedule that cannot be lowered (the message says why).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/user_path.h"
#include "models/model_spec.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"
#include "schedule/schedule_stats.h"

ABSL_FLAG(std::string, model, "", "zoo name or ModelSpec textproto path");
ABSL_FLAG(std::string, cluster, "", "catalog name or Cluster textproto path");
ABSL_FLAG(std::string, strategy, "", "mezo, zo2 or distzo2");
ABSL_FLAG(int32_t, pertp, 1, "distzo2: P, perturbation-parallel degree (1 or 2)");
ABSL_FLAG(int32_t, dp, 1, "distzo2: D, data-parallel degree");
ABSL_FLAG(bool, slicing, true, "distzo2: sliced transfers (false: naive scheme)");
ABSL_FLAG(int32_t, block_slots, 3, "zo2/distzo2: device block slots in the ring");
ABSL_FLAG(std::vector<std::string>, devices, {},
          "cluster device names to use, in rank order (default: the first ones)");
ABSL_FLAG(int32_t, batch, 16, "examples per step over all devices");
ABSL_FLAG(int32_t, micro_batch, 0, "examples per forward op (0: each device's share)");
ABSL_FLAG(int32_t, seq, 2048, "sequence length");
ABSL_FLAG(double, epsilon, 1e-3, "ZO perturbation scale");
ABSL_FLAG(double, lr, 1e-7, "learning rate");
ABSL_FLAG(double, weight_decay, 0, "weight decay (not on biases and norms)");
ABSL_FLAG(uint64_t, seed, 0, "base seed of the per-step seeds");
ABSL_FLAG(std::string, host_dtype, "", "FP32, FP16 or BF16 (default: the model's)");
ABSL_FLAG(std::string, wire_dtype, "", "FP32, FP16 or BF16 (default: host dtype)");
ABSL_FLAG(std::string, compute_dtype, "", "FP32, FP16 or BF16 (default: the model's)");
ABSL_FLAG(int32_t, label_words, 2, "label words of the classification prompt");
ABSL_FLAG(std::string, out, "", "output Schedule file (.pbtxt: text)");

namespace zosched {
namespace {

absl::StatusOr<StrategyKind> ParseStrategy(const std::string& value) {
  StrategyKind kind = STRATEGY_KIND_UNSPECIFIED;
  if (!StrategyKind_Parse(absl::AsciiStrToUpper(value), &kind) ||
      kind == STRATEGY_KIND_UNSPECIFIED) {
    return absl::InvalidArgumentError("--strategy='" + value +
                                      "': expected mezo, zo2 or distzo2");
  }
  return kind;
}

absl::Status Run() {
  if (absl::GetFlag(FLAGS_model).empty() || absl::GetFlag(FLAGS_cluster).empty() ||
      absl::GetFlag(FLAGS_out).empty()) {
    return absl::InvalidArgumentError("--model, --cluster, --strategy and --out are required");
  }
  ASSIGN_OR_RETURN(ModelSpec model, LoadModelSpec(absl::GetFlag(FLAGS_model)));
  ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(absl::GetFlag(FLAGS_cluster)));
  LowerOptions options;
  ASSIGN_OR_RETURN(options.strategy, ParseStrategy(absl::GetFlag(FLAGS_strategy)));
  options.pertp = absl::GetFlag(FLAGS_pertp);
  options.dp = absl::GetFlag(FLAGS_dp);
  options.slicing = absl::GetFlag(FLAGS_slicing);
  options.block_slots = absl::GetFlag(FLAGS_block_slots);
  options.devices = absl::GetFlag(FLAGS_devices);
  if (options.strategy != DISTZO2 && (options.pertp != 1 || options.dp != 1)) {
    return absl::InvalidArgumentError("--pertp and --dp apply to --strategy=distzo2 only");
  }
  TrainingSettings& t = options.training;
  t = DefaultTrainingSettings();
  t.set_batch_size(absl::GetFlag(FLAGS_batch));
  t.set_micro_batch_size(absl::GetFlag(FLAGS_micro_batch));
  t.set_seq_len(absl::GetFlag(FLAGS_seq));
  t.set_epsilon(absl::GetFlag(FLAGS_epsilon));
  t.set_learning_rate(absl::GetFlag(FLAGS_lr));
  t.set_weight_decay(absl::GetFlag(FLAGS_weight_decay));
  t.set_base_seed(absl::GetFlag(FLAGS_seed));
  t.set_num_label_words(absl::GetFlag(FLAGS_label_words));
  DType dtype;
  ASSIGN_OR_RETURN(dtype, ParseDTypeFlag("host_dtype", absl::GetFlag(FLAGS_host_dtype)));
  t.set_host_dtype(dtype);
  ASSIGN_OR_RETURN(dtype, ParseDTypeFlag("wire_dtype", absl::GetFlag(FLAGS_wire_dtype)));
  t.set_wire_dtype(dtype);
  ASSIGN_OR_RETURN(dtype, ParseDTypeFlag("compute_dtype", absl::GetFlag(FLAGS_compute_dtype)));
  t.set_compute_dtype(dtype);

  ASSIGN_OR_RETURN(Schedule schedule, LowerSchedule(model, cluster, options));
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
  absl::ParseCommandLine(argc, argv);
  absl::Status status = zosched::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "lower: %s\n", std::string(status.message()).c_str());
    return 2;
  }
  return 0;
}
