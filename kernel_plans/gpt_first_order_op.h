// What the first-order kernel plans (pytorch_first_order_plan.h: PyTorch
// eager; megatron_plan.h: Megatron-LM) read off a compute op of a model
// with GPT-2 blocks, and the checks both make: the op's shape, which
// attention the lowering chose, the tensors an OPTIMIZER_STEP steps; and
// the dispatch of the ops over tokens to an implementation's plans.
//
// Units: elements; GptShape's counts are per op (its examples · seq_len
// tokens).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernel_plans/kernel.h"
#include "kernel_plans/op_shape.h"
#include "models/model.pb.h"
#include "models/model_tensors.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// OpShape and the model's GPT-2 block dimensions.
struct GptShape : OpShape {
  int64_t d = 0;                     // head width: h / heads
  int64_t vocab = 0, positions = 0;  // rows of the token and position tables
  bool tied = false;                 // the LM head is the token table
  bool relu = false;                 // ReLU, else tanh-GELU
  double Th() const { return static_cast<double>(tokens) * h; }
  double Tf() const { return static_cast<double>(tokens) * f; }
  // Elements of the attention scores of the op's examples.
  double Scores() const { return static_cast<double>(examples) * heads * seq * seq; }
};

// `op`'s shape over `model` in `dtype`.
GptShape GptShapeOf(const ModelSpec& model, const ComputeOp& op, DType dtype);

// FLOPs per element of the non-GEMM kernels, from the formulas they
// evaluate (informative: these kernels are costed by their bytes): adds,
// scales, fills and casts 1; LayerNorm's mean, variance and (x - mean)
// ·rstd·w + b 8; tanh-GELU's 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) 8;
// softmax's max, subtract, exp, sum and divide 5.
inline constexpr double kElementFlops = 1;
inline constexpr double kLayerNormFlops = 8;
inline constexpr double kActivationFlops = 8;
inline constexpr double kSoftmaxFlops = 5;

// OK when `model` has GPT-2 blocks at GPT-2's or OPT's sizes: family GPT2
// or OPT, pre-norm LayerNorm with a final norm, biased projections, GELU or
// ReLU, a learned position table, no project_in/out, heads hidden / heads
// wide (at most 128) with one key and value each.
// Errors: InvalidArgument "model 'NAME' (FAMILY) WHAT; `profile` runs GPT-2
// blocks ...", `profile` naming the implementation (e.g. "the PyTorch
// first-order profile").
absl::Status CheckGptBlocks(const ModelSpec& model, const std::string& profile);

// OK when `op` has examples >= 1 and seq_len in [1, max_positions].
// Errors: InvalidArgument naming the kind and both values.
absl::Status CheckTokens(const ModelSpec& model, const ComputeOp& op);

// Whether a TRAIN_BLOCK_FORWARD or BLOCK_BACKWARD runs a fused attention
// kernel (the lowering's flash_attention), read off the bytes the lowering
// sized its saved range with (BlockSavedBytes, schedule/first_order_model.h,
// for the blocks CheckGptBlocks admits): 18sbh + 4sbf kept by every block,
// 5·a·s²·b more for the scores without flash_attention, 2sbh under
// recompute, where the workspace of a block's forward and of its
// recomputing backward holds the full amount.
// Errors: InvalidArgument for a recomputing forward without a workspace
// (its saved range, the block's input, does not say) and for a range of
// neither size.
absl::StatusOr<bool> FusedAttention(const ModelSpec& model, const ComputeOp& op);

// The tensors an OPTIMIZER_STEP steps: the part's parameter tensors
// (models/model_tensors.h: embedding tables; a block's; the final norm's
// and an untied head's) when its params range is the whole part, else one
// flat tensor of the range's elements (FSDP's flat shard), as a matrix.
// Errors: InvalidArgument for a params.part that is not a part, and for a
// range outside it.
absl::StatusOr<std::vector<TensorSpec>> OptimizerStepTensors(const ModelSpec& model,
                                                             const ComputeOp& op);

// Each tensor's elements, in order.
std::vector<int64_t> TensorElements(const std::vector<TensorSpec>& tensors);

// A GRAD_ACCUMULATE's add of a reduced FP32 shard into the accumulated one
// (FSDP's accumulated_grad += sharded_grad): reads both, writes one, 12
// bytes an element of op.params.elements.
Kernel AccumulateGradientShard(const OpShape& s, const ComputeOp& op);

// True for the kinds planned from the op's tokens: TRAIN_EMBED,
// TRAIN_BLOCK_FORWARD, TRAIN_HEAD_LOSS, HEAD_BACKWARD, BLOCK_BACKWARD and
// EMBED_BACKWARD.
bool IsTokenOp(ComputeKind kind);

// One implementation's plans of those kinds over its shape type (GptShape
// or one extending it); a block's are told whether its attention is fused
// and, backward, whether it recomputes its forward first.
template <typename Shape>
struct TokenOpPlans {
  KernelPlan (*embed_forward)(const Shape&);
  void (*block_forward)(const Shape&, bool fused, KernelPlan*);
  KernelPlan (*head_forward)(const Shape&);
  KernelPlan (*head_backward)(const Shape&);
  void (*block_backward)(const Shape&, bool fused, bool recompute, KernelPlan*);
  KernelPlan (*embed_backward)(const Shape&);
};

// The plan of `op` (IsTokenOp(op.kind())) of shape `s` by `plans`, after
// the checks both implementations make: CheckTokens, and for a block
// FusedAttention. Errors: theirs.
template <typename Shape>
absl::StatusOr<KernelPlan> PlanTokenOp(const ModelSpec& model, const ComputeOp& op,
                                       const Shape& s, const TokenOpPlans<Shape>& plans) {
  if (absl::Status status = CheckTokens(model, op); !status.ok()) return status;
  if (op.kind() == TRAIN_EMBED) return plans.embed_forward(s);
  if (op.kind() == TRAIN_HEAD_LOSS) return plans.head_forward(s);
  if (op.kind() == HEAD_BACKWARD) return plans.head_backward(s);
  if (op.kind() == EMBED_BACKWARD) return plans.embed_backward(s);
  absl::StatusOr<bool> fused = FusedAttention(model, op);
  if (!fused.ok()) return fused.status();
  KernelPlan plan;
  if (op.kind() == TRAIN_BLOCK_FORWARD) {
    plans.block_forward(s, *fused, &plan);
  } else {
    plans.block_backward(s, *fused, op.recompute(), &plan);
  }
  return plan;
}

}  // namespace zosched
