// What a ZO schedule (MEZO, ZO2, DISTZO2) holds its ops to where the checks
// every family shares (schedule/validate_operands.h) leave it to the family:
// schedule/validate_ops.h checks a ZO schedule with this OpFamily.
#pragma once

#include "schedule/validate_operands.h"

namespace zosched {

// ZO compute kinds and buffer kinds; placements of whole parts; one
// ZO_STATE per device; parameters in the compute dtype; slots holding one
// DECODER_BLOCK; all-gathers in place. Its compute ops: `sign` PLUS or MINUS
// for EMBED, BLOCK_FORWARD and HEAD_LOSS and unset otherwise; `seq_len` the
// training's for those and 0 otherwise; `examples` the micro-batch inside
// the batch for those, the batch for PROJECTED_GRADIENT, 0 for UPDATE and
// CAST; `cast_direction` set for CAST only; params the whole part a forward
// computes with, any range for UPDATE and CAST; the roles sized from
// schedule/compute_op_model.h, checked in this order: perturbed at least
// PerturbedBytes, activations one micro-batch, workspace at least
// WorkspaceBytes, losses whole fp32 losses (a HEAD_LOSS's one per example),
// zo_state kZoStateBytes, wire the params' elements at the wire dtype
// (element i at byte i·wire).
const OpFamily& ZoOpFamily();

}  // namespace zosched
