// What a first-order schedule (SINGLE_DEVICE, DDP, ZERO_1, ZERO_2, ZERO_3;
// simulated only) holds its ops to where the checks every family shares
// (schedule/validate_operands.h) leave it to the family:
// schedule/validate_ops.h checks a first-order schedule with this OpFamily.
#pragma once

#include "schedule/validate_operands.h"

namespace zosched {

// First-order compute kinds and buffer kinds; placements of any range of a
// part (ZERO_3's shards); no ZO_STATE; parameters in the recipe's dtype
// (the training host_dtype); slots holding gathered units of any part;
// all-gathers into any buffer. Its compute ops: `sign` and `cast_direction`
// unset; `seq_len` the training's and `examples` the micro-batch inside the
// batch for the passes (TRAIN_EMBED to EMBED_BACKWARD), both 0 for
// GRAD_ACCUMULATE and OPTIMIZER_STEP; params the whole part a pass computes
// with, any range for GRAD_ACCUMULATE and OPTIMIZER_STEP; the roles checked
// in this order: activations one micro-batch; workspace where it lies;
// saved activations exactly BlockSavedBytes or HeadSavedBytes
// (schedule/first_order_model.h); gradients, bucket and master FP32 and
// optimizer state two FP32 moments per parameter element, a ZERO_2/3
// backward's gradients in a COMM_BUCKET; a recomputing backward's workspace
// at least BlockRecomputeBytes.
const OpFamily& FirstOrderOpFamily();

}  // namespace zosched
