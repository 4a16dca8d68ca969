// A block's prefix (models/adapters.h, prefix tuning) as the forward reads
// it: k virtual tokens' keys and values that every real query attends to
// before the real tokens', which sit at positions k, k + 1, ...
#pragma once

#include <cstdint>

#include "models/model.pb.h"

namespace zosched {

struct BlockPrefix {
  int64_t tokens = 0;            // k
  const float* keys = nullptr;   // [k, KvWidth], as attention reads them
  const float* values = nullptr; // [k, KvWidth]
};

// The prefix of `peft` (kind PREFIX, ValidatePeft must pass) read from one
// block's flat ADAPTER_PART.
BlockPrefix MakeBlockPrefix(const ModelSpec& spec, const Peft& peft, const float* adapter_part);

}  // namespace zosched
