#include "runtime/nn/block_prefix.h"

#include "base/check.h"
#include "models/adapters.h"
#include "models/model_spec.h"

namespace zosched {

BlockPrefix MakeBlockPrefix(const ModelSpec& spec, const Peft& peft, const float* adapter_part) {
  CHECK(PrefixTokens(peft) > 0) << "MakeBlockPrefix of a Peft without a prefix";
  BlockPrefix prefix;
  prefix.tokens = PrefixTokens(peft);
  prefix.keys = adapter_part;
  prefix.values = adapter_part + prefix.tokens * KvWidth(spec);
  return prefix;
}

}  // namespace zosched
