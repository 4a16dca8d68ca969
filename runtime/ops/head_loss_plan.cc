#include "runtime/ops/head_loss_plan.h"

#include "models/model_spec.h"
#include "runtime/model_parts.h"
#include "runtime/nn/param_layout.h"

namespace zosched {

HeadLossPlan PlanHeadLoss(const ModelSpec& model, const ComputeOp& op, int label_words) {
  HeadLossPlan plan;
  plan.head.count = HeadPartLayout(model).total_floats;
  plan.table_stream = PartStream(model, EMBEDDING_PART, 0);
  plan.table_first = op.lm_head().first_element();
  plan.row_elements = EmbedDim(model);
  plan.rows_at = plan.head.count;
  plan.label_rows = label_words;
  return plan;
}

}  // namespace zosched
