#include "models/accounting.h"

#include <algorithm>

#include "models/adapters.h"
#include "models/model_spec.h"
#include "models/model_tensors.h"

namespace zosched {

int64_t EmbeddingParams(const ModelSpec& spec) {
  return CountElements(EmbeddingTensors(spec));
}

int64_t BlockParams(const ModelSpec& spec) {
  return CountElements(BlockTensors(spec, /*layer=*/0));
}

int64_t FinalNormParams(const ModelSpec& spec) {
  return CountElements(FinalNormTensors(spec));
}

int64_t HeadParams(const ModelSpec& spec) {
  return CountElements(HeadTensors(spec));
}

int64_t TotalParams(const ModelSpec& spec) {
  return EmbeddingParams(spec) + spec.num_layers() * BlockParams(spec) +
         FinalNormParams(spec) + HeadParams(spec);
}

int64_t BlockBytes(const ModelSpec& spec, DType dtype) {
  return BlockParams(spec) * DTypeBytes(dtype);
}

namespace {

// M of BlockForwardFlopsPerToken: the elements of the block's matrices.
int64_t BlockMatrixElements(const ModelSpec& spec) {
  int64_t matrix_elements = 0;
  for (const TensorSpec& t : BlockTensors(spec, /*layer=*/0)) {
    if (t.role == TensorRole::kMatrix) matrix_elements += t.elements();
  }
  return matrix_elements;
}

}  // namespace

int64_t BlockForwardFlopsPerToken(const ModelSpec& spec, int64_t seq_len) {
  ModelCounts counts;
  counts.query_width = QueryWidth(spec);
  counts.block_matrix_elements = BlockMatrixElements(spec);
  return counts.BlockForwardFlopsPerToken(seq_len);
}

DualForwardActivationBytes DualForwardActivationBytesPerToken(
    const ModelSpec& spec, int64_t seq_len, DType dtype) {
  const int64_t h = spec.hidden_size();
  const int64_t q = QueryWidth(spec);
  const int64_t kv = KvWidth(spec);
  const int64_t inner =
      spec.activation() == SWIGLU ? 2 * spec.ffn_size() : spec.ffn_size();
  const int64_t attention = h + q + 2 * kv + spec.num_heads() * seq_len + q;
  const int64_t ffn = h + inner;
  DualForwardActivationBytes bytes;
  bytes.carried = 2 * h * DTypeBytes(dtype);
  bytes.workspace = std::max(attention, ffn) * DTypeBytes(dtype);
  return bytes;
}

int64_t BlockForwardWorkspaceElements(const ModelSpec& spec, int64_t examples, int64_t seq) {
  const int64_t h = spec.hidden_size();
  const int64_t a = std::max(h, QueryWidth(spec));  // normed input, then the context
  const int64_t f = spec.ffn_size();
  const int64_t inner = spec.activation() == SWIGLU ? 2 * f : f;  // SwiGLU: gate and up
  const int64_t t4 = (examples * seq + 3) / 4 * 4;
  return std::max(t4 * (a + QueryWidth(spec) + 2 * KvWidth(spec)) + seq * seq,
                  t4 * (h + inner));
}

int64_t BlockPerturbedScratchElements(const ModelSpec& spec) {
  int64_t vectors = 0, largest_matrix = 0;
  for (const TensorSpec& t : BlockTensors(spec, 0)) {
    if (t.shape.size() == 1) {
      vectors += t.elements();
    } else {
      largest_matrix = std::max(largest_matrix, t.elements());
    }
  }
  return vectors + largest_matrix;
}

ModelCounts CountModel(const ModelSpec& spec, const Peft& peft) {
  ModelCounts counts;
  counts.query_width = QueryWidth(spec);
  counts.embedding_params = EmbeddingParams(spec);
  counts.block_params = BlockParams(spec);
  counts.final_norm_params = FinalNormParams(spec);
  counts.head_params = HeadParams(spec);
  counts.block_matrix_elements = BlockMatrixElements(spec);
  counts.block_perturbed_scratch_elements = BlockPerturbedScratchElements(spec);
  for (const LoraAdapter& a : BlockAdapters(spec, peft, 0)) {
    counts.adapter_params += a.a.elements() + a.b.elements();
    counts.adapter_flops_per_token += 2 * peft.lora_rank() * (a.in + a.out) + peft.lora_rank();
  }
  if (const int64_t k = PrefixTokens(peft); k > 0) {
    counts.adapter_params = 2 * k * KvWidth(spec);
    counts.adapter_flops_per_token = 4 * k * counts.query_width;
  }
  return counts;
}

int64_t LabelHeadSliceBytes(const ModelSpec& spec, int64_t num_label_words,
                            DType dtype) {
  return num_label_words * EmbedDim(spec) * DTypeBytes(dtype);
}

}  // namespace zosched
