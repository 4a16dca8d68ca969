#include "schedule/first_order_model.h"

#include "base/saturating.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "schedule/model_parts.h"

namespace zosched {

bool IsFirstOrder(StrategyKind kind) {
  return kind == SINGLE_DEVICE || kind == DDP || kind == ZERO_1 || kind == ZERO_2 || kind == ZERO_3;
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

int64_t BlockSavedBytes(const ModelSpec& model, int64_t examples, int64_t seq, bool flash_attention,
                        bool recompute) {
  const int64_t sb = SatMul(seq, examples);
  const int64_t sbh = SatMul(sb, model.hidden_size()), sbf = SatMul(sb, model.ffn_size());
  if (recompute) return SatMul(2, sbh);
  int64_t bytes = SatAdd(SatMul(18, sbh), SatMul(model.activation() == SWIGLU ? 8 : 4, sbf));
  if (!flash_attention) {
    bytes = SatAdd(bytes, SatMul(SatMul(5, model.num_heads()), SatMul(seq, sb)));
  }
  return bytes;
}

int64_t BlockRecomputeBytes(const ModelSpec& model, int64_t examples, int64_t seq,
                            bool flash_attention) {
  return BlockSavedBytes(model, examples, seq, flash_attention, /*recompute=*/false);
}

int64_t HeadSavedBytes(const ModelSpec& model, int64_t examples, int64_t seq) {
  const int64_t tokens = SatMul(examples, seq);
  return SatAdd(SatMul(4, SatMul(tokens, model.vocab_size())),
                SatMul(2, SatMul(tokens, model.hidden_size())));
}

namespace {

// Elements the head reads: the HEAD_PART, and the token table when tied.
int64_t HeadElements(const ModelSpec& model, const ModelCounts& counts) {
  return SatAdd(PartElements(counts, HEAD_PART),
                model.tied_lm_head() ? TokenTableElements(model) : 0);
}

// FLOPs of the head's forward over `tokens` positions: the final norm, the
// projection out of the residual width (when e != h) and the logits.
int64_t HeadForwardFlops(const ModelSpec& model, int64_t tokens) {
  const int64_t h = model.hidden_size(), e = EmbedDim(model);
  const int64_t projection = e != h ? SatMul(SatMul(2, tokens), SatMul(h, e)) : 0;
  return SatAdd(SatAdd(SatMul(SatMul(2, tokens), SatMul(e, model.vocab_size())), projection),
                SatMul(SatMul(8, tokens), h));
}

}  // namespace

// Saturating throughout (base/saturating.h): a hand-edited model cannot
// overflow a cost.
ComputeCost FirstOrderOpCost(const ModelSpec& model, const ModelCounts& counts,
                             const TrainingSettings& training, const ComputeOp& op) {
  const int64_t c = DTypeBytes(training.compute_dtype());
  const int64_t p = DTypeBytes(training.host_dtype());
  const int64_t tokens = SatMul(op.examples(), training.seq_len());
  const int64_t th = SatMul(tokens, model.hidden_size());
  const int64_t logits = SatMul(SatMul(4, tokens), model.vocab_size());
  const int64_t n = op.params().elements();
  const int64_t block = counts.block_params;
  const int64_t forward = SatMul(counts.BlockForwardFlopsPerToken(training.seq_len()), tokens);
  // The saved range's size is what the op writes or reads back (validation
  // checks it against BlockSavedBytes / HeadSavedBytes).
  const int64_t saved = op.saved().size_bytes();
  ComputeCost cost;
  switch (op.kind()) {
    case TRAIN_EMBED:
      cost.flops = SatMul(2, th);
      cost.bytes_accessed = SatMul(p + c, th);
      break;
    case TRAIN_BLOCK_FORWARD:
      cost.flops = forward;
      cost.bytes_accessed = SatAdd(SatAdd(SatMul(p, block), SatMul(2 * c, th)), saved);
      break;
    case TRAIN_HEAD_LOSS:
      cost.flops = HeadForwardFlops(model, tokens);
      cost.bytes_accessed =
          SatAdd(SatAdd(SatMul(p, HeadElements(model, counts)), SatMul(c, th)), logits);
      break;
    case HEAD_BACKWARD:
      cost.flops = SatMul(2, HeadForwardFlops(model, tokens));
      cost.bytes_accessed =
          SatAdd(SatAdd(SatMul(p + 8, HeadElements(model, counts)), logits), SatMul(2 * c, th));
      break;
    case BLOCK_BACKWARD:
      cost.flops = SatMul(op.recompute() ? 3 : 2, forward);
      cost.bytes_accessed = SatAdd(SatAdd(SatMul(p + 8, block), saved), SatMul(2 * c, th));
      break;
    case EMBED_BACKWARD:
      cost.flops = th;
      cost.bytes_accessed = SatMul(c + 8, th);
      break;
    case GRAD_ACCUMULATE:
      cost.flops = n;
      cost.bytes_accessed = SatMul(12, n);
      break;
    case OPTIMIZER_STEP:
      cost.flops = SatMul(12, n);
      cost.bytes_accessed = SatMul(20 + 2 * p + (op.has_master() ? 8 : 0), n);
      break;
    default:
      break;
  }
  return cost;
}

}  // namespace zosched
