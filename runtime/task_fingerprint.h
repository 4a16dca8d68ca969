// A fingerprint of what a run trains and evaluates on, part of the run's
// identity (runtime/checkpoint/run_checkpoint.h): --resume refuses a run
// whose data changed since its checkpoint (another --data or --task, an
// edited or reordered train.tsv, another tokenizer), because the steps
// after it would draw other examples and the weights would no longer be
// the uninterrupted run's.
//
// It hashes the task as the model sees it, not its files: the encoded
// train and dev examples in order (tokens, lengths, labels), the label
// words and the sequence length. So the same examples in another file
// format (CRLF line ends, a BOM) keep the fingerprint, and anything that
// changes a token, a label or the order changes it. XXH3-128 (xxHash), 32
// lower-case hex digits.
#pragma once

#include <string>

#include "runtime/task.h"

namespace zosched {

std::string TaskFingerprint(const TrainingTask& task);

}  // namespace zosched
