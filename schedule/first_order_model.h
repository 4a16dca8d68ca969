// What first-order training (AdamW; the DDP, ZeRO and FSDP baselines) holds
// and costs, from the ModelSpec, the training settings and the strategy
// alone: the figures first-order lowering sizes buffers and fills costs
// from, and validation checks them against. Simulated only: no backend
// executes a first-order schedule. ComputeOpCost (schedule/compute_op_model.h)
// dispatches first-order kinds to FirstOrderOpCost here; the two models
// share only the part sizes (schedule/model_parts.h) and ComputeCost
// (schedule/compute_cost.h).
//
// Units: bytes, FLOPs, elements. s = seq_len, b = micro-batch, h =
// hidden_size, f = ffn_size, a = num_heads, e = EmbedDim, V = vocab_size,
// T = b·s tokens, c = bytes of the compute dtype, E = BlockParams.
#pragma once

#include <cstdint>

#include "models/accounting.h"
#include "models/model.pb.h"
#include "schedule/compute_cost.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// True for SINGLE_DEVICE, DDP, ZERO_1, ZERO_2 and ZERO_3.
bool IsFirstOrder(StrategyKind kind);
// True for the compute kinds only first-order schedules use (TRAIN_EMBED
// to OPTIMIZER_STEP).
bool IsFirstOrderKind(ComputeKind kind);

// Bytes per parameter of model state, by what it is. Gradients are FP32 in
// both recipes; AdamW's two moments are FP32 (8 bytes).
struct ModelStateBytes {
  int64_t params = 0;     // the weights the forward reads (AMP: FP32 = the master)
  int64_t gradients = 0;  // FP32
  int64_t master = 0;     // FP32 master weights (BF16_FP32_GRADS only)
  int64_t optimizer = 0;  // m and v
  int64_t total() const { return params + gradients + master + optimizer; }
};
// AMP_FP32_MASTER: 4 + 4 + 0 + 8 = 16; BF16_FP32_GRADS: 2 + 4 + 4 + 8 = 18.
ModelStateBytes RecipeBytes(PrecisionRecipe recipe);
// The dtype the recipe stores weights in: FP32 (AMP) or BF16 (Megatron).
DType RecipeParamDType(PrecisionRecipe recipe);

// Which model states `kind` shards over its devices (ZeRO's stages:
// P_os, P_os+g, P_os+g+p): optimizer (and master) from ZERO_1, gradients
// from ZERO_2, parameters from ZERO_3.
bool ShardsOptimizer(StrategyKind kind);
bool ShardsGradients(StrategyKind kind);
bool ShardsParams(StrategyKind kind);

// Elements of one device's shard of a unit of `elements` over `n` devices:
// ⌈elements / n⌉ (the last shard padded, as FSDP's flat parameters are).
int64_t ShardElements(int64_t elements, int n);

// Bytes of activations one block's forward keeps for its backward, for a
// micro-batch of `examples` sequences of `seq` tokens, with 16-bit
// activations. Korthikanti et al., "Reducing Activation Recomputation in
// Large Transformer Models" (MLSys 2023), Section 4.1, counts per layer
// s·b·h·(34 + 5·a·s/h) bytes for f = 4h with dropout: attention 11sbh +
// 5as²b (the scores, their softmax and its dropout mask), MLP 19sbh, the two
// norms 4sbh. Generalised to any FFN width: 18sbh + 4sbf (+ 4sbf more for
// SwiGLU's gate) + the scores. With `flash_attention` (a fused kernel that
// recomputes the scores in the backward) the 5as²b term is not kept. With
// `recompute` (full recomputation) only the block's input, 2sbh, is kept;
// the rest is rebuilt during its backward (BlockRecomputeBytes).
// Grouped-query attention's smaller K and V are not discounted.
int64_t BlockSavedBytes(const ModelSpec& model, int64_t examples, int64_t seq, bool flash_attention,
                        bool recompute);
// What a recomputing backward rebuilds for the block it is in: the full
// (non-recompute) BlockSavedBytes, live for one block at a time.
int64_t BlockRecomputeBytes(const ModelSpec& model, int64_t examples, int64_t seq,
                            bool flash_attention);
// What the head keeps: the FP32 logits over every position, 4·T·V (their
// gradient is written in place by the backward, as fused cross-entropy
// kernels do), and the final norm's input, 2·T·h.
int64_t HeadSavedBytes(const ModelSpec& model, int64_t examples, int64_t seq);

// The cost of a first-order compute op (IsFirstOrderKind) from its kind,
// `examples`, params.elements (n), `recompute` and whether `master` is set,
// for params stored as training.host_dtype (p bytes; a first-order
// schedule's parameter dtype) with FP32 gradients (4) and moments:
//   TRAIN_EMBED:         2Th FLOPs; p·T·h (rows) + c·T·h bytes
//   TRAIN_BLOCK_FORWARD: F = BlockForwardFlopsPerToken·T FLOPs;
//                        p·E + 2c·T·h + BlockSavedBytes bytes
//   TRAIN_HEAD_LOSS:     H = 2·T·e·V (+ 2·T·h·e project_out) + 8Th FLOPs;
//                        p·(head) + c·T·h + 4·T·V bytes
//   HEAD_BACKWARD:       2H FLOPs; p·(head) + 8·(head) + 4·T·V + 2c·T·h bytes
//   BLOCK_BACKWARD:      2F FLOPs (3F with recompute); p·E + 8E +
//                        BlockSavedBytes + 2c·T·h bytes
//   EMBED_BACKWARD:      T·h FLOPs; c·T·h + 8·T·h bytes (rows read, added)
//   GRAD_ACCUMULATE:     n FLOPs; 12n bytes
//   OPTIMIZER_STEP:      12n FLOPs; 4n (gradient) + 16n (m, v) + 2p·n
//                        (weights) + 8n (master, when set) bytes
// where (head) = the HEAD_PART's elements plus the token table when tied.
// `counts` = CountModel(model) (models/accounting.h).
ComputeCost FirstOrderOpCost(const ModelSpec& model, const ModelCounts& counts,
                             const TrainingSettings& training, const ComputeOp& op);

}  // namespace zosched
