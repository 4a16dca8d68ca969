// Lowering of the first-order baselines (AdamW): SINGLE_DEVICE, DDP,
// ZERO_1, ZERO_2 (= FSDP SHARD_GRAD_OP) and ZERO_3 (= FSDP FULL_SHARD with
// one unit per decoder block). Simulated only: `train` refuses them.
//
// Every device runs its share of the batch as micro-batches, each a forward
// (embedding, blocks, head and loss) then a backward (head, blocks in
// reverse, embedding), then AdamW over the parameters it owns, once every
// gradient reduction of the step is done (as optimizer.step() after
// backward(), which waits for them). Units: the
// embedding part, each decoder block and the head part, each padded to a
// multiple of the device count (FSDP's flat parameters) and sharded in
// equal chunks, device r owning chunk r.
//
// Collectives, on the "collective" stream (ZERO_3 all-gathers on "gather"):
// - DDP: gradients all-reduced in buckets of consecutive units in backward
//   order (units merged until a bucket reaches bucket_bytes, never split),
//   each as soon as the last micro-batch's backward has produced it; the
//   earlier micro-batches do not synchronise (no_sync()).
// - ZERO_1: each unit's gradients reduce-scattered on the last micro-batch;
//   AdamW on the owned chunk; the updated chunks all-gathered at the start
//   of the step, in the order the forward needs the units (the full weights
//   stay resident, so each gather runs as far ahead as the link allows and
//   each forward waits only for its own unit).
// - ZERO_2: as ZERO_1, but gradients are reduce-scattered on every
//   micro-batch from a double-buffered COMM_BUCKET (the embedding and head
//   units, whose tied-table gradient lives through the whole backward, have
//   their own) and accumulated into the owned shard (GRAD_ACCUMULATE).
// - ZERO_3: as ZERO_2, and only shards persist: every micro-batch
//   all-gathers each block into one of two slots before its forward and
//   again before its backward (prefetch depth one); the embedding and head
//   units (FSDP's root) are gathered once per step and kept.
//
// Memory plan per device (schedule/first_order_model.h for the sizes):
// params (RESIDENT_PARAMS, the recipe's dtype; a shard under ZERO_3),
// gradients (GRADIENTS, FP32; a shard under ZERO_2/3), optimizer (m and v,
// FP32) and master (FP32, BF16_FP32_GRADS) over the owned elements, one
// micro-batch's saved activations for every block and the head, its
// residual stream, a recompute workspace, the gradient buckets and the
// gathered slots. A plan that does not fit is refused (ResourceExhausted).
#pragma once

#include "absl/status/status.h"
#include "models/model.pb.h"
#include "schedule/lower_options.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Appends the devices, buffers, ops and edges of `resolved` (a first-order
// strategy) to `schedule`, whose cluster, model, training and strategy are
// set. The caller validates the result.
void LowerFirstOrder(const ModelSpec& model, const ResolvedLowerOptions& resolved,
                     Schedule* schedule);

}  // namespace zosched
