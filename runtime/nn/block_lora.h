// A block's LoRA adapters (models/adapters.h) as the CPU forward applies
// them: after the projection in slot `base`, over the same token rows,
//   u = x Aᵀ   [rows, r]    (one GEMM, A [r, in])
//   u = s · u               (each element rounded once)
//   y += u Bᵀ  [rows, out]  (one accumulating GEMM, B [out, r])
// before the projection's epilogue (activation, residual add). s = α / r.
// Scaling u rather than the product keeps the bits independent of out; the
// result differs from PEFT's (x Aᵀ Bᵀ) · s by rounding only.
#pragma once

#include <cstdint>
#include <vector>

#include "models/model.pb.h"
#include "models/model_tensors.h"

namespace zosched {

struct LoraWeights {
  TensorSlot base = TensorSlot::kUnspecified;  // the adapted projection
  int64_t in = 0;
  int64_t out = 0;
  const float* a = nullptr;  // [r, in]
  const float* b = nullptr;  // [out, r]
};

struct BlockLora {
  int64_t rank = 0;    // r
  float scaling = 0;   // s = α / r
  std::vector<LoraWeights> adapters;  // in layout order

  // The adapter of the projection in `base`, or nullptr.
  const LoraWeights* Find(TensorSlot base) const;
};

// The adapters of `peft` (ValidatePeft must pass) read from one block's
// flat ADAPTER_PART.
BlockLora MakeBlockLora(const ModelSpec& spec, const Peft& peft, const float* adapter_part);

// y[rows, out] (row stride out) += (s · x Aᵀ) Bᵀ for x [rows, in] (row
// stride in); `rows` a multiple of 4 (the GEMMs' token panel), `u`
// rows · r floats of scratch. Each row's result depends only on that row.
void AddLora(const LoraWeights& adapter, int64_t rank, float scaling, const float* x,
             int64_t rows, float* y, float* u);

}  // namespace zosched
