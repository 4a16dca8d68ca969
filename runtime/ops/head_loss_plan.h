// What a HEAD_LOSS op computes, as offsets its kernels take: θ ± εz of the
// head part but its LM head matrix (the final norm, project_out; z of the
// head part's stream), and of the label words' rows of the LM head: the
// untied head's (the head part's last tensor, z of the head part's stream)
// or, for a tied head, the embedding part's token table (z of the
// embedding part's stream), at the rows' elements in that part. Units:
// elements of the compute dtype.
//
// The op's perturbed operand: [head part but lm_head (head.count) | label
// row k at rows_at + k · row_elements]; the head kernel
// (runtime/nn/decoder_forward.h HeadLossFromRows, or the GPU's) then reads
// the activations and writes the op's examples' losses.
#pragma once

#include <cstdint>

#include "models/model.pb.h"
#include "runtime/ops/perturbed_range.h"
#include "schedule/schedule.pb.h"

namespace zosched {

struct HeadLossPlan {
  PerturbedRange head;        // the head part but lm_head, into perturbed [0, head.count)
  bool table_in_head = false;  // untied: the table is the head part's lm_head
  uint32_t table_stream = 0;  // z stream of the table's part
  int64_t table_first = 0;    // the table's first element in its part
  int64_t row_elements = 0;   // e: label word w's row at lm_head + w · e, z at table_first + w · e
  int64_t rows_at = 0;        // the label rows in perturbed: after the head part
  int label_rows = 0;         // the task's label words
};

// The plan of HEAD_LOSS op `op` of a schedule over `model` (validated) for
// a task of `label_words` label words.
HeadLossPlan PlanHeadLoss(const ModelSpec& model, const ComputeOp& op, int label_words);

}  // namespace zosched
