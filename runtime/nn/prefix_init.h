// A prefix initialised from real tokens' activations, as MeZO initialises
// prefix tuning: k token ids drawn uniformly from the vocabulary, run
// through the base model as one sequence at positions 0 .. k - 1, and each
// block's keys and values for them become that block's prefix
// (models/adapters.h): the prefix starts as a KV cache of real text, so the
// first forward with it is the base model's on those k tokens followed by
// the input.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/model.pb.h"

namespace zosched {

// The k token ids a prefix starts from, for `seed`: uniform over [0, V),
// the same on every machine (std::mt19937_64's sequence, reduced modulo V).
std::vector<int32_t> PrefixInitTokens(const ModelSpec& spec, int64_t k, uint64_t seed);

// The ADAPTER_PART of every block (keys [k, kv] then values [k, kv]) from
// the base model's fp32 parts on `tokens` (k ids, each in [0, V)).
//   embedding_part: the flat embedding part
//   block_part:     block b's flat part, asked for once per block in order;
//                   it need stay valid only until the next call
// Costs one forward of k tokens through the base model.
std::vector<std::vector<float>> PrefixFromActivations(
    const ModelSpec& spec, const float* embedding_part,
    const std::function<const float*(int64_t block)>& block_part,
    const std::vector<int32_t>& tokens);

}  // namespace zosched
