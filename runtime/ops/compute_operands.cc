#include "runtime/ops/compute_operands.h"

#include "models/adapters.h"
#include "models/model_spec.h"
#include "runtime/model_parts.h"

namespace zosched {

ComputeOperands ResolveComputeOperands(const ModelSpec& model, const TrainingSettings& training,
                                       const ComputeOp& op, int label_words,
                                       AddressOf address_of) {
  auto at = [&](bool set, const BufferRange& range) { return set ? address_of(range) : nullptr; };
  ComputeOperands o;
  o.params = at(op.has_params(), op.params().range());
  o.lm_head = at(op.has_lm_head(), op.lm_head().range());
  o.perturbed = at(op.has_perturbed(), op.perturbed());
  o.activations = at(op.has_activations(), op.activations());
  o.workspace = at(op.has_workspace(), op.workspace());
  o.losses = at(op.has_losses(), op.losses());
  o.zo_state = at(op.has_zo_state(), op.zo_state());
  o.wire = at(op.has_wire(), op.wire());
  if (op.has_params()) o.z_stream = PartStream(model, op.params().part(), op.params().block());
  o.adapters = at(op.has_adapters(), op.adapters().range());
  if (op.has_adapters()) o.adapter_stream = PartStream(model, ADAPTER_PART, op.adapters().block());
  if (op.kind() == EMBED) {
    o.embed = PlanEmbed(model, op, training.seq_len(), PrefixTokens(training.peft()));
  }
  if (op.kind() == HEAD_LOSS) {
    o.head_loss = PlanHeadLoss(model, op, label_words);
    // An untied head's table lies in the op's own params (the head part).
    if (o.head_loss.table_in_head) {
      o.lm_head = o.params + o.head_loss.table_first * DTypeBytes(training.compute_dtype());
    }
  }
  return o;
}

}  // namespace zosched
