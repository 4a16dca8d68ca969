// The kernels Megatron-LM launches for the work that a first-order compute
// op of the IR stands for (TRAIN_EMBED to OPTIMIZER_STEP: the DDP, ZeRO and
// FSDP baselines, simulated only), training a GPT model with its fused
// kernels in BF16 with FP32 main parameters and gradients
// (first_order_lowering's BF16_FP32_GRADS recipe): the profile of what
// users of Megatron-LM run, beside PyTorch eager's (pytorch_first_order_plan.h).
//
// The program (U: one configuration of many, Megatron's defaults where it
// has them): pretrain_gpt.py of Megatron-LM @ d98e8a6
// (github.com/NVIDIA/Megatron-LM, 2026-08-22) on Transformer Engine @
// d0067d0 (github.com/NVIDIA/TransformerEngine), PyTorch >= 2.2, with
//   --transformer-impl transformer_engine (the default): the layer spec
//       get_gpt_layer_with_transformer_engine_submodules
//       (megatron/core/models/gpt/gpt_layer_specs.py:179-335)
//   --bf16: a BF16 model (Float16Module), FP32 main_grad buffers
//       (accumulate_allreduce_grads_in_fp32, training/arguments.py:1204-1217)
//   --position-embedding-type learned_absolute, embeddings tied to the
//       output layer (share_embeddings_and_output_weights) unless the
//       model's head is untied, GELU (or ReLU with --no-bias-gelu-fusion,
//       which the bias-GELU fusion requires: mlp.py:300-319)
//   --hidden-dropout 0 --attention-dropout 0 (U: Megatron's defaults are
//       0.1; 0 as in the programs pytorch_first_order_plan.h models, and
//       F.dropout(p = 0) launches nothing)
//   the fusions at their defaults (arguments.py:2887-2946): bias-GELU,
//       bias-dropout-add, masked softmax, gradient accumulation fusion on;
//       --cross-entropy-loss-fusion off
//   attention: with the lowering's flash_attention, --attention-backend
//       auto, where TE picks cuDNN's FusedAttention on Hopper
//       (transformer_engine/pytorch/attention/dot_product_attention/
//       utils.py:1648-1653); without, --attention-backend unfused: TE's
//       UnfusedDotProductAttention (its causal mask, baddbmm, TE's masked
//       softmax kernel where is_kernel_available holds, else PyTorch's,
//       bmm; megatron's own DotProductAttention needs --spec local:
//       training/arguments.py:436-437)
//   --optimizer adam (TE's FusedAdam, optimizer/__init__.py:14), no
//       --use-distributed-optimizer (Float16OptimizerWithFloat16Params,
//       optimizer/optimizer.py:964), --clip-grad 1.0 and
//       --check-for-nan-in-loss-and-grad (both defaults), no loss scaler
//       under BF16; TP = PP = CP = 1, overlap_grad_reduce off
//
// What each kind stands for, and its sources (Megatron-LM paths under
// megatron/core/ unless named; TE's under transformer_engine/):
//   TRAIN_EMBED  LanguageModelEmbedding.forward
//       (models/common/embeddings/language_model_embedding.py:103-158):
//       F.embedding of the tokens and of the [b, s] position ids
//       (tensor_parallel/layers.py:361), their sum, transpose(0, 1)
//       .contiguous() (a copy when b > 1)
//   TRAIN_BLOCK_FORWARD  TransformerLayer.forward: linear_qkv =
//       TELayerNormColumnParallelLinear (pytorch/module/layernorm_linear.py:
//       257 TE's LayerNorm kernel, then :410 one cuBLASLt GEMM, the bias in
//       its epilogue: attention.py:1698 skip_bias_add=False); q, k, v are
//       views (SplitAlongDim in get_query_key_value_tensors,
//       attention.py:1824); the attention;
//       linear_proj = TERowParallelLinear, its bias left to the
//       bias-dropout-add (attention.py:418-420); self_attn_bda =
//       bias_dropout_add_fused_train (fusions/fused_bias_dropout.py, one
//       kernel under jit_fuser = torch.compile: jit.py); linear_fc1 = TE
//       LayerNorm and GEMM (skip_bias_add, mlp.py:226); bias_gelu_impl
//       (fusions/fused_bias_gelu.py, one kernel); linear_fc2 GEMM; mlp_bda
//   TRAIN_HEAD_LOSS  the final TE LayerNorm; output_layer =
//       ColumnParallelLinear's torch.matmul (tensor_parallel/layers.py:451-
//       462); vocab_parallel_cross_entropy (tensor_parallel/cross_entropy.py:
//       .float() of the logits, max, -= max, the target's mask and gather,
//       exp in place, sum, log - predicted, /= sum kept for backward);
//       pretrain_gpt.py loss_func (:222-292: masked sum, token count, the
//       report, NaN and Inf checks, each a kernel and an .item()) and
//       pipeline_parallel/schedules.py:339-340 (/ tokens, / micro-batches)
//   HEAD_BACKWARD  the loss's backward (backward_step's loss scale, ones,
//       the divisions and mask), cross-entropy's (cross_entropy.py:186-210:
//       the target's entries, mul_ by the loss gradient) and the cast back
//       to BF16 of its .float(); the output layer's backward
//       (layers.py:637-780): dgrad GEMM, the wgrad GEMM accumulated into
//       the FP32 main_grad (fused_weight_gradient_mlp_cuda
//       .wgrad_gemm_accum_fp32), for a tied weight a zero-filled dummy
//       gradient (zero_out_wgrad: language_module.py:267; TE's
//       get_dummy_wgrad, pytorch/module/base.py:134-148); the final norm's
//       backward; its weight's and bias's DDP hooks
//   BLOCK_BACKWARD  the layer's backward, with `recompute` its forward first
//       (--recompute-granularity full): each bias-dropout-add's bias
//       gradient (one reduction), each TE linear's dgrad GEMM and wgrad GEMM
//       into the FP32 main_grad (layernorm_linear.py:1024-1063, the bias
//       gradient in the wgrad GEMM's epilogue: base.py:1705), TE's
//       LayerNorm backward (a kernel and its dgamma/dbeta finalize:
//       common/normalization/layernorm/ln_bwd_semi_cuda_kernel.cu:51, 69),
//       bias_gelu's backward and its bias gradient (autograd's sum_to_size
//       of the [T, f] gradient), the attention's, the two residual
//       gradient sums; the DDP hooks that add the 8 biases' and norm
//       weights' gradients into main_grad
//       (distributed/distributed_data_parallel.py:575-579: the 4 weights'
//       were accumulated by their wgrad GEMMs, grad_added_to_main_grad)
//   EMBED_BACKWARD  both tables' embedding backward into BF16 gradients
//       (embedding_backward_plan.h; each a .contiguous() of the transposed
//       gradient first when b > 1), for a tied table autograd's sum of the
//       head's zeroed dummy and the embedding's gradient, the two DDP hooks
//   GRAD_ACCUMULATE  one add into the accumulated FP32 shard
//   OPTIMIZER_STEP  over the op's FP32 main parameters, a multi-tensor
//       pass each (multi_tensor_apply.h, apex's and TE's limits): the DDP
//       NaN check's norm of the gradients (param_and_grad_buffer.py:345-
//       360, before the gradient sync), clip_grad_norm's multi_tensor_l2norm
//       and multi_tensor_scale_tensor by the clip coefficient (clamped to
//       1, a tensor: optimizer/clip_grads.py:55-190), TE's FusedAdam
//       (pytorch/optimizers/fused_adam.py:865-872: one multi_tensor_adam
//       over [g, p, m, v] per parameter group, weight decay on matrices
//       and tables, none on biases and norms: optimizer/__init__.py:110),
//       the copy of the main parameters into the BF16 model
//       (_copy_main_params_to_model_params, optimizer.py:1112-1117), and
//       zero_grad_buffer's fill of main_grad for the next step
//       (param_and_grad_buffer.py:1617-1623); with the HEAD_PART's step
//       (the first) the step's scalars: the NaN and Inf checks of the norm
//       (a kernel and an .item() each), the norm's buffers, cleanup kernel
//       and square root, the clip coefficient
//
// U: Megatron runs each optimizer pass over all the model's tensors at
// once; the plan runs it over the op's part, so a step of many parts
// counts a few launches more than Megatron's. A part's tensors are the
// checkpoint's (models/model_tensors.h: OPT's q, k and v apart, where
// Megatron fuses them; the launches are the same below 36 tensors a
// group). cuDNN's attention kernels are not public: its forward one
// launch, its backward three, as FlashAttention-2's
// (fused_attention_plan.h).
//
// Not in the plans: a later micro-batch's accumulation (fused into the
// wgrad GEMMs, and the hooks' adds, the same each micro-batch); the
// gradient sync's scaling by 1 / data-parallel size and the distributed
// optimizer's parameter all-gather (the op does not say which strategy ran
// it); the all-reduces over size-1 tensor-parallel groups inside
// cross-entropy and the norm; the host waits at each .item(); the data
// loader's copies, logging and timers.
//
// Counting (kernel.h's units; c = 2, BF16). GEMM m, n, k are the cuBLAS
// call's (column-major), as in pytorch_first_order_plan.h: y[T, out] =
// x[T, in]·Wᵀ is m = out, n = tokens, k = in; dgrad m = in, n = tokens,
// k = out; wgrad m = in, n = out, k = tokens, its FP32 output read and
// written (8 bytes an element). Activations and the residual stream BF16;
// LayerNorm statistics, the cross-entropy's softmax and main grads FP32;
// token ids and targets int64.
#pragma once

#include "absl/status/statusor.h"
#include "kernel_plans/kernel.h"
#include "models/model.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The kernels Megatron-LM launches for first-order compute op `op` of a
// schedule over `model` computing in `compute_dtype` (BF16), in launch
// order. What the plan reads off the op is what PyTorchFirstOrderPlan
// reads (pytorch_first_order_plan.h), but for OPTIMIZER_STEP, whose master
// must be set.
// Errors: InvalidArgument naming what the program does not run: a model
// CheckGptBlocks refuses (gpt_first_order_op.h); a compute dtype other
// than BF16; a ZO kind (EMBED to CAST); examples or seq_len < 1 or seq_len
// above max_positions; a saved (or workspace) range that is neither
// attention's size, or a recomputing schedule's forward; an
// OPTIMIZER_STEP without master weights (PyTorch AMP's recipe: the
// pytorch_first_order profile) or a range outside its part.
absl::StatusOr<KernelPlan> MegatronPlan(const ModelSpec& model, const ComputeOp& op,
                                        DType compute_dtype);

}  // namespace zosched
