// What an EMBED op computes, as offsets its kernels take: the ranges of the
// embedding part it perturbs (θ ± εz, z of the embedding part's stream) and
// where each perturbed copy goes in the op's operands. Units: elements of
// the compute dtype, rows of EmbedDim (e) elements for token rows.
//
// The op's scratch operands:
//   perturbed: [position rows FirstPositionRow + first_position .. + seq (seq · h; none
//               for rotary models) | project_in (h · e)]
//   workspace: [token rows (row_count · e; rows token_count .. row_count
//               zero) | the embedding kernel's scratch]
// then EmbedRows (runtime/nn/decoder_forward.h, or the GPU's) adds the rows and
// positions (and projects the rows) into the activations.
#pragma once

#include <cstdint>

#include "models/model.pb.h"
#include "runtime/ops/perturbed_range.h"
#include "schedule/schedule.pb.h"

namespace zosched {

struct EmbedPlan {
  bool has_positions = false;  // a learned position table (not rotary)
  PerturbedRange positions;   // the op's seq position rows, into perturbed (count 0: none)
  bool has_project_in = false;
  PerturbedRange project_in;  // project_in, into perturbed after the positions (when e != h)
  int64_t token_table = 0;    // embed_tokens [V, e] in the part: token w's row at token_table + w · e
  int64_t row_elements = 0;   // e
  int64_t first_token = 0;    // the op's first token in the step's tokens: first_example · seq
  int64_t token_count = 0;    // examples · seq: token rows perturbed into workspace [0, token_count · e)
  int64_t row_count = 0;      // EmbedTokenRows: rows token_count .. row_count are zero padding
  int64_t scratch_at = 0;     // the kernel's scratch in workspace: row_count · e
};

// The plan of EMBED op `op` of a schedule over `model` (validated: a model
// CheckRuntimeSupports accepts) with sequences of `seq` tokens at positions
// first_position .. + seq (a prefix's k tokens come first:
// models/adapters.h).
EmbedPlan PlanEmbed(const ModelSpec& model, const ComputeOp& op, int seq,
                    int64_t first_position = 0);

}  // namespace zosched
