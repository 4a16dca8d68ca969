#include "runtime/ops/head_loss_plan.h"

#include "models/model_spec.h"
#include "runtime/model_parts.h"
#include "runtime/nn/param_layout.h"

namespace zosched {

HeadLossPlan PlanHeadLoss(const ModelSpec& model, const ComputeOp& op, int label_words) {
  const PartLayout head = HeadPartLayout(model);
  HeadLossPlan plan;
  plan.head.count = head.total_floats;
  if (const TensorSlice* lm_head = head.Find(TensorSlot::kLmHead)) {
    // Untied: the table is the head part's last tensor (models/model_tensors.h
    // HeadTensors); what comes before it is perturbed whole.
    plan.head.count = lm_head->offset;
    plan.table_stream = PartStream(model, HEAD_PART, 0);
    plan.table_first = lm_head->offset;
    plan.table_in_head = true;
  } else {
    plan.table_stream = PartStream(model, EMBEDDING_PART, 0);
    plan.table_first = op.lm_head().first_element();
  }
  plan.row_elements = EmbedDim(model);
  plan.rows_at = plan.head.count;
  plan.label_rows = label_words;
  return plan;
}

}  // namespace zosched
