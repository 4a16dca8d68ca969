#include "schedule/validate_zo_ops.h"

#include <optional>

#include "base/status_macros.h"
#include "models/adapters.h"
#include "models/model_spec.h"
#include "schedule/compute_op_model.h"
#include "schedule/first_order_model.h"
#include "schedule/training_settings.h"

namespace zosched {
namespace {

bool IsZoKind(ComputeKind kind) { return !IsFirstOrderKind(kind); }

bool IsFirstOrderBufferKind(BufferKind kind) { return kind >= GRADIENTS && kind <= COMM_BUCKET; }

DType ComputeDType(const TrainingSettings& training) { return training.compute_dtype(); }

RoleAccesses ZoRoleAccesses(const OperandChecker& operands, const ComputeOp& c) {
  const ComputeKind k = c.kind();
  const bool params_read =
      k == UPDATE || IsZoForward(k) || (k == CAST && c.cast_direction() == COMPUTE_TO_WIRE);
  const bool params_written = k == UPDATE || (k == CAST && c.cast_direction() == WIRE_TO_COMPUTE);
  RoleAccesses a;
  a.params = (params_read ? kRead : kUnused) | (params_written ? kWrite : kUnused);
  a.lm_head = k == HEAD_LOSS ? kRead : kUnused;
  // A forward perturbs into scratch what it reads besides the activations;
  // a rotary model without project_in has nothing of the kind to embed.
  a.perturbed = IsZoForward(k) && PerturbedBytes(operands.model(), operands.counts(),
                                                 operands.training(), k) > 0
                    ? kWrite
                    : kUnused;
  a.activations = k == EMBED           ? kWrite
                  : k == BLOCK_FORWARD ? kReadWrite
                  : k == HEAD_LOSS     ? kRead
                                       : kUnused;
  a.workspace = IsZoForward(k) ? kWrite : kUnused;
  a.losses = k == HEAD_LOSS ? kWrite : k == PROJECTED_GRADIENT ? kRead : kUnused;
  a.zo_state = k == UPDATE ? kRead : k == PROJECTED_GRADIENT ? kWrite : kUnused;
  if (k == CAST) a.wire = c.cast_direction() == WIRE_TO_COMPUTE ? kRead : kWrite;
  a.adapters =
      k == BLOCK_FORWARD && TrainsAdapters(operands.training().peft()) ? kRead : kUnused;
  return a;
}

// The part whose every element a compute op of `kind` computes with;
// nullopt for UPDATE and CAST, which take any range of any part.
std::optional<Part> WholeParamsPart(ComputeKind kind) {
  switch (kind) {
    case UPDATE:
    case CAST:
      return std::nullopt;
    case EMBED:
      return EMBEDDING_PART;
    case HEAD_LOSS:
      return HEAD_PART;
    default:
      return DECODER_BLOCK;
  }
}

// sign, direction, seq_len, examples and cast_direction.
absl::Status CheckZoFields(const OperandChecker& operands, const Op& op) {
  const ComputeOp& c = op.compute();
  const ComputeKind k = c.kind();
  const TrainingSettings& t = operands.training();
  if (IsZoForward(k) ? (c.sign() != PLUS && c.sign() != MINUS) : c.sign() != SIGN_UNSPECIFIED) {
    return OpError(op, "compute.sign", Sign_Name(c.sign()), "%s",
                   IsZoForward(k) ? "PLUS or MINUS" : "unset for this kind");
  }
  const int directions = DirectionsOf(t);
  if (IsZoForward(k) ? (c.direction() < 0 || c.direction() >= directions) : c.direction() != 0) {
    return OpError(op, "compute.direction", c.direction(), "%s",
                   IsZoForward(k) ? absl::StrFormat("0 to %d (the step's %d directions)",
                                                    directions - 1, directions)
                                  : std::string("unset for this kind"));
  }
  const int seq = IsZoForward(k) ? t.seq_len() : 0;
  if (c.seq_len() != seq) {
    return OpError(op, "compute.seq_len", c.seq_len(), "%d (%s)", seq,
                   IsZoForward(k) ? "the training seq_len" : "unset for this kind");
  }
  if (IsZoForward(k)) {
    RETURN_IF_ERROR(operands.CheckMicroBatch(op));
  } else {
    const int examples = k == PROJECTED_GRADIENT ? t.batch_size() : 0;
    if (c.examples() != examples || c.first_example() != 0) {
      return OpError(op, "compute.examples / first_example",
                     absl::StrFormat("%d / %d", c.examples(), c.first_example()), "%d / 0 (%s)",
                     examples, k == PROJECTED_GRADIENT ? "the batch" : "unset for this kind");
    }
  }
  if ((k == CAST) != (c.cast_direction() != CAST_DIRECTION_UNSPECIFIED)) {
    return OpError(op, "compute.cast_direction", CastDirection_Name(c.cast_direction()), "%s",
                   k == CAST ? "WIRE_TO_COMPUTE or COMPUTE_TO_WIRE" : "unset for this kind");
  }
  return absl::OkStatus();
}

// The roles other than params and lm_head, in the order they are checked.
absl::Status CheckZoRoles(const OperandChecker& operands, const Op& op) {
  const ComputeOp& c = op.compute();
  const ComputeKind k = c.kind();
  const ModelSpec& model = operands.model();
  const TrainingSettings& t = operands.training();
  const DType compute = t.compute_dtype();
  // Under LoRA or a prefix the base is frozen: only adapters take updates;
  // without them there are no adapters.
  const bool adapters = TrainsAdapters(t.peft());
  if (k == UPDATE && (c.params().part() == ADAPTER_PART) != adapters) {
    return OpError(op, "compute.params.part", Part_Name(c.params().part()), "%s",
                   adapters ? "ADAPTER_PART: under training.peft LORA or PREFIX the base "
                              "parameters are frozen and only the adapters are updated"
                            : "a part of the model (ADAPTER_PART exists under training.peft "
                              "LORA or PREFIX only)");
  }
  if (c.has_perturbed()) {
    RETURN_IF_ERROR(operands.CheckRole(op, "compute.perturbed", c.perturbed(), PERTURBED_WEIGHTS,
                                       compute, -1,
                                       PerturbedBytes(model, operands.counts(), t, k)));
  }
  RETURN_IF_ERROR(operands.CheckActivations(op));
  if (c.has_workspace()) {
    RETURN_IF_ERROR(operands.CheckRole(op, "compute.workspace", c.workspace(), WORKSPACE, compute,
                                       -1, WorkspaceBytes(model, t, k)));
  }
  if (c.has_losses()) {
    RETURN_IF_ERROR(operands.CheckRole(op, "compute.losses", c.losses(), LOSSES, FP32,
                                       k == HEAD_LOSS ? c.examples() * kLossBytes : -1,
                                       kLossBytes));
    if (c.losses().offset_bytes() % kLossBytes != 0 || c.losses().size_bytes() % kLossBytes != 0) {
      return OpError(op, "compute.losses", RangeText(c.losses()),
                     "a range of whole fp32 losses (offset and size multiples of 4)");
    }
  }
  if (c.has_zo_state()) {
    RETURN_IF_ERROR(operands.CheckRole(op, "compute.zo_state", c.zo_state(), ZO_STATE,
                                       DTYPE_UNSPECIFIED, ZoStateBytes(t), 0));
  }
  if (c.has_wire()) {
    const int64_t wb = DTypeBytes(t.wire_dtype());
    RETURN_IF_ERROR(operands.CheckRole(op, "compute.wire", c.wire(), WIRE_STAGING, t.wire_dtype(),
                                       c.params().elements() * wb, 0));
    if (c.wire().offset_bytes() != c.params().first_element() * wb) {
      return OpError(op, "compute.wire.offset_bytes", c.wire().offset_bytes(),
                     "%d: a staging buffer holds the slot's elements at the wire dtype, element "
                     "i at byte i·%d",
                     c.params().first_element() * wb, wb);
    }
  }
  return absl::OkStatus();
}

}  // namespace

const OpFamily& ZoOpFamily() {
  static constexpr OpFamily kFamily{"ZO",
                                    IsZoKind,
                                    IsFirstOrderBufferKind,
                                    /*shards_placements=*/false,
                                    /*one_zo_state_per_device=*/true,
                                    ComputeDType,
                                    /*slots_hold_any_part=*/false,
                                    /*slot_content=*/"DECODER_BLOCK",
                                    /*gathers_in_place=*/true,
                                    CheckZoFields,
                                    ZoRoleAccesses,
                                    WholeParamsPart,
                                    CheckZoRoles};
  return kFamily;
}

}  // namespace zosched
