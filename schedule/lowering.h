// Lowering: a ZO training strategy for a model on a cluster -> a Schedule.
//
// Strategies (DESIGN section 1):
// - MEZO: all parameters resident on one device; per step the previous
//   step's update, then the dual forward (θ+εz and θ-εz) block by block.
// - ZO2: one device; decoder blocks stream from the host parameter store
//   through a ring of `block_slots` device slots on three streams (h2d,
//   compute, d2h). Per block: upload, apply the previous step's pending
//   update, offload (as soon as the update is done), dual forward over every
//   micro-batch. Embeddings, final norm and head stay on the device. With a
//   wire dtype narrower than the compute dtype the upload lands in a staging
//   slot and a CAST op widens it (and narrows it again before the offload).
// - DISTZO2: a P × D grid over P·D devices, rank = p·D + d. P = 2 runs the
//   +ε pass on p = 0 and the -ε pass on p = 1; data-parallel group d takes
//   examples [d·B/D, (d+1)·B/D). With `slicing`, the devices that share a
//   host each upload 1/N of a block (N = their number), update their slice,
//   offload it into the host's single parameter store, and all-gather the
//   block over the peer links; the compute stream updates block b+1 before
//   it forwards block b so the all-gather overlaps compute. Without slicing
//   (the naive scheme) every device streams whole blocks through its own
//   host copy of the parameters, as independent ZO2 processes would.
// Every device then all-gathers the per-example losses (one canonical
// layout) and computes the same projected gradient.
//
// Sizes and costs come from models/accounting.h; the result passes
// ValidateSchedule (schedule/validate.h).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/model.pb.h"
#include "schedule/cluster.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

struct LowerOptions {
  StrategyKind strategy = STRATEGY_KIND_UNSPECIFIED;
  int pertp = 1;          // DISTZO2: P, 1 or 2
  int dp = 1;             // DISTZO2: D >= 1
  bool slicing = true;    // DISTZO2: the DistZO2 communication strategy
  int block_slots = 3;    // ZO2 / DISTZO2: device slots in the ring, >= 1
  // Cluster device names to use, in rank order; empty: the cluster's first
  // devices (1 for MEZO and ZO2, P·D for DISTZO2).
  std::vector<std::string> devices;
  // micro_batch_size 0 means each device's whole share in one micro-batch.
  // Dtypes left unspecified: host defaults to the model's weight_dtype, wire
  // to the host dtype, compute to the model's weight_dtype where every device
  // has a ComputePeak for it and else FP32 (the CPU testbed).
  TrainingSettings training;
};

// Training settings with MeZO's defaults: batch 16, one micro-batch per
// device, seq_len 2048, ε 1e-3, η 1e-7, no weight decay, base seed 0 with
// SEED_FROM_STEP, 2 label words, dtypes unspecified (= the model's).
TrainingSettings DefaultTrainingSettings();

// Lowers `options.strategy` for `model` (validated) on `cluster` (validated).
//
// Errors:
// - InvalidArgument for options that cannot be lowered, saying what would be
//   right: an unknown device, P·D not equal to the number of devices, P not
//   1 or 2, a batch not divisible by D or a share not divisible by the
//   micro-batch, block_slots < 1, a seq_len above the model's max_positions,
//   a compute dtype a device has no ComputePeak for;
// - ResourceExhausted when the memory plan does not fit a device or host,
//   naming it and the shortfall (from ValidateSchedule).
absl::StatusOr<Schedule> LowerSchedule(const ModelSpec& model,
                                       const Cluster& cluster,
                                       const LowerOptions& options);

}  // namespace zosched
