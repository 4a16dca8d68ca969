// The semantic half of a Schedule's validation (schedule/validate.h runs it
// after the structural half): each op's fields and operands against the
// embedded model and training settings, so that a backend can execute every
// op of a validated schedule without a check of its own.
//
// This file runs the checks in order; each concept has a file of its own:
// streams and buffers (validate_streams_and_buffers.h), what every compute
// op shares (validate_operands.h), the compute ops of each family
// (validate_zo_ops.h, validate_first_order_ops.h), copies and collectives
// (validate_transfers.h) and the dataflow of a ZO step
// (validate_zo_dataflow.h). A first-order schedule (SINGLE_DEVICE to
// ZERO_3) gets the same steps with its own kinds, buffers and operand sizes
// (validate_first_order_ops.h), and no step 6 or 7.
#pragma once

#include "absl/status/status.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Returns OK if every op of `schedule` means what it says. The schedule's
// model, training settings and cluster must be valid and it must pass
// ValidateScheduleStructure. Checks, in this order:
//
// 1. Streams: each device has exactly one COMPUTE stream; compute ops run on
//    it, H2D / D2H / DEVICE_TO_DEVICE copies on an H2D / D2H / PEER stream,
//    collectives on a COLLECTIVE stream.
// 2. Buffers: kind and dtype set; HOST_PARAMS in host memory, every other
//    kind on a device; HOST_PARAMS, RESIDENT_PARAMS and ZO_STATE persistent;
//    ParamPlacements only on parameter buffers, each a whole part (valid
//    part, block below the layer count) inside its buffer, none
//    overlapping; exactly one ZO_STATE buffer per device.
// 3. Compute ops: kind set; `sign` PLUS or MINUS for EMBED, BLOCK_FORWARD and
//    HEAD_LOSS and unset otherwise; `seq_len` the training's for those and 0
//    otherwise; `examples` the micro-batch and [first_example, +examples)
//    inside the batch for those, the batch for PROJECTED_GRADIENT, 0 for
//    UPDATE and CAST; exactly the operand roles the kind uses
//    (schedule.proto ComputeKind), each on the op's device with the buffer
//    kind, dtype and size the role needs (compute_op_model.h), listed in the
//    op's reads / writes as the role reads / writes it; parameter operands
//    naming a valid part, block and element range that the buffer holds
//    there (its ParamPlacement, or element i at byte i·dtype of a slot);
//    `cast_direction` set for CAST only; flops and bytes_accessed equal to
//    ComputeOpCost.
// 4. Copies: direction, link class and both dtypes set; the dtypes equal to
//    the buffers'; H2D from a host buffer of the device's own host into the
//    device, D2H back, DEVICE_TO_DEVICE from the device to `peer_device`;
//    src and dst holding the same number of elements; `bytes` = elements ×
//    the device side's dtype; src listed in reads, dst in writes.
// 5. Collectives: send and recv on the op's device, of one dtype, sized as
//    schedule.proto CollectiveOp says for the kind and participant count,
//    ALL_GATHER in place; `bytes` as said there; link class set; every read
//    inside send and every write inside recv (padding may be left out).
// 6. Dataflow on each device, in compute-stream order: each residual stream
//    (an activations range) starts at an EMBED and passes every block in
//    order, 0 .. L-1, before its HEAD_LOSS, all with one sign and one example
//    range (so a forward of the wrong sign, a skipped or repeated block, or a
//    head before the last block is an error); no parameter element is
//    updated twice in a step by one device.
// 7. Losses and parameters: every device receives the L+ and L- of every
//    example exactly once (schedule/loss_layout.h) and its one
//    PROJECTED_GRADIENT reads all of them; every device's parameters have a
//    home (schedule/param_homes.h).
//
// Errors: InvalidArgument naming the op (id, name, device, stream) or
// buffer, the field, the value found and what was expected.
absl::Status ValidateOpSemantics(const Schedule& schedule);

}  // namespace zosched
