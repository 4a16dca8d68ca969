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
#pragma once

#include <cstdint>

#include "models/accounting.h"
#include "models/model.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Parameters of `part`: EMBEDDING_PART EmbeddingParams (token table, position
// table, project_in), DECODER_BLOCK BlockParams, HEAD_PART FinalNormParams +
// HeadParams (models/accounting.h); 0 for PART_UNSPECIFIED.
int64_t PartElements(const ModelCounts& counts, Part part);

// Elements of the token table embed_tokens [V, e], which starts the
// embedding part and is the LM head when the head is tied.
int64_t TokenTableElements(const ModelSpec& model);

struct ComputeCost {
  int64_t flops = 0;
  int64_t bytes_accessed = 0;
};

// The cost of `op` from its kind, `examples` and params.elements (n):
//   UPDATE:             4n FLOPs (z, two multiplies, two adds), 2nc bytes
//   EMBED:              3Th FLOPs, 3Thc bytes (rows read, summed, written)
//   BLOCK_FORWARD:      BlockForwardFlopsPerToken · T FLOPs,
//                       BlockParams·c + 2Thc bytes
//   HEAD_LOSS (last position only): examples · (8h + 2he [project_out, when
//                       e != h] + 2·labels·e) FLOPs, HEAD_PART·c + the label
//                       rows + examples·h·c bytes
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
//   EMBED:         the position rows it reads and project_in: (seq·h + he [e != h])·c
//   BLOCK_FORWARD: BlockPerturbedScratchElements · c (its vectors and room
//                  for its largest matrix, perturbed one at a time)
//   HEAD_LOSS:     the final norm, project_out and the label words' rows of
//                  the head: (FinalNormParams + he [e != h] + labels·e)·c
//   other kinds:   0.
int64_t PerturbedBytes(const ModelSpec& model, const ModelCounts& counts,
                       const TrainingSettings& training, ComputeKind kind);

// Bytes of the pending update a ZO_STATE buffer holds: seed (u64), g (f32),
// η (f32).
constexpr int64_t kZoStateBytes = 16;
// Bytes of one per-example loss (fp32).
constexpr int64_t kLossBytes = 4;

}  // namespace zosched
