#include "runtime/evaluate.h"

#include <algorithm>
#include <cmath>

#include "models/adapters.h"
#include "runtime/nn/block_lora.h"
#include "runtime/nn/block_prefix.h"
#include "runtime/nn/decoder_forward.h"

namespace zosched {

Evaluation Evaluate(const ModelSpec& spec, const Peft& peft, const std::vector<const float*>& parts,
                    const EncodedExamples& examples, const std::vector<int32_t>& label_words,
                    int micro_batch) {
  const int seq = examples.seq_len;
  const int n_labels = label_words.size();
  const int64_t h = spec.hidden_size();
  const int layers = spec.num_layers();
  std::vector<float> hidden(static_cast<int64_t>(micro_batch) * seq * h);
  std::vector<float> workspace(BlockWorkspaceFloats(spec, micro_batch, seq));
  std::vector<float> logits(static_cast<int64_t>(micro_batch) * n_labels);
  int correct = 0;
  double loss = 0;
  for (int first = 0; first < examples.size(); first += micro_batch) {
    const int n = std::min(micro_batch, examples.size() - first);
    Embed(spec, parts[0], examples.tokens.data() + static_cast<int64_t>(first) * seq, n, seq,
          hidden.data(), PrefixTokens(peft));
    for (int b = 0; b < layers; ++b) {
      PartWeights weights(parts[1 + b]);
      const float* adapters = TrainsAdapters(peft) ? parts[2 + layers + b] : nullptr;
      const BlockLora lora = TrainsLora(peft) ? MakeBlockLora(spec, peft, adapters) : BlockLora();
      const BlockPrefix prefix =
          PrefixTokens(peft) > 0 ? MakeBlockPrefix(spec, peft, adapters) : BlockPrefix();
      BlockForward(spec, weights, examples.lengths.data() + first, n, seq, hidden.data(),
                   workspace.data(), /*team=*/nullptr, /*rotary=*/nullptr,
                   TrainsLora(peft) ? &lora : nullptr, PrefixTokens(peft) > 0 ? &prefix : nullptr);
    }
    LabelLogits(spec, parts[1 + layers], parts[0], hidden.data(), examples.lengths.data() + first,
                n, seq, label_words.data(), n_labels, logits.data());
    for (int e = 0; e < n; ++e) {
      const float* l = logits.data() + static_cast<int64_t>(e) * n_labels;
      const int best = std::max_element(l, l + n_labels) - l;
      correct += best == examples.labels[first + e];
      const float top = l[best];
      double sum = 0;
      for (int k = 0; k < n_labels; ++k) sum += std::exp(static_cast<double>(l[k] - top));
      loss += std::log(sum) + top - l[examples.labels[first + e]];
    }
  }
  Evaluation result;
  result.accuracy = examples.size() > 0 ? static_cast<double>(correct) / examples.size() : 0;
  result.loss = examples.size() > 0 ? loss / examples.size() : 0;
  return result;
}

Evaluation EvaluateStoredParts(const std::vector<StoredPart>& parts, const ModelSpec& spec,
                               const Peft& peft, const std::vector<ZoState>& pending, float weight_decay,
                               const EncodedExamples& examples,
                               const std::vector<int32_t>& label_words, int micro_batch) {
  std::vector<std::vector<float>> values;
  std::vector<const float*> pointers;
  for (const StoredPart& part : parts) values.push_back(CurrentPart(part, spec, pending, weight_decay));
  for (const std::vector<float>& v : values) pointers.push_back(v.data());
  return Evaluate(spec, peft, pointers, examples, label_words, micro_batch);
}

}  // namespace zosched
