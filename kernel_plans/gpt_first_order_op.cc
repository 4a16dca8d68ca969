#include "kernel_plans/gpt_first_order_op.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/accounting.h"

namespace zosched {

GptShape GptShapeOf(const ModelSpec& model, const ComputeOp& op, DType dtype) {
  GptShape s;
  static_cast<OpShape&>(s) = ShapeOf(model, op, dtype);
  s.d = s.h / s.heads;
  s.vocab = model.vocab_size();
  s.positions = (EmbeddingParams(model) - s.vocab * s.h) / s.h;
  s.tied = model.tied_lm_head();
  s.relu = model.activation() == RELU;
  return s;
}

absl::Status CheckGptBlocks(const ModelSpec& model, const std::string& profile) {
  auto refuse = [&model, &profile](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "model '%s' (%s) %s; %s runs GPT-2 blocks (pre-norm LayerNorm, biased projections, GELU "
        "or ReLU, learned positions) at GPT-2's and OPT's sizes",
        model.name(), Family_Name(model.family()), what, profile));
  };
  if (model.family() != GPT2 && model.family() != OPT) return refuse("is of another family");
  if (model.norm() != LAYER_NORM || model.norm_placement() != PRE_NORM || !model.final_norm()) {
    return refuse("is not pre-norm LayerNorm with a final norm");
  }
  if (!model.linear_bias()) return refuse("has projections without biases");
  if (model.activation() != GELU && model.activation() != RELU) {
    return refuse(absl::StrCat("has activation ", Activation_Name(model.activation())));
  }
  if (model.positional() != LEARNED && model.positional() != LEARNED_OPT_OFFSET) {
    return refuse("has no learned position table");
  }
  if (model.word_embed_proj_dim() != 0 && model.word_embed_proj_dim() != model.hidden_size()) {
    return refuse("projects its embeddings (project_in, project_out)");
  }
  if (model.num_heads() < 1 || model.hidden_size() % model.num_heads() != 0 ||
      (model.num_kv_heads() != 0 && model.num_kv_heads() != model.num_heads()) ||
      (model.head_dim() != 0 && model.head_dim() != model.hidden_size() / model.num_heads())) {
    return refuse("has heads other than hidden_size / num_heads wide, one key and value each");
  }
  if (model.hidden_size() / model.num_heads() > 128) {
    return refuse("has heads over 128 wide (the attention kernels' tiles are known up to 128)");
  }
  return absl::OkStatus();
}

absl::Status CheckTokens(const ModelSpec& model, const ComputeOp& op) {
  if (op.examples() < 1 || op.seq_len() < 1 || op.seq_len() > model.max_positions()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s op: examples %d must be >= 1 and seq_len %d in [1, %d] (the position table)",
        ComputeKind_Name(op.kind()), op.examples(), op.seq_len(), model.max_positions()));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> FusedAttention(const ModelSpec& model, const ComputeOp& op) {
  const int64_t sb = static_cast<int64_t>(op.seq_len()) * op.examples();
  const int64_t kept = sb * (18 * model.hidden_size() + 4 * model.ffn_size());
  const int64_t scores = 5 * model.num_heads() * op.seq_len() * sb;
  // Under recomputation the workspace holds the intermediates (the saved
  // range only the block's input).
  const bool recompute = op.has_workspace();
  const int64_t bytes = recompute ? op.workspace().size_bytes() : op.saved().size_bytes();
  if (bytes == kept) return true;
  if (bytes == kept + scores) return false;
  if (!recompute && bytes == 2 * sb * model.hidden_size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s op of a recomputing schedule without a workspace: its saved range (%d bytes, the "
        "block's input) does not say whether the attention is fused (lower it again)",
        ComputeKind_Name(op.kind()), bytes));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s op: its %s range is %d bytes, neither a fused attention's %d nor one keeping its "
      "scores %d",
      ComputeKind_Name(op.kind()), recompute ? "workspace" : "saved", bytes, kept,
      kept + scores));
}

absl::StatusOr<std::vector<TensorSpec>> OptimizerStepTensors(const ModelSpec& model,
                                                             const ComputeOp& op) {
  std::vector<TensorSpec> part;
  switch (op.params().part()) {
    case EMBEDDING_PART:
      part = EmbeddingTensors(model);
      break;
    case DECODER_BLOCK:
      part = BlockTensors(model, 0);
      break;
    case HEAD_PART:
      part = FinalNormTensors(model);
      for (TensorSpec& t : HeadTensors(model)) part.push_back(std::move(t));
      break;
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "OPTIMIZER_STEP op: params.part %s is not a part", Part_Name(op.params().part())));
  }
  const int64_t whole = CountElements(part);
  const int64_t first = op.params().first_element(), elements = op.params().elements();
  if (first < 0 || elements < 1 || first + elements > whole) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "OPTIMIZER_STEP op: elements [%d, +%d) outside %s's %d", first, elements,
        Part_Name(op.params().part()), whole));
  }
  if (elements == whole) return part;
  TensorSpec shard;
  shard.name = "flat shard";
  shard.shape = {elements};
  shard.role = TensorRole::kMatrix;
  return std::vector<TensorSpec>{shard};
}

std::vector<int64_t> TensorElements(const std::vector<TensorSpec>& tensors) {
  std::vector<int64_t> elements;
  for (const TensorSpec& t : tensors) elements.push_back(t.elements());
  return elements;
}

Kernel AccumulateGradientShard(const OpShape& s, const ComputeOp& op) {
  constexpr int64_t kFp32Bytes = 4;
  const double n = static_cast<double>(op.params().elements());
  return MemoryPass("accumulate gradient shard (+=)", s.dtype, n * (2 * kFp32Bytes + kFp32Bytes),
                    n);
}

bool IsTokenOp(ComputeKind kind) {
  return kind == TRAIN_EMBED || kind == TRAIN_BLOCK_FORWARD || kind == TRAIN_HEAD_LOSS ||
         kind == HEAD_BACKWARD || kind == BLOCK_BACKWARD || kind == EMBED_BACKWARD;
}

}  // namespace zosched
