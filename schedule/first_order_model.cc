#include "schedule/first_order_model.h"

#include "models/accounting.h"
#include "models/model_spec.h"

namespace zosched {

bool IsFirstOrder(StrategyKind kind) {
  return kind == SINGLE_DEVICE || kind == DDP || kind == ZERO_1 || kind == ZERO_2 ||
         kind == ZERO_3;
}

bool IsFirstOrderKind(ComputeKind kind) { return kind >= TRAIN_EMBED && kind <= OPTIMIZER_STEP; }

ModelStateBytes RecipeBytes(PrecisionRecipe recipe) {
  ModelStateBytes b;
  b.params = recipe == BF16_FP32_GRADS ? 2 : 4;
  b.gradients = 4;
  b.master = recipe == BF16_FP32_GRADS ? 4 : 0;
  b.optimizer = 8;
  return b;
}

DType RecipeParamDType(PrecisionRecipe recipe) { return recipe == BF16_FP32_GRADS ? BF16 : FP32; }

bool ShardsOptimizer(StrategyKind kind) { return kind == ZERO_1 || ShardsGradients(kind); }
bool ShardsGradients(StrategyKind kind) { return kind == ZERO_2 || ShardsParams(kind); }
bool ShardsParams(StrategyKind kind) { return kind == ZERO_3; }

int64_t ShardElements(int64_t elements, int n) { return (elements + n - 1) / n; }

int64_t BlockSavedBytes(const ModelSpec& model, int64_t examples, int64_t seq,
                        bool flash_attention, bool recompute) {
  const int64_t h = model.hidden_size(), f = model.ffn_size();
  const int64_t sb = seq * examples;
  if (recompute) return 2 * sb * h;
  int64_t bytes = 18 * sb * h + 4 * sb * f;
  if (model.activation() == SWIGLU) bytes += 4 * sb * f;
  if (!flash_attention) bytes += 5 * model.num_heads() * seq * seq * examples;
  return bytes;
}

int64_t BlockRecomputeBytes(const ModelSpec& model, int64_t examples, int64_t seq,
                            bool flash_attention) {
  return BlockSavedBytes(model, examples, seq, flash_attention, /*recompute=*/false);
}

int64_t HeadSavedBytes(const ModelSpec& model, int64_t examples, int64_t seq) {
  const int64_t tokens = examples * seq;
  return 4 * tokens * model.vocab_size() + 2 * tokens * model.hidden_size();
}

namespace {

// Elements the head reads: the HEAD_PART, and the token table when tied.
int64_t HeadElements(const ModelSpec& model) {
  return PartElements(model, HEAD_PART) + (model.tied_lm_head() ? TokenTableElements(model) : 0);
}

// FLOPs of the head's forward over `tokens` positions: the final norm, the
// projection out of the residual width (when e != h) and the logits.
int64_t HeadForwardFlops(const ModelSpec& model, int64_t tokens) {
  const int64_t h = model.hidden_size(), e = EmbedDim(model);
  const int64_t projection = e != h ? 2 * tokens * h * e : 0;
  return 2 * tokens * e * model.vocab_size() + projection + 8 * tokens * h;
}

}  // namespace

ComputeCost FirstOrderOpCost(const ModelSpec& model, const TrainingSettings& training,
                             const ComputeOp& op) {
  const int64_t c = DTypeBytes(training.compute_dtype());
  const int64_t p = DTypeBytes(training.host_dtype());
  const int64_t h = model.hidden_size();
  const int64_t tokens = static_cast<int64_t>(op.examples()) * training.seq_len();
  const int64_t n = op.params().elements();
  const int64_t block = BlockParams(model);
  const int64_t forward = BlockForwardFlopsPerToken(model, training.seq_len()) * tokens;
  // Whether the op's block keeps its scores is the op's saved range's
  // business; its size is what it reads back.
  const int64_t saved = op.saved().size_bytes();
  ComputeCost cost;
  switch (op.kind()) {
    case TRAIN_EMBED:
      cost.flops = 2 * tokens * h;
      cost.bytes_accessed = (p + c) * tokens * h;
      break;
    case TRAIN_BLOCK_FORWARD:
      cost.flops = forward;
      cost.bytes_accessed = p * block + 2 * c * tokens * h + saved;
      break;
    case TRAIN_HEAD_LOSS:
      cost.flops = HeadForwardFlops(model, tokens);
      cost.bytes_accessed = p * HeadElements(model) + c * tokens * h + 4 * tokens * model.vocab_size();
      break;
    case HEAD_BACKWARD:
      cost.flops = 2 * HeadForwardFlops(model, tokens);
      cost.bytes_accessed = (p + 8) * HeadElements(model) + 4 * tokens * model.vocab_size() +
                            2 * c * tokens * h;
      break;
    case BLOCK_BACKWARD:
      cost.flops = (op.recompute() ? 3 : 2) * forward;
      cost.bytes_accessed = (p + 8) * block + saved + 2 * c * tokens * h;
      break;
    case EMBED_BACKWARD:
      cost.flops = tokens * h;
      cost.bytes_accessed = (c + 8) * tokens * h;
      break;
    case GRAD_ACCUMULATE:
      cost.flops = n;
      cost.bytes_accessed = 12 * n;
      break;
    case OPTIMIZER_STEP:
      cost.flops = 12 * n;
      cost.bytes_accessed = (20 + 2 * p + (op.has_master() ? 8 : 0)) * n;
      break;
    default:
      break;
  }
  return cost;
}

}  // namespace zosched
