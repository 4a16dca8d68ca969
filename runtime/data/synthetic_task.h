// A deterministic synthetic sentiment task in the real formats, for tests
// and experiments on a machine that cannot download SST-2 or OPT's
// tokenizer: the files go through the same readers (sst2.h,
// bpe_tokenizer.h) and prompt template (prompts.h) as the real ones.
//
// Written files, in `dir`:
//   vocab.json, merges.txt  a small GPT-2-style byte-level BPE vocabulary:
//       "<s>" 0, "<pad>" 1, "</s>" 2, "<unk>" 3 (OPT's specials and ids),
//       the 256 byte symbols (ids 4..259), then one token per merge. Merges
//       build every task word with its leading space ("Ġwonderful", and
//       "ĠIt", "Ġwas", "Ġterrible", "Ġgreat" for the SST-2 prompt) one
//       character at a time from the left, so each such word is one token;
//       a sentence's first word (no leading space) stays byte tokens.
//   train.tsv, dev.tsv      GLUE SST-2 TSV ("sentence<TAB>label").
//
// Sentences: 1 to 3 clauses "the NOUN VERB [ADVERB] ADJECTIVE" joined by
// " and " / " but ", at least one clause carrying a cue adjective of the
// label's polarity (SyntheticCueWords), the others neutral adjectives; a
// label is 0 or 1 with equal probability. So counting positive minus
// negative cue words classifies every clean example. Label noise: each
// train label is flipped with probability kSyntheticTrainLabelNoise; dev
// labels are clean. Everything is a function of `seed` alone (own
// SplitMix64 generator, no std distributions); train and dev come from
// separate streams, so dev does not depend on n_train. The two sets may
// share sentences.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace zosched {

inline constexpr double kSyntheticTrainLabelNoise = 0.02;

// The cue adjectives: label 1 (positive) and label 0 (negative).
const std::vector<std::string>& SyntheticCueWords(int label);

// Every word the sentences use (cues, neutral words), without spaces.
std::vector<std::string> SyntheticTaskWords();

// Writes the task's four files into `dir` (created if missing; files
// overwritten): `n_train` and `n_eval` examples.
//
// Errors: InvalidArgument for negative counts; the OS error's code naming
// the path when `dir` or a file cannot be written.
absl::Status WriteSyntheticTask(const std::string& dir, uint64_t seed, int64_t n_train,
                                int64_t n_eval);

}  // namespace zosched
