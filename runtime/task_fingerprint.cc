#include "runtime/task_fingerprint.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_format.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace zosched {
namespace {

// Adds `values` to the hash, length first, so that no two different
// sequences of arrays hash alike by concatenation.
void Add(XXH3_state_t* state, const std::vector<int32_t>& values) {
  const uint64_t size = values.size();
  XXH3_128bits_update(state, &size, sizeof(size));
  XXH3_128bits_update(state, values.data(), values.size() * sizeof(int32_t));
}

void Add(XXH3_state_t* state, const EncodedExamples& examples) {
  const int64_t seq_len = examples.seq_len;
  XXH3_128bits_update(state, &seq_len, sizeof(seq_len));
  Add(state, examples.tokens);
  Add(state, examples.lengths);
  Add(state, examples.labels);
}

}  // namespace

std::string TaskFingerprint(const TrainingTask& task) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  Add(state, task.train);
  Add(state, task.dev);
  Add(state, task.label_words);
  const XXH128_hash_t hash = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return absl::StrFormat("%016x%016x", hash.high64, hash.low64);
}

}  // namespace zosched
