// The training task of a run: the encoded train and dev examples, the label
// words, and the deterministic order in which steps draw examples.
//
// A task directory holds the model's tokenizer files, as its Hugging Face
// repository ships them, in any of three layouts (runtime/data/
// load_tokenizer.h: tokenizer.model for LLaMA-2, tokenizer.json for
// Llama-3.x, Qwen2.5, Qwen3 and GPT-2, vocab.json + merges.txt for OPT and
// GPT-2), and the data: for sst2, GLUE's train.tsv and dev.tsv; for boolq,
// train.jsonl and val.jsonl. Prompts get the family's BOS and label words
// (runtime/data/prompts.h). "synthetic" is the deterministic synthetic
// sentiment task (runtime/data/synthetic_task.h), written in the SST-2
// format, with OPT-style vocab.json + merges.txt, by WriteSyntheticTask and
// read through the same readers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/model.pb.h"
#include "runtime/evaluate.h"

namespace zosched {

// The examples of one step, in step order (global example index e).
struct StepBatch {
  std::vector<int32_t> tokens;   // [batch * seq_len]
  std::vector<int32_t> lengths;  // [batch]
  std::vector<int32_t> labels;   // [batch]
};

struct TrainingTask {
  EncodedExamples train, dev;
  std::vector<int32_t> label_words;  // token ids, by label index

  // The examples of `step`: positions step·batch .. step·batch + batch - 1
  // of an endless sequence of epochs, each a permutation of the training
  // set drawn from Philox with `seed`. Depends only on (step, batch, seed),
  // so a resumed run sees what an uninterrupted one would.
  // Keeps the last epoch's permutation (an epoch spans many steps): one
  // caller at a time.
  void FillStep(int64_t step, int batch, uint64_t seed, StepBatch* out) const;

  // The first `n` dev examples (all of them when n is 0 or too large).
  EncodedExamples EvalSubset(int n) const;

 private:
  // FillStep's permutation of epoch `order_epoch_` under `order_seed_`.
  mutable int64_t order_epoch_ = -1;
  mutable uint64_t order_seed_ = 0;
  mutable std::vector<int32_t> order_;
};

// Writes the synthetic task into `dir` (rank 0 only; others wait): 4,096
// training and 512 dev examples from a fixed seed.
absl::Status WriteSyntheticTask(const std::string& dir);

// Reads and encodes the task in `dir` (`task`: "sst2" or "boolq") for
// `model`, padding every example to `seq_len` tokens with the tokenizer's
// "<pad>" (or token 1). With vocab.json + merges.txt, the BOS is "</s>"
// (OPT's) unless `model` is of family GPT2 (none); the other layouts name
// their own.
//
// Errors: NotFound for missing files (no tokenizer in any of the three
// layouts: the message names them); the tokenizer readers' errors (the
// file and what is wrong in it); the data readers' errors (file:line; a
// train or dev file without examples, a line above 1 MiB); a label word that
// is not one token (naming the tokenizer files); InvalidArgument when a
// token id is outside the model's vocabulary (the model and the tokenizer do
// not belong together), or an unknown task.
absl::StatusOr<TrainingTask> LoadTask(const std::string& dir, const std::string& task,
                                      const ModelSpec& model, int seq_len);

// The task of `data` (a directory, or "synthetic") as the ranks will read
// it, read by a process that must write nothing where the run's outputs
// go (train's launcher, calibrate): the synthetic task is written to a
// temporary directory (base/temporary_directory.h), read with LoadTask and
// removed. Errors: MakeTemporaryDirectory's, WriteSyntheticTask's and
// LoadTask's.
absl::StatusOr<TrainingTask> LoadTaskElsewhere(const std::string& data, const std::string& task,
                                               const ModelSpec& model, int seq_len);

}  // namespace zosched
