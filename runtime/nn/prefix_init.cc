#include "runtime/nn/prefix_init.h"

#include <random>

#include "base/check.h"
#include "models/model_spec.h"
#include "runtime/nn/decoder_forward.h"

namespace zosched {
namespace {

// Seeds the prefix's tokens apart from every other use of the seed.
constexpr uint64_t kPrefixSalt = 0x707265666978ull;  // "prefix"

}  // namespace

std::vector<int32_t> PrefixInitTokens(const ModelSpec& spec, int64_t k, uint64_t seed) {
  std::mt19937_64 bits(seed ^ kPrefixSalt);
  std::vector<int32_t> tokens(k);
  for (int32_t& t : tokens) t = static_cast<int32_t>(bits() % spec.vocab_size());
  return tokens;
}

std::vector<std::vector<float>> PrefixFromActivations(
    const ModelSpec& spec, const float* embedding_part,
    const std::function<const float*(int64_t block)>& block_part,
    const std::vector<int32_t>& tokens) {
  const int k = static_cast<int>(tokens.size());
  CHECK(k >= 1) << k << " tokens";
  const int64_t kv = KvWidth(spec);
  std::vector<float> hidden(static_cast<int64_t>(k) * spec.hidden_size());
  std::vector<float> workspace(BlockWorkspaceFloats(spec, 1, k));
  Embed(spec, embedding_part, tokens.data(), 1, k, hidden.data());
  const int32_t length = k;
  std::vector<std::vector<float>> prefixes;
  for (int64_t b = 0; b < spec.num_layers(); ++b) {
    std::vector<float> prefix(2 * k * kv);
    KeyValueRows captured{prefix.data(), prefix.data() + k * kv};
    BlockForward(spec, block_part(b), &length, 1, k, hidden.data(), workspace.data(), &captured);
    prefixes.push_back(std::move(prefix));
  }
  return prefixes;
}

}  // namespace zosched
