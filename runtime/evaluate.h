// Evaluation of prompt-based classification with unperturbed weights: the
// fraction of examples whose label word gets the highest logit.
#pragma once

#include <cstdint>
#include <vector>

#include "models/model.pb.h"
#include "runtime/model_state.h"
#include "runtime/zo/zo_state.h"

namespace zosched {

// A batch of encoded examples: example e's tokens at tokens[e * seq_len],
// padded on the right; lengths[e] real tokens; labels[e] indexes the label
// words.
struct EncodedExamples {
  int seq_len = 0;
  std::vector<int32_t> tokens;
  std::vector<int32_t> lengths;
  std::vector<int32_t> labels;
  int size() const { return static_cast<int>(lengths.size()); }
};

struct Evaluation {
  double accuracy = 0;  // in [0, 1]
  double loss = 0;      // mean cross-entropy over the label words, nats
};

// Runs the fp32 forward (runtime/nn) over `examples` in micro-batches of
// `micro_batch` with the given flat parts (embedding, the blocks in order,
// head, then under `peft` LoRA or a prefix every block's ADAPTER_PART in
// order) and scores
// the label-word logits.
Evaluation Evaluate(const ModelSpec& spec, const Peft& peft, const std::vector<const float*>& parts,
                    const EncodedExamples& examples, const std::vector<int32_t>& label_words,
                    int micro_batch);

// Evaluate over the parts a rank stores (runtime/model_state.h) as the
// next step would start from: CurrentPart's fp32 values, `pending` applied
// with `weight_decay`; the storage is left as it is.
Evaluation EvaluateStoredParts(const std::vector<StoredPart>& parts, const ModelSpec& spec,
                               const Peft& peft,
                               const std::vector<ZoState>& pending, float weight_decay,
                               const EncodedExamples& examples,
                               const std::vector<int32_t>& label_words, int micro_batch);

}  // namespace zosched
