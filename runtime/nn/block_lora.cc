#include "runtime/nn/block_lora.h"

#include <algorithm>

#include "base/check.h"
#include "models/adapters.h"
#include "runtime/nn/gemm.h"

namespace zosched {

const LoraWeights* BlockLora::Find(TensorSlot base) const {
  for (const LoraWeights& a : adapters) {
    if (a.base == base) return &a;
  }
  return nullptr;
}

BlockLora MakeBlockLora(const ModelSpec& spec, const Peft& peft, const float* adapter_part) {
  BlockLora lora;
  lora.rank = peft.lora_rank();
  lora.scaling = LoraScaling(peft);
  for (const LoraAdapter& a : BlockAdapters(spec, peft, 0)) {
    LoraWeights w;
    w.base = a.base;
    w.in = a.in;
    w.out = a.out;
    w.a = adapter_part + a.a_offset;
    w.b = adapter_part + a.b_offset;
    lora.adapters.push_back(w);
  }
  return lora;
}

void AddLora(const LoraWeights& adapter, int64_t rank, float scaling, const float* x,
             int64_t rows, float* y, float* u) {
  CHECK(rows % 4 == 0) << rows;
  std::fill(u, u + rows * rank, 0.0f);
  GemmAcc(kRhsTransposed, rows, rank, adapter.in, x, adapter.in, adapter.a, adapter.in, u, rank);
  for (int64_t i = 0; i < rows * rank; ++i) u[i] *= scaling;
  GemmAcc(kRhsTransposed, rows, adapter.out, rank, u, rank, adapter.b, rank, y, adapter.out);
}

}  // namespace zosched
