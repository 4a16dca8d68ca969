#include "schedule/validate_first_order_ops.h"

#include <optional>

#include "base/status_macros.h"
#include "schedule/first_order_model.h"

namespace zosched {
namespace {

bool IsZoBufferKind(BufferKind kind) {
  return kind == HOST_PARAMS || kind == WIRE_STAGING || kind == LOSSES || kind == ZO_STATE ||
         kind == PERTURBED_WEIGHTS;
}

DType RecipeDType(const TrainingSettings& training) { return training.host_dtype(); }

// First-order kinds that process a micro-batch (examples, seq_len set).
bool IsPass(ComputeKind kind) { return kind != GRAD_ACCUMULATE && kind != OPTIMIZER_STEP; }

RoleAccesses FirstOrderRoleAccesses(const OperandChecker& operands, const ComputeOp& c) {
  const ComputeKind k = c.kind();
  const bool recomputing = operands.schedule().strategy().recompute();
  const bool params_read = k == TRAIN_EMBED || k == TRAIN_BLOCK_FORWARD || k == TRAIN_HEAD_LOSS ||
                           k == HEAD_BACKWARD || k == BLOCK_BACKWARD || k == OPTIMIZER_STEP;
  const bool params_written = k == OPTIMIZER_STEP;
  const bool params_named = k == EMBED_BACKWARD || k == GRAD_ACCUMULATE;
  RoleAccesses a;
  a.params = (params_read ? kRead : kUnused) | (params_written ? kWrite : kUnused) |
             (params_named ? kName : kUnused);
  a.lm_head = k == TRAIN_HEAD_LOSS || k == HEAD_BACKWARD ? kRead : kUnused;
  a.activations = k == TRAIN_EMBED ? kWrite
                  : k == TRAIN_BLOCK_FORWARD || k == HEAD_BACKWARD || k == BLOCK_BACKWARD
                      ? kReadWrite
                  : k == TRAIN_HEAD_LOSS || k == EMBED_BACKWARD ? kRead
                                                                : kUnused;
  // Under recomputation a block's forward computes its intermediates
  // transiently, and its backward computes them again: both in the
  // recompute workspace.
  a.workspace = (k == BLOCK_BACKWARD && c.recompute()) || (k == TRAIN_BLOCK_FORWARD && recomputing)
                    ? kWrite
                    : kUnused;
  a.saved = k == TRAIN_BLOCK_FORWARD || k == TRAIN_HEAD_LOSS ? kWrite
            : k == HEAD_BACKWARD                             ? kReadWrite
            : k == BLOCK_BACKWARD                            ? kRead
                                                             : kUnused;
  a.gradients =
      k == OPTIMIZER_STEP ? kRead
      : k == HEAD_BACKWARD || k == BLOCK_BACKWARD || k == EMBED_BACKWARD || k == GRAD_ACCUMULATE
          ? kWrite
          : kUnused;
  a.optimizer_state = k == OPTIMIZER_STEP ? kReadWrite : kUnused;
  a.bucket = k == GRAD_ACCUMULATE ? kRead : kUnused;
  a.master = k == OPTIMIZER_STEP ? kReadWrite : kUnused;
  return a;
}

// The part whose every element a compute op of `kind` computes with;
// nullopt for GRAD_ACCUMULATE and OPTIMIZER_STEP, which take any range of
// any part (a shard).
std::optional<Part> WholeParamsPart(ComputeKind kind) {
  switch (kind) {
    case GRAD_ACCUMULATE:
    case OPTIMIZER_STEP:
      return std::nullopt;
    case TRAIN_EMBED:
    case EMBED_BACKWARD:
      return EMBEDDING_PART;
    case TRAIN_HEAD_LOSS:
    case HEAD_BACKWARD:
      return HEAD_PART;
    default:
      return DECODER_BLOCK;
  }
}

// sign, cast_direction, seq_len and examples.
absl::Status CheckFirstOrderFields(const OperandChecker& operands, const Op& op) {
  const ComputeOp& c = op.compute();
  const ComputeKind k = c.kind();
  const TrainingSettings& t = operands.training();
  if (c.sign() != SIGN_UNSPECIFIED || c.cast_direction() != CAST_DIRECTION_UNSPECIFIED) {
    return OpError(op, "compute.sign / cast_direction",
                   absl::StrCat(Sign_Name(c.sign()), " / ", CastDirection_Name(c.cast_direction())),
                   "unset for %s", ComputeKind_Name(k));
  }
  const bool pass = IsPass(k);
  if (c.seq_len() != (pass ? t.seq_len() : 0)) {
    return OpError(op, "compute.seq_len", c.seq_len(), "%d (%s)", pass ? t.seq_len() : 0,
                   pass ? "the training seq_len" : "unset for this kind");
  }
  if (!pass) {
    if (c.examples() != 0 || c.first_example() != 0) {
      return OpError(op, "compute.examples / first_example",
                     absl::StrFormat("%d / %d", c.examples(), c.first_example()),
                     "0 / 0 (unset for %s)", ComputeKind_Name(k));
    }
    return absl::OkStatus();
  }
  return operands.CheckMicroBatch(op);
}

// The roles other than params and lm_head, in the order they are checked.
absl::Status CheckFirstOrderRoles(const OperandChecker& operands, const Op& op) {
  const ComputeOp& c = op.compute();
  const ComputeKind k = c.kind();
  const ModelSpec& model = operands.model();
  const TrainingSettings& t = operands.training();
  RETURN_IF_ERROR(operands.CheckActivations(op));
  if (c.has_workspace()) {
    // Where it lies here; its size after the roles only first-order kinds
    // have.
    RETURN_IF_ERROR(operands.CheckRole(op, "compute.workspace", c.workspace(), WORKSPACE,
                                       t.compute_dtype(), -1, 0));
  }
  const int64_t n = c.params().elements();
  const int64_t mb = t.micro_batch_size(), seq = t.seq_len();
  const Strategy& strategy = operands.schedule().strategy();
  if (c.has_saved()) {
    const int64_t saved =
        k == TRAIN_HEAD_LOSS || k == HEAD_BACKWARD
            ? HeadSavedBytes(model, mb, seq)
            : BlockSavedBytes(model, mb, seq, strategy.flash_attention(), strategy.recompute());
    RETURN_IF_ERROR(operands.CheckRole(op, "compute.saved", c.saved(), SAVED_ACTIVATIONS,
                                       DTYPE_UNSPECIFIED, saved, 0));
  }
  if (c.has_gradients()) {
    // Under ZERO_2/3 a backward writes its unit's whole gradient into a
    // COMM_BUCKET, from which it is reduce-scattered into the shard.
    const Buffer* b = operands.FindBuffer(c.gradients().buffer());
    const bool staged = ShardsGradients(strategy.kind()) && k != OPTIMIZER_STEP &&
                        k != GRAD_ACCUMULATE && b != nullptr && b->kind() == COMM_BUCKET;
    RETURN_IF_ERROR(operands.CheckRole(op, "compute.gradients", c.gradients(),
                                       staged ? COMM_BUCKET : GRADIENTS, FP32, n * 4, 0));
  }
  if (c.has_bucket()) {
    RETURN_IF_ERROR(
        operands.CheckRole(op, "compute.bucket", c.bucket(), COMM_BUCKET, FP32, n * 4, 0));
  }
  if (c.has_optimizer_state()) {
    RETURN_IF_ERROR(operands.CheckRole(op, "compute.optimizer_state", c.optimizer_state(),
                                       OPTIMIZER_STATE, FP32, n * 8, 0));
  }
  if (c.has_master()) {
    RETURN_IF_ERROR(
        operands.CheckRole(op, "compute.master", c.master(), MASTER_WEIGHTS, FP32, n * 4, 0));
  }
  if (c.has_workspace()) {
    RETURN_IF_ERROR(
        operands.CheckRole(op, "compute.workspace", c.workspace(), WORKSPACE, t.compute_dtype(), -1,
                           BlockRecomputeBytes(model, mb, seq, strategy.flash_attention())));
  }
  return absl::OkStatus();
}

}  // namespace

const OpFamily& FirstOrderOpFamily() {
  static constexpr OpFamily kFamily{"first-order",
                                    IsFirstOrderKind,
                                    IsZoBufferKind,
                                    /*shards_placements=*/true,
                                    /*one_zo_state_per_device=*/false,
                                    RecipeDType,
                                    /*slots_hold_any_part=*/true,
                                    /*slot_content=*/"unit",
                                    /*gathers_in_place=*/false,
                                    CheckFirstOrderFields,
                                    FirstOrderRoleAccesses,
                                    WholeParamsPart,
                                    CheckFirstOrderRoles};
  return kFamily;
}

}  // namespace zosched
