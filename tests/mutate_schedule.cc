// Writes schedules mutated the way a user's hand edit would break them, for
// mutated_schedules_test.sh, which feeds each to inspect, simulate and train.
//
//   mutate_schedule --out_dir=DIR
//
// Each mutation is a real schedule lowered for opt-tiny on the CPU testbed
// with one thing changed; it is written as DIR/NAME.pb (binary) with
// DIR/NAME.expect holding a piece of the error every tool must print. The
// classes: what made train segfault, CHECK-fail, hang or train to wrong
// weights before schedules were fully validated (a block index past the
// model, a wrong sign, a batch size the ops disagree with, a BF16 copy into
// an FP32 buffer, an all-gather whose send size disagrees with its
// participants), and every field rule of ValidateSchedule's semantic stage
// and of the training settings (docs/ARCHITECTURE.md, 'Validation: one
// check, then trust'): block, sign, examples against the batch and the
// micro-batch, seq_len against the training's and the model's
// max_positions, element ranges, FLOPs and bytes_accessed against the cost
// model, copy dtypes, operand sizes, collective sizes, ε, η and λ.
// Command line and exit status as every tool's (base/command_line.h): 0
// when every file is written; 2 for bad flags (no --out_dir) or a
// directory that is missing or not writable; 1 when writing fails.
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "base/command_line.h"
#include "base/files.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/textproto.h"
#include "models/model_zoo.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"

ABSL_FLAG(std::string, out_dir, "", "where to write NAME.pb and NAME.expect");

namespace zosched {
namespace {

struct Mutation {
  std::string name;
  std::string expect;  // a piece of the error message
  std::function<absl::StatusOr<Schedule>()> base;
  std::function<absl::Status(Schedule&)> mutate;
};

absl::StatusOr<Schedule> Lowered(StrategyKind strategy, int dp, DType wire) {
  ASSIGN_OR_RETURN(const ModelSpec model, LoadModelSpec("opt-tiny"));
  ASSIGN_OR_RETURN(const Cluster cluster, LoadCluster("local_cpu"));
  LowerOptions o;
  o.strategy = strategy;
  o.dp = dp;
  o.block_slots = 2;
  o.training = DefaultTrainingSettings();
  o.training.set_batch_size(4);
  o.training.set_seq_len(8);
  o.training.set_wire_dtype(wire);
  return LowerSchedule(model, cluster, o);
}

absl::StatusOr<Schedule> Zo2() { return Lowered(ZO2, 1, DTYPE_UNSPECIFIED); }
absl::StatusOr<Schedule> Zo2Bf16Wire() { return Lowered(ZO2, 1, BF16); }
absl::StatusOr<Schedule> Sliced() { return Lowered(DISTZO2, 2, DTYPE_UNSPECIFIED); }

absl::StatusOr<Op*> OpNamed(Schedule& s, const std::string& name, int device = 0) {
  for (Op& op : *s.mutable_ops()) {
    if (op.name() == name && op.device() == device) return &op;
  }
  return absl::NotFoundError("no op '" + name + "'");
}

// Merges the textproto `patch` into op `name` of device `device`.
std::function<absl::Status(Schedule&)> PatchOp(const std::string& name, const std::string& patch,
                                               int device = 0) {
  return [=](Schedule& s) -> absl::Status {
    ASSIGN_OR_RETURN(Op * op, OpNamed(s, name, device));
    Op parsed;
    RETURN_IF_ERROR(ParseTextProto(patch, "patch", &parsed));
    op->MergeFrom(parsed);
    return absl::OkStatus();
  };
}

std::vector<Mutation> Mutations() {
  return {
      {"block_past_the_model", "compute.params.block is 9", Zo2,
       PatchOp("fwd+ block 2", R"pb(compute { params { block: 9 } })pb")},
      {"wrong_sign", "but the residual stream", Zo2,
       PatchOp("fwd- block 1", R"pb(compute { sign: PLUS })pb")},
      {"batch_the_ops_disagree_with", "is 4 / 0; expected 8 / 0 (the batch)", Zo2,
       [](Schedule& s) {
         s.mutable_training()->set_batch_size(8);
         return absl::OkStatus();
       }},
      {"bf16_copy_into_fp32_buffer", "copy.src_dtype / dst_dtype is FP32 / BF16; expected FP32 / FP32",
       Zo2, PatchOp("h2d block 0", R"pb(copy { dst_dtype: BF16 })pb")},
      {"all_gather_send_size", "collective send / recv sizes is 4 / 199936 bytes", Sliced,
       PatchOp("all-gather block 1", R"pb(collective { send { size_bytes: 4 } })pb", 1)},
      {"examples_outside_the_batch", "compute.first_example is 3", Zo2,
       PatchOp("embed+", R"pb(compute { first_example: 3 })pb")},
      {"seq_len_of_an_op", "compute.seq_len is 16; expected 8", Zo2,
       PatchOp("head- loss", R"pb(compute { seq_len: 16 })pb")},
      {"element_range_past_the_part", "compute.params elements is [0, +999999)", Zo2,
       PatchOp("update block 1", R"pb(compute { params { elements: 999999 } })pb")},
      {"hand_edited_flops", "compute.flops is 1; expected", Zo2,
       PatchOp("fwd+ block 3", R"pb(compute { flops: 1 })pb")},
      {"copy_dtype_unset", "copy.src_dtype / dst_dtype is DTYPE_UNSPECIFIED", Zo2Bf16Wire,
       [](Schedule& s) -> absl::Status {
         ASSIGN_OR_RETURN(Op * op, OpNamed(s, "d2h block 0"));
         op->mutable_copy()->set_src_dtype(DTYPE_UNSPECIFIED);
         return absl::OkStatus();
       }},
      {"operand_too_small", "compute.activations.size_bytes is 64; expected 8192", Zo2,
       PatchOp("embed-", R"pb(compute { activations { size_bytes: 64 } })pb")},
      {"collective_bytes", "collective.bytes is 8; expected", Sliced,
       [](Schedule& s) -> absl::Status {
         for (int d : {0, 1}) {
           ASSIGN_OR_RETURN(Op * op, OpNamed(s, "all-gather losses", d));
           op->mutable_collective()->set_bytes(8);
         }
         return absl::OkStatus();
       }},
      {"hand_edited_bytes_accessed", "compute.bytes_accessed is 7; expected", Zo2,
       PatchOp("fwd- block 2", R"pb(compute { bytes_accessed: 7 })pb")},
      {"examples_not_the_micro_batch", "compute.examples is 2; expected 4, the training "
       "micro_batch_size", Zo2,
       PatchOp("fwd+ block 0", R"pb(compute { examples: 2 })pb")},
      {"seq_len_past_max_positions",
       "training seq_len is 128 (expected 1 to model 'opt-tiny' max_positions 64)", Zo2,
       [](Schedule& s) {
         // A consistent edit: the training and every forward say 128 tokens.
         s.mutable_training()->set_seq_len(128);
         for (Op& op : *s.mutable_ops()) {
           if (op.has_compute() && op.compute().seq_len() != 0) {
             op.mutable_compute()->set_seq_len(128);
           }
         }
         return absl::OkStatus();
       }},
      {"weight_decay_negative", "training weight_decay is -0.1 (expected a finite λ >= 0)", Zo2,
       [](Schedule& s) {
         s.mutable_training()->set_weight_decay(-0.1);
         return absl::OkStatus();
       }},
      {"weight_decay_not_finite", "training weight_decay is inf (expected a finite λ >= 0)", Zo2,
       [](Schedule& s) {
         s.mutable_training()->set_weight_decay(std::numeric_limits<double>::infinity());
         return absl::OkStatus();
       }},
      {"epsilon_zero", "epsilon is 0 (expected a finite ε > 0", Zo2,
       [](Schedule& s) {
         s.mutable_training()->set_epsilon(0);
         return absl::OkStatus();
       }},
      {"learning_rate_negative", "learning_rate is -1", Zo2,
       [](Schedule& s) {
         s.mutable_training()->set_learning_rate(-1);
         return absl::OkStatus();
       }},
      {"model_with_4e9_layers", "num_layers", Zo2,
       [](Schedule& s) {
         s.mutable_model()->set_num_layers(4000000000);
         return absl::OkStatus();
       }},
      {"cluster_device_without_memory", "memory_bytes", Zo2,
       [](Schedule& s) {
         s.mutable_cluster()->mutable_devices(0)->set_memory_bytes(0);
         return absl::OkStatus();
       }},
  };
}

absl::Status Run() {
  const std::string dir = absl::GetFlag(FLAGS_out_dir);
  if (dir.empty()) return absl::InvalidArgumentError("--out_dir is required");
  for (const Mutation& m : Mutations()) {
    ASSIGN_OR_RETURN(Schedule s, m.base());
    RETURN_IF_ERROR(m.mutate(s));
    RETURN_IF_ERROR(WriteProtoFile(dir + "/" + m.name + ".pb", s));
    RETURN_IF_ERROR(WriteFile(dir + "/" + m.name + ".expect", m.expect));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"mutate_schedule", "",
       "Writes schedules broken the way a hand edit would break them, each as NAME.pb with\n"
       "NAME.expect holding a piece of the error every tool must print, into --out_dir."});
  return zosched::ExitWith("mutate_schedule", zosched::Run());
}
