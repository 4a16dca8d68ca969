// What a compute op of the IR costs and needs, derived from the ModelSpec and
// the TrainingSettings alone: the single source lowering fills ops from and
// validation checks them against, so a hand-edited cost cannot skew a
// prediction and a hand-edited operand cannot be too small for the kernel.
//
// Units: costs in FLOPs and bytes; sizes in bytes. h = hidden_size, e =
// EmbedDim, V = vocab_size, T = examples · seq_len tokens, c = bytes of the
// compute dtype. Products saturate at INT64_MAX instead of overflowing (a
// saturated figure only arises from a plan validation refuses anyway).
// Every function takes a model that passed ValidateModelSpec, training
// settings with a compute dtype set and, where it asks for them, the model's
// counts (`counts` = CountModel(model), models/accounting.h: derived once by
// the caller, since lowering and validation ask for every op).
//
// First-order kinds are costed by schedule/first_order_model.h, which this
// model dispatches to; both count in schedule/model_parts.h's part sizes
// (included here for the callers, which ask for both) and give a
// ComputeCost (schedule/compute_cost.h).
#pragma once

#include <cstdint>
#include <string>

#include "models/accounting.h"
#include "models/model.pb.h"
#include "schedule/compute_cost.h"
#include "schedule/model_parts.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// True for the ZO kinds that run one sign's forward over a micro-batch:
// EMBED, BLOCK_FORWARD and HEAD_LOSS.
inline bool IsZoForward(ComputeKind kind) {
  return kind == EMBED || kind == BLOCK_FORWARD || kind == HEAD_LOSS;
}

// The cost of `op` from its kind, `examples` and params.elements (n):
//   UPDATE:             4n FLOPs (z, two multiplies, two adds), 2nc bytes
//   EMBED:              3Th FLOPs, 3Thc bytes (rows read, summed, written);
//                       2Th, 2Thc for rotary models (no position rows)
//   BLOCK_FORWARD:      (BlockForwardFlopsPerToken + the adapters' FLOPs
//                       per token under LoRA) · T FLOPs,
//                       (BlockParams + 3 · adapter elements)·c + 2Thc bytes
//   HEAD_LOSS (last position only): examples · (8h + 2he [project_out, when
//                       e != h] + 2·labels·e) FLOPs, (final norm +
//                       project_out)·c + the label rows (of the tied table or
//                       the untied head) + examples·h·c bytes
//   PROJECTED_GRADIENT: 3 FLOPs and 4 bytes per loss (2 · batch losses)
//   CAST:               no FLOPs, n · (wire + compute dtype bytes)
//   first-order kinds:  FirstOrderOpCost (schedule/first_order_model.h)
ComputeCost ComputeOpCost(const ModelSpec& model, const ModelCounts& counts,
                          const TrainingSettings& training, const ComputeOp& op);

// Bytes of one micro-batch's residual stream for one sign: T·h·c with
// examples = training.micro_batch_size().
int64_t MicroBatchActivationBytes(const ModelSpec& model, const TrainingSettings& training);

// Bytes of workspace a compute op of `kind` over one micro-batch needs:
//   BLOCK_FORWARD: BlockForwardWorkspaceElements (models/accounting.h) of
//                  the compute dtype: what both backends' kernels use
//   EMBED:         the gathered token rows, T·e·c; when the model projects
//                  them (e != h), T4 rows and their projection: T4·(e + h)·c
//   HEAD_LOSS:     fp32 scratch for the final norm, the projection and the
//                  label logits: 4·(h + e + examples·labels)
//   other kinds:   0.
int64_t WorkspaceBytes(const ModelSpec& model, const TrainingSettings& training,
                       ComputeKind kind);

// Bytes of the perturbed-weights scratch a compute op of `kind` needs:
//   EMBED:         the position rows it reads (none for rotary models) and
//                  project_in: (seq·h + he [e != h])·c
//   BLOCK_FORWARD: BlockPerturbedScratchElements · c (its vectors and room
//                  for its largest matrix, perturbed one at a time); under
//                  LoRA the block's adapters, adapter_params · c
//   (EMBED and HEAD_LOSS under LoRA copy their frozen rows into the same
//   rooms unperturbed)
//   HEAD_LOSS:     the final norm, project_out and the label words' rows of
//                  the head: (FinalNormParams + he [e != h] + labels·e)·c
//   other kinds:   0.
int64_t PerturbedBytes(const ModelSpec& model, const ModelCounts& counts,
                       const TrainingSettings& training, ComputeKind kind);

// Bytes of one direction's entry of the pending update a ZO_STATE buffer
// holds: seed (u64), g (f32), η (f32) (runtime/zo/zo_state.h); the buffer
// holds q of them (ZoStateBytes).
constexpr int64_t kZoStateBytes = 16;
// Bytes of the ZO_STATE of a schedule with `training`'s directions.
int64_t ZoStateBytes(const TrainingSettings& training);

// The `directions` of a compute op's MeasuredCompute row (cluster.proto):
// q for an UPDATE or PROJECTED_GRADIENT of a step of q > 1 directions,
// whose cost grows with q; 0 for every other op (and for q = 1, so that
// tables measured before n-SPSA still match).
int MeasuredDirections(const TrainingSettings& training, ComputeKind kind);
// The `peft` of a compute op's MeasuredCompute row (cluster.proto): for a
// forward (EMBED, BLOCK_FORWARD, HEAD_LOSS) of a LoRA step, "lora r<rank>
// <targets>" ("lora r8 query,value": what its cost depends on), of a
// prefix step "prefix k<tokens>"; "" for every other op and without
// adapters, so that tables measured before them still match.
std::string MeasuredPeft(const TrainingSettings& training, ComputeKind kind);

// Bytes of one per-example loss (fp32).
constexpr int64_t kLossBytes = 4;

}  // namespace zosched
