// A compute op's operands, resolved from their roles (schedule.proto
// ComputeOp) to addresses in a backend's memory, with what its kernels need
// besides: the z stream of its parameters and, for EMBED and HEAD_LOSS, the
// plan of what they perturb (embed_plan.h, head_loss_plan.h). Backends
// resolve every op once, at creation, so that no op looks anything up.
//
// What each compute op computes, on every backend:
// - UPDATE: θ ← Updated(θ, z, η', g', λ, decays) over the params range with
//   the pending (seed', g', η') of the zo_state operand; nothing while there
//   is none (η' = 0, the first step). z keyed by (seed', the part's stream,
//   element index): identical under any slicing. Decays: part_spans.h.
// - EMBED: the op's examples' token rows, the position rows and project_in,
//   each perturbed out of place (θ ± εz of the embedding part, perturbation.h)
//   into the workspace and perturbed operands (embed_plan.h), then the
//   embedding kernel (runtime/nn EmbedRows or its GPU twin).
// - BLOCK_FORWARD: θ ± εz of the block into the perturbed operand, tensor by
//   tensor (runtime/nn/perturbed_block_layout.h), then one pre-norm decoder
//   block of the model's family over the op's micro-batch, in place. Under
//   LoRA or a prefix the block is read as it is and θ ± εz of its adapters
//   goes into the perturbed operand, all at once; the adapted projections
//   add their adapter's term (runtime/nn/block_lora.h), or attention reads
//   the prefix first (runtime/nn/block_prefix.h).
// - Under LoRA, EMBED and HEAD_LOSS copy their frozen rows into the same
//   rooms unperturbed (Perturbation.frozen_params).
// - HEAD_LOSS: θ ± εz of the head part and of the label words' rows of the
//   LM head (the lm_head operand of a tied head, else the head part's own
//   lm_head, which `lm_head` then points at; head_loss_plan.h), then the head kernel
//   (runtime/nn HeadLossFromRows or its GPU twin).
// - PROJECTED_GRADIENT: g from the losses in example order
//   (schedule/loss_layout.h); the zo_state becomes (this step's seed, g, η).
// - CAST: the params range converted between the compute and wire dtypes.
#pragma once

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "models/model.pb.h"
#include "runtime/ops/embed_plan.h"
#include "runtime/ops/head_loss_plan.h"
#include "schedule/schedule.pb.h"

namespace zosched {

struct ComputeOperands {
  // The first byte of each role's range, or nullptr when the op has no such role.
  char* params = nullptr;
  char* lm_head = nullptr;
  char* perturbed = nullptr;
  char* activations = nullptr;
  char* workspace = nullptr;
  char* losses = nullptr;
  char* zo_state = nullptr;  // a ZoState (runtime/zo/zo_state.h)
  char* wire = nullptr;
  char* adapters = nullptr;  // BLOCK_FORWARD under LoRA or a prefix: the block's ADAPTER_PART
  uint32_t z_stream = 0;  // the params' z stream (PartStream of their part and block)
  uint32_t adapter_stream = 0;  // the adapters' z stream, when set
  EmbedPlan embed;        // EMBED only
  HeadLossPlan head_loss;  // HEAD_LOSS only
};

// Where a BufferRange starts in the backend's memory (nullptr for a buffer
// it does not map).
using AddressOf = absl::FunctionRef<char*(const BufferRange& range)>;

// The operands of compute op `op` of a validated schedule over `model` with
// `training`'s settings, for a task of `label_words` label words.
ComputeOperands ResolveComputeOperands(const ModelSpec& model, const TrainingSettings& training,
                                       const ComputeOp& op, int label_words,
                                       AddressOf address_of);

}  // namespace zosched
