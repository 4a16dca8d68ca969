// ZO fine-tuning on the CPU testbed, executed from the schedule IR.
//
//   bazel run //runtime:train -- --model=opt-tiny \
//       --strategy=distzo2 --pertp=2 --dp=2 --ranks=4 --steps=200
//   mpirun -np 4 bazel-bin/runtime/train ...   (one machine or several)
//
// One process per schedule device. --ranks=N re-executes this program under
// `mpirun -np N`; one rank needs no launcher. Exit status: 0 on success, 2
// for bad flags or inputs, 1 when a step fails (every rank stops).
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "base/user_path.h"
#include "models/model_spec.h"
#include "runtime/launcher.h"
#include "runtime/mpi_world.h"
#include "runtime/trainer.h"

ABSL_FLAG(int32_t, ranks, 0, "start this many ranks through mpirun (0: as launched)");
ABSL_FLAG(std::string, model, "opt-tiny", "zoo name or ModelSpec path");
ABSL_FLAG(std::string, cluster, "local_cpu", "catalog name or Cluster textproto path");
ABSL_FLAG(std::string, schedule, "", "run this Schedule file instead of lowering");
ABSL_FLAG(std::string, strategy, "zo2", "mezo, zo2 or distzo2");
ABSL_FLAG(int32_t, pertp, 1, "distzo2: P (1 or 2)");
ABSL_FLAG(int32_t, dp, 1, "distzo2: D");
ABSL_FLAG(bool, slicing, true, "distzo2: sliced transfers (false: naive)");
ABSL_FLAG(int32_t, block_slots, 3, "device block slots");
ABSL_FLAG(int32_t, batch, 16, "examples per step");
ABSL_FLAG(int32_t, micro_batch, 0, "examples per forward (0: each device's share)");
ABSL_FLAG(int32_t, seq, 32, "sequence length (tokens, padded)");
ABSL_FLAG(double, lr, 5e-4, "learning rate η");
ABSL_FLAG(double, eps, 1e-3, "perturbation scale ε");
ABSL_FLAG(double, weight_decay, 0, "weight decay λ (not on biases and norms)");
ABSL_FLAG(uint64_t, seed, 0, "base seed of the per-step seeds and the data order");
ABSL_FLAG(std::string, host_dtype, "FP32", "host parameter store dtype");
ABSL_FLAG(std::string, wire_dtype, "", "host<->device transfer dtype (default: host dtype)");
ABSL_FLAG(double, h2d_gbps, 0, "emulated host->device rate, GB/s (0: the cluster's)");
ABSL_FLAG(double, d2h_gbps, 0, "emulated device->host rate, GB/s (0: the cluster's)");
ABSL_FLAG(double, peer_gbps, 0, "emulated peer link rate, GB/s (0: the cluster's)");
ABSL_FLAG(std::string, data, "synthetic", "'synthetic' or a task directory");
ABSL_FLAG(std::string, task, "sst2", "sst2 or boolq");
ABSL_FLAG(int32_t, steps, 100, "total training steps");
ABSL_FLAG(int32_t, eval_every, 0, "evaluate every N steps (0: at the end only)");
ABSL_FLAG(int32_t, eval_examples, 256, "dev examples per evaluation (0: all)");
ABSL_FLAG(std::string, init, "random", "'random' or a .safetensors checkpoint (HF OPT names)");
ABSL_FLAG(uint64_t, init_seed, 1, "seed of the random initialisation");
ABSL_FLAG(bool, resume, false, "continue the run in --out_dir (checkpoint + trajectory)");
ABSL_FLAG(std::string, out_dir, "", "outputs (default: out/train in the workspace)");
ABSL_FLAG(int32_t, collective_timeout_s, 300, "fail a collective waiting longer than this");
ABSL_FLAG(std::string, timeline_out, "", "the measured Timeline (default: OUT_DIR/timeline.pb)");
ABSL_FLAG(std::string, trace_out, "", "its Chrome trace JSON (default: OUT_DIR/trace.json)");

namespace zosched {
namespace {

absl::StatusOr<TrainOptions> OptionsFromFlags() {
  TrainOptions o;
  o.model = absl::GetFlag(FLAGS_model);
  o.cluster = absl::GetFlag(FLAGS_cluster);
  o.schedule = absl::GetFlag(FLAGS_schedule).empty()
                   ? ""
                   : ResolveUserPath(absl::GetFlag(FLAGS_schedule));
  LowerOptions& l = o.lowering;
  if (!StrategyKind_Parse(absl::AsciiStrToUpper(absl::GetFlag(FLAGS_strategy)), &l.strategy) ||
      l.strategy == STRATEGY_KIND_UNSPECIFIED) {
    return absl::InvalidArgumentError("--strategy=" + absl::GetFlag(FLAGS_strategy) +
                                      ": expected mezo, zo2 or distzo2");
  }
  l.pertp = absl::GetFlag(FLAGS_pertp);
  l.dp = absl::GetFlag(FLAGS_dp);
  l.slicing = absl::GetFlag(FLAGS_slicing);
  l.block_slots = absl::GetFlag(FLAGS_block_slots);
  l.training = DefaultTrainingSettings();
  TrainingSettings& t = l.training;
  t.set_batch_size(absl::GetFlag(FLAGS_batch));
  t.set_micro_batch_size(absl::GetFlag(FLAGS_micro_batch));
  t.set_seq_len(absl::GetFlag(FLAGS_seq));
  t.set_learning_rate(absl::GetFlag(FLAGS_lr));
  t.set_epsilon(absl::GetFlag(FLAGS_eps));
  t.set_weight_decay(absl::GetFlag(FLAGS_weight_decay));
  t.set_base_seed(absl::GetFlag(FLAGS_seed));
  t.set_compute_dtype(FP32);
  absl::StatusOr<DType> host = ParseDTypeFlag("host_dtype", absl::GetFlag(FLAGS_host_dtype));
  if (!host.ok()) return host.status();
  t.set_host_dtype(*host);
  absl::StatusOr<DType> wire = ParseDTypeFlag("wire_dtype", absl::GetFlag(FLAGS_wire_dtype));
  if (!wire.ok()) return wire.status();
  t.set_wire_dtype(*wire);
  o.h2d_gbps = absl::GetFlag(FLAGS_h2d_gbps);
  o.d2h_gbps = absl::GetFlag(FLAGS_d2h_gbps);
  o.peer_gbps = absl::GetFlag(FLAGS_peer_gbps);
  o.data = absl::GetFlag(FLAGS_data) == "synthetic" ? "synthetic"
                                                    : ResolveUserPath(absl::GetFlag(FLAGS_data));
  o.task = absl::GetFlag(FLAGS_task);
  o.steps = absl::GetFlag(FLAGS_steps);
  o.eval_every = absl::GetFlag(FLAGS_eval_every);
  o.eval_examples = absl::GetFlag(FLAGS_eval_examples);
  o.init = absl::GetFlag(FLAGS_init) == "random" ? "random"
                                                 : ResolveUserPath(absl::GetFlag(FLAGS_init));
  o.init_seed = absl::GetFlag(FLAGS_init_seed);
  o.resume = absl::GetFlag(FLAGS_resume);
  o.out_dir = absl::GetFlag(FLAGS_out_dir);
  o.collective_timeout_s = absl::GetFlag(FLAGS_collective_timeout_s);
  if (!absl::GetFlag(FLAGS_timeline_out).empty()) {
    o.timeline_out = ResolveUserPath(absl::GetFlag(FLAGS_timeline_out));
  }
  if (!absl::GetFlag(FLAGS_trace_out).empty()) {
    o.trace_out = ResolveUserPath(absl::GetFlag(FLAGS_trace_out));
  }
  if (o.steps < 1) return absl::InvalidArgumentError("--steps must be at least 1");
  return o;
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int ranks = absl::GetFlag(FLAGS_ranks);
  if (ranks > 1 && !zosched::StartedByMpiLauncher()) {
    const absl::Status s =
        zosched::ExecUnderMpirun(ranks, zosched::ArgsWithoutRanks(argc, argv));
    std::fprintf(stderr, "train: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  absl::StatusOr<zosched::TrainOptions> options = zosched::OptionsFromFlags();
  if (!options.ok()) {
    std::fprintf(stderr, "train: %s\n", std::string(options.status().message()).c_str());
    return 2;
  }
  int rank = 0, world = 1;
  if (absl::Status s = zosched::InitMpi(&argc, &argv, &rank, &world); !s.ok()) {
    std::fprintf(stderr, "train: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  if (ranks > 0 && ranks != world) {
    zosched::AbortWorld("--ranks=" + std::to_string(ranks) + " but " + std::to_string(world) +
                            " ranks were started",
                        2);
  }
  const absl::Status status = zosched::Train(*options, rank, world);
  if (!status.ok()) {
    // Stop every rank: one failing rank must not leave the others waiting.
    zosched::AbortWorld(std::string(status.message()),
                        absl::IsInvalidArgument(status) || absl::IsNotFound(status) ? 2 : 1);
  }
  MPI_Finalize();
  return 0;
}
