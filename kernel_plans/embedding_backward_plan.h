// The kernels PyTorch launches for the backward of an embedding lookup
// (F.embedding, nn.Embedding: aten/src/ATen/native/cuda/Embedding.cu,
// embedding_dense_backward_cuda): the gradient table zero-filled, then up
// to 3,072 indices one kernel (one row of the gradient at a time), more
// the sorted path: arange, a CUB radix sort of the 64-bit indices and the
// segment kernels of EmbeddingBackwardKernel.cu.
//
// Launches of the sorted path (U: counted from Embedding.cu and
// EmbeddingBackwardKernel.cu, CUB's internals assumed): arange, then CUB's
// radix sort (histogram, exclusive sum, 8 one-sweep passes of 8 bits);
// then unique-by-key (2), partials per segment, an exclusive scan (2),
// partial segment offsets, the number of partial segments,
// compute_grad_weight and sum_and_scatter.
//
// Bytes (kernel.h's units): indices int64 (8 bytes), gradient rows and
// the table at `grad_bytes` an element.
#pragma once

#include <cstdint>
#include <string>

#include "kernel_plans/kernel.h"
#include "models/model.pb.h"

namespace zosched {

// Appends to `plan` the backward of a lookup of `indices` rows of `width`
// into a table of `rows` whose gradient has `grad_bytes` elements (the
// weight's dtype), the kernels named after `table` and marked `dtype`.
void AppendEmbeddingBackward(const std::string& table, int64_t indices, int64_t rows,
                             int64_t width, int64_t grad_bytes, DType dtype, KernelPlan* plan);

}  // namespace zosched
