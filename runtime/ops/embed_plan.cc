#include "runtime/ops/embed_plan.h"

#include "models/model_spec.h"
#include "runtime/nn/decoder_forward.h"
#include "runtime/nn/param_layout.h"
#include "models/position_rows.h"

namespace zosched {

EmbedPlan PlanEmbed(const ModelSpec& model, const ComputeOp& op, int seq,
                    int64_t first_position) {
  const PartLayout embedding = EmbeddingPartLayout(model);
  const int64_t h = model.hidden_size();
  const int64_t e = EmbedDim(model);
  EmbedPlan plan;
  if (const TensorSlice* positions = embedding.Find(TensorSlot::kPositionTable)) {
    plan.has_positions = true;
    plan.positions.first = positions->offset + (FirstPositionRow(model) + first_position) * h;
    plan.positions.count = seq * h;
  }
  if (const TensorSlice* project_in = embedding.Find(TensorSlot::kProjectIn)) {
    plan.has_project_in = true;
    plan.project_in.first = project_in->offset;
    plan.project_in.count = h * e;
    plan.project_in.into = plan.positions.count;
  }
  plan.token_table = embedding.Get(TensorSlot::kTokenTable).offset;
  plan.row_elements = e;
  plan.first_token = static_cast<int64_t>(op.first_example()) * seq;
  plan.token_count = static_cast<int64_t>(op.examples()) * seq;
  plan.row_count = EmbedTokenRows(model, op.examples(), seq);
  plan.scratch_at = plan.row_count * e;
  return plan;
}

}  // namespace zosched
