// Lowering: a training strategy (ZO, or a first-order baseline) for a model on a cluster -> a
// Schedule.
//
// Strategies (docs/ARCHITECTURE.md, 'The algorithms'):
// - MEZO: all parameters resident on one device; per step the previous
//   step's update, then the dual forward (θ+εz and θ-εz) block by block.
// - ZO2: one device; decoder blocks stream from the host parameter store
//   through a ring of `block_slots` device slots on three streams (h2d,
//   compute, d2h). Per block: upload, apply the previous step's pending
//   update, offload (as soon as the update is done), dual forward over every
//   micro-batch. Embeddings, final norm and head stay on the device. With a
//   wire dtype narrower than the compute dtype the upload lands in a staging
//   slot and a CAST op widens it (and narrows it again before the offload).
// - DISTZO2: a P × D grid over P·D devices (schedule/device_plan.h). With
//   `slicing`, the devices that share a host each upload 1/N of a block,
//   update their slice, offload it into the host's single parameter store,
//   and all-gather the block over the peer links; the compute stream updates
//   block b+1 before it forwards block b so the all-gather overlaps compute.
//   Without slicing (the naive scheme) every device streams whole blocks
//   through its own host copy of the parameters, as independent ZO2
//   processes would.
// Every device then all-gathers the per-example losses (one canonical
// layout) and computes the same projected gradient.
// - SINGLE_DEVICE, DDP, ZERO_1, ZERO_2, ZERO_3: the first-order baselines,
//   simulated only (schedule/first_order_lowering.h).
//
// The pieces: schedule/lower_options.h (what to lower and its checks),
// schedule/device_plan.h (grid and slicing), schedule/memory_plan.h
// (buffers), schedule/compute_op_model.h (costs and operand sizes),
// schedule/schedule_builder.h (appending to the proto). The result passes
// ValidateSchedule (schedule/validate.h).
#pragma once

#include "absl/status/statusor.h"
#include "models/model.pb.h"
#include "schedule/cluster.pb.h"
#include "schedule/lower_options.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Lowers `options.strategy` for `model` (validated) on `cluster` (validated).
//
// Errors:
// - InvalidArgument for options that cannot be lowered (ResolveLowerOptions);
// - ResourceExhausted when the memory plan does not fit a device or host,
//   naming it and the shortfall (from ValidateSchedule).
absl::StatusOr<Schedule> LowerSchedule(const ModelSpec& model, const Cluster& cluster,
                                       const LowerOptions& options);

// LowerSchedule into `*schedule`, which must be empty. It may live on a
// google::protobuf::Arena: a schedule is thousands of small messages, which
// an arena allocates and frees far faster than the heap (the explorer
// lowers every configuration so). The same errors as LowerSchedule; after
// one, `*schedule` holds a partial lowering.
absl::Status LowerScheduleInto(const ModelSpec& model, const Cluster& cluster,
                               const LowerOptions& options, Schedule* schedule);

}  // namespace zosched
