#include "schedule/compute_op_model.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "base/saturating.h"
#include "models/accounting.h"
#include "models/adapters.h"
#include "models/model_spec.h"
#include "schedule/first_order_model.h"
#include "schedule/model_parts.h"
#include "schedule/training_settings.h"

namespace zosched {
namespace {

// Elements of project_in / project_out (each e·h), or 0 when e == h.
int64_t ProjectionElements(const ModelSpec& model) {
  const int64_t e = EmbedDim(model);
  return e != model.hidden_size() ? SatMul(model.hidden_size(), e) : 0;
}

// Rows of the learned position table an embedding reads per token: 1, or 0
// for rotary positions (no table).
int64_t PositionRowsPerToken(const ModelSpec& model) {
  return model.positional() == ROTARY ? 0 : 1;
}

// Elements of the head part a HEAD_LOSS reads whole: the final norm and
// project_out; an untied LM head's matrix is read only at the label rows.
int64_t HeadElementsReadWhole(const ModelSpec& model, const ModelCounts& counts) {
  return SatAdd(counts.final_norm_params, ProjectionElements(model));
}

}  // namespace

ComputeCost ComputeOpCost(const ModelSpec& model, const ModelCounts& counts,
                          const TrainingSettings& training, const ComputeOp& op) {
  if (IsFirstOrderKind(op.kind())) return FirstOrderOpCost(model, counts, training, op);
  const int64_t c = DTypeBytes(training.compute_dtype());
  const int64_t h = model.hidden_size();
  const int64_t e = EmbedDim(model);
  const int64_t n = op.params().elements();
  const int64_t tokens = SatMul(op.examples(), training.seq_len());
  const int64_t act_bytes = SatMul(SatMul(tokens, h), c);
  ComputeCost cost;
  switch (op.kind()) {
    case UPDATE:
      // Per element and direction a normal and a multiply-add; then the
      // mean, the decay and the step.
      cost.flops = SatMul(SatAdd(4, SatMul(2, DirectionsOf(training) - 1)), n);
      cost.bytes_accessed = SatMul(SatMul(2, n), c);
      break;
    case EMBED:
      cost.flops = SatMul(SatMul(2 + PositionRowsPerToken(model), tokens), h);
      cost.bytes_accessed = SatMul(2 + PositionRowsPerToken(model), act_bytes);
      break;
    case BLOCK_FORWARD:
      cost.flops = SatMul(
          SatAdd(counts.BlockForwardFlopsPerToken(training.seq_len()),
                 counts.adapter_flops_per_token),
          tokens);
      // Under LoRA the adapters are read, perturbed into scratch and read
      // again.
      cost.bytes_accessed =
          SatAdd(SatMul(SatAdd(counts.block_params, SatMul(3, counts.adapter_params)), c),
                 SatMul(2, act_bytes));
      break;
    case HEAD_LOSS:
      cost.flops =
          SatMul(op.examples(), SatAdd(SatAdd(SatMul(8, h), SatMul(2, ProjectionElements(model))),
                                       SatMul(SatMul(2, training.num_label_words()), e)));
      cost.bytes_accessed = SatAdd(
          SatAdd(SatMul(HeadElementsReadWhole(model, counts), c),
                 LabelHeadSliceBytes(model, training.num_label_words(), training.compute_dtype())),
          SatMul(SatMul(op.examples(), h), c));
      break;
    case PROJECTED_GRADIENT: {
      const int64_t losses = SatMul(SatMul(2, DirectionsOf(training)), training.batch_size());
      cost.flops = SatMul(3, losses);
      cost.bytes_accessed = SatMul(losses, kLossBytes);
      break;
    }
    case CAST:
      cost.bytes_accessed = SatMul(n, DTypeBytes(training.wire_dtype()) + c);
      break;
    default:
      break;
  }
  return cost;
}

int64_t ZoStateBytes(const TrainingSettings& training) {
  return kZoStateBytes * DirectionsOf(training);
}

int MeasuredDirections(const TrainingSettings& training, ComputeKind kind) {
  const int q = DirectionsOf(training);
  return q > 1 && (kind == UPDATE || kind == PROJECTED_GRADIENT) ? q : 0;
}

std::string MeasuredPeft(const TrainingSettings& training, ComputeKind kind) {
  if (!TrainsAdapters(training.peft()) || !IsZoForward(kind)) return "";
  if (!TrainsLora(training.peft())) return PeftLabel(training.peft());
  std::vector<std::string> targets;
  for (LoraTarget t : LoraTargetsOf(training.peft())) {
    targets.push_back(absl::AsciiStrToLower(LoraTarget_Name(t).substr(sizeof("LORA_") - 1)));
  }
  return absl::StrCat("lora r", training.peft().lora_rank(), " ", absl::StrJoin(targets, ","));
}

int64_t MicroBatchActivationBytes(const ModelSpec& model, const TrainingSettings& training) {
  return SatMul(
      SatMul(SatMul(training.micro_batch_size(), training.seq_len()), model.hidden_size()),
      DTypeBytes(training.compute_dtype()));
}

int64_t WorkspaceBytes(const ModelSpec& model, const TrainingSettings& training,
                       ComputeKind kind) {
  const int64_t tokens = SatMul(training.micro_batch_size(), training.seq_len());
  switch (kind) {
    case BLOCK_FORWARD:
      return SatMul(
          BlockForwardWorkspaceElements(model, training.micro_batch_size(), training.seq_len()),
          DTypeBytes(training.compute_dtype()));
    case EMBED: {
      const int64_t e = EmbedDim(model), h = model.hidden_size();
      const int64_t rows = e != h ? SatAdd(tokens, 3) / 4 * 4 : tokens;
      return SatMul(SatMul(rows, e != h ? e + h : e), DTypeBytes(training.compute_dtype()));
    }
    case HEAD_LOSS:
      return SatMul(4, SatAdd(model.hidden_size() + EmbedDim(model),
                              SatMul(training.micro_batch_size(), training.num_label_words())));
    default:
      return 0;
  }
}

int64_t PerturbedBytes(const ModelSpec& model, const ModelCounts& counts,
                       const TrainingSettings& training, ComputeKind kind) {
  const int64_t c = DTypeBytes(training.compute_dtype());
  switch (kind) {
    case EMBED:
      return SatMul(SatAdd(SatMul(SatMul(training.seq_len(), PositionRowsPerToken(model)),
                                  model.hidden_size()),
                           ProjectionElements(model)),
                    c);
    case BLOCK_FORWARD:
      // Under LoRA only the adapters are perturbed, all at once.
      return SatMul(TrainsAdapters(training.peft()) ? counts.adapter_params
                                                    : counts.block_perturbed_scratch_elements,
                    c);
    case HEAD_LOSS:
      return SatMul(SatAdd(HeadElementsReadWhole(model, counts),
                           SatMul(training.num_label_words(), EmbedDim(model))),
                    c);
    default:
      return 0;
  }
}

}  // namespace zosched
