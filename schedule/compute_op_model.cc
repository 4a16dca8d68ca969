#include "schedule/compute_op_model.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "models/accounting.h"
#include "models/model_spec.h"
#include "schedule/first_order_model.h"

namespace zosched {
namespace {

// a · b, or INT64_MAX when it does not fit (both >= 0).
int64_t Mul(int64_t a, int64_t b) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product)) return std::numeric_limits<int64_t>::max();
  return product;
}

int64_t Add(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) return std::numeric_limits<int64_t>::max();
  return sum;
}

// Elements of project_in / project_out (each e·h), or 0 when e == h.
int64_t ProjectionElements(const ModelSpec& model) {
  const int64_t e = EmbedDim(model);
  return e != model.hidden_size() ? Mul(model.hidden_size(), e) : 0;
}

}  // namespace

int64_t PartElements(const ModelSpec& model, Part part) {
  switch (part) {
    case EMBEDDING_PART:
      return EmbeddingParams(model);
    case DECODER_BLOCK:
      return BlockParams(model);
    case HEAD_PART:
      return FinalNormParams(model) + HeadParams(model);
    default:
      return 0;
  }
}

int64_t TokenTableElements(const ModelSpec& model) {
  return Mul(model.vocab_size(), EmbedDim(model));
}

ComputeCost ComputeOpCost(const ModelSpec& model, const TrainingSettings& training,
                          const ComputeOp& op) {
  if (IsFirstOrderKind(op.kind())) return FirstOrderOpCost(model, training, op);
  const int64_t c = DTypeBytes(training.compute_dtype());
  const int64_t h = model.hidden_size();
  const int64_t e = EmbedDim(model);
  const int64_t n = op.params().elements();
  const int64_t tokens = Mul(op.examples(), training.seq_len());
  const int64_t act_bytes = Mul(Mul(tokens, h), c);
  ComputeCost cost;
  switch (op.kind()) {
    case UPDATE:
      cost.flops = Mul(4, n);
      cost.bytes_accessed = Mul(Mul(2, n), c);
      break;
    case EMBED:
      cost.flops = Mul(Mul(3, tokens), h);
      cost.bytes_accessed = Mul(3, act_bytes);
      break;
    case BLOCK_FORWARD:
      cost.flops = Mul(BlockForwardFlopsPerToken(model, training.seq_len()), tokens);
      cost.bytes_accessed = Add(Mul(BlockParams(model), c), Mul(2, act_bytes));
      break;
    case HEAD_LOSS:
      cost.flops = Mul(op.examples(), Add(Add(Mul(8, h), Mul(2, ProjectionElements(model))),
                                          Mul(Mul(2, training.num_label_words()), e)));
      cost.bytes_accessed =
          Add(Add(Mul(PartElements(model, HEAD_PART), c),
                  LabelHeadSliceBytes(model, training.num_label_words(), training.compute_dtype())),
              Mul(Mul(op.examples(), h), c));
      break;
    case PROJECTED_GRADIENT: {
      const int64_t losses = Mul(2, training.batch_size());
      cost.flops = Mul(3, losses);
      cost.bytes_accessed = Mul(losses, kLossBytes);
      break;
    }
    case CAST:
      cost.bytes_accessed = Mul(n, DTypeBytes(training.wire_dtype()) + c);
      break;
    default:
      break;
  }
  return cost;
}

int64_t MicroBatchActivationBytes(const ModelSpec& model, const TrainingSettings& training) {
  return Mul(Mul(Mul(training.micro_batch_size(), training.seq_len()), model.hidden_size()),
             DTypeBytes(training.compute_dtype()));
}

int64_t WorkspaceBytes(const ModelSpec& model, const TrainingSettings& training,
                       ComputeKind kind) {
  const int64_t tokens = Mul(training.micro_batch_size(), training.seq_len());
  switch (kind) {
    case BLOCK_FORWARD:
      return Mul(BlockForwardWorkspaceElements(model, training.micro_batch_size(),
                                               training.seq_len()),
                 DTypeBytes(training.compute_dtype()));
    case EMBED: {
      const int64_t e = EmbedDim(model), h = model.hidden_size();
      const int64_t rows = e != h ? Add(tokens, 3) / 4 * 4 : tokens;
      return Mul(Mul(rows, e != h ? e + h : e), DTypeBytes(training.compute_dtype()));
    }
    case HEAD_LOSS:
      return Mul(4, Add(model.hidden_size() + EmbedDim(model),
                        Mul(training.micro_batch_size(), training.num_label_words())));
    default:
      return 0;
  }
}

int64_t PerturbedBytes(const ModelSpec& model, const TrainingSettings& training,
                       ComputeKind kind) {
  const int64_t c = DTypeBytes(training.compute_dtype());
  switch (kind) {
    case EMBED:
      return Mul(Add(Mul(training.seq_len(), model.hidden_size()), ProjectionElements(model)), c);
    case BLOCK_FORWARD:
      return Mul(BlockPerturbedScratchElements(model), c);
    case HEAD_LOSS:
      return Mul(Add(Add(FinalNormParams(model), ProjectionElements(model)),
                     Mul(training.num_label_words(), EmbedDim(model))),
                 c);
    default:
      return 0;
  }
}

}  // namespace zosched
