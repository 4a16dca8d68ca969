// The kernels PyTorch eager launches for the work that a first-order compute
// op of the IR stands for (TRAIN_EMBED to OPTIMIZER_STEP: the DDP, ZeRO and
// FSDP baselines, simulated only), training a GPT-2 model under
// torch.autocast with FP32 parameters (first_order_lowering's
// AMP_FP32_MASTER recipe), or in plain FP32: the profile of what users of
// those baselines run, to compare the simulator's predictions with their
// measured steps.
//
// The program (U: one of many; the one the measured runs share where they
// agree): a GPT-2 as in Karpathy's llm.c reference, train_gpt2.py, and the
// nanoGPT-style models that copy it:
//   embedding     x = wte(idx) + wpe(arange(T)), no dropout
//   block         pre-norm: x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)),
//                 nn.LayerNorm, nn.Linear with biases, c_attn h→3h split
//                 into q, k, v views, attention as below, c_proj, c_fc
//                 h→f, one activation kernel (nn.GELU(approximate="tanh")
//                 for GELU, nn.ReLU for RELU), c_proj f→h; no dropout
//   attention     fused: F.scaled_dot_product_attention(is_causal=True);
//                 with scores: att = (q @ kᵀ) · 1/√d, masked_fill of the
//                 causal mask, softmax, att @ v, then
//                 transpose(1, 2).contiguous()
//   head          ln_f, lm_head over every position (the token table when
//                 tied), F.cross_entropy over every position
//   optimizer     torch.optim.AdamW with its defaults: the foreach
//                 implementation, weight decay on every tensor
//   loss scaling  FP16 with torch.amp.GradScaler; BF16 and FP32 without
//
// Sources (PyTorch 2.x; U: the measured runs used 2.5.1 and 2.9.0):
//   autocast      https://pytorch.org/docs/stable/amp.html, "CUDA Ops that
//                 can autocast to float16" (addmm, bmm, linear, matmul, mm:
//                 their inputs cast to the compute dtype, the casts of
//                 parameters cached for the autocast region) and "... to
//                 float32" (layer_norm, softmax, log_softmax, cross_entropy:
//                 run in FP32, a 16-bit input cast up); ops not listed run
//                 in their inputs' widest type (x + y of FP32 and FP16:
//                 FP32), so the residual stream stays FP32; backward, each
//                 cast's ToCopyBackward casts its gradient back
//   linear        at::linear of a contiguous [B, T, in] input with a bias:
//                 one addmm (cuBLASLt, bias in the epilogue); backward
//                 (AddmmBackward0): two mm (input and weight gradients) and
//                 a sum over tokens (bias gradient)
//   attention     aten/src/ATen/native/transformers/cuda/sdp_utils.cpp:
//                 FlashAttention-2 for FP16/BF16, the memory-efficient
//                 (CUTLASS) kernel for FP32; flash_attn/flash_api.cpp
//                 mha_bwd: dot(dO, O) (clearing the FP32 dQ accumulator),
//                 the dQ/dK/dV kernel, the dQ conversion; torch.matmul of
//                 4-D operands folds batch and heads, copying an operand
//                 whose two dims do not merge (q, kᵀ and v when B > 1)
//   embedding     aten/src/ATen/native/cuda/Embedding.cu,
//                 embedding_dense_backward_cuda: up to 3,072 indices a
//                 zero-filled table and one kernel; more: arange, a CUB
//                 radix sort of the 64-bit indices and the segment kernels
//                 of EmbeddingBackwardKernel.cu
//   AdamW         torch/optim/adam.py, _multi_tensor_adam (adamw.py's
//                 _multi_tensor_adamw before 2.6), capturable off: per
//                 parameter group _foreach_mul_(params, 1 - lr·wd),
//                 _foreach_lerp_(m, g), _foreach_mul_(v),
//                 _foreach_addcmul_(v, g, g), _foreach_sqrt(v),
//                 _foreach_div_, _foreach_add_(eps), _foreach_addcdiv_(p, m,
//                 denom); the step counters live on the host
//   multi-tensor  aten/src/ATen/native/cuda/MultiTensorApply.cuh: chunks of
//                 65,536 elements; a launch when 2,240 chunks or the
//                 depth's tensor limit (770, 448, 336, 252, 210; lists with
//                 a scalar per tensor 672, 448, ...) fill (the 32 KB kernel
//                 arguments of CUDA 12.1+)
//   GradScaler    torch/amp/grad_scaler.py: unscale_
//                 (_amp_foreach_non_finite_check_and_unscale_ over the
//                 gradients), step (found_inf .item()), update
//                 (_amp_update_scale_)
//
// What each kind stands for (every torch op one launch: eager, no fusion):
//   TRAIN_EMBED          the embedding forward
//   TRAIN_BLOCK_FORWARD  one block's forward; under autocast the casts of
//                        its four weights and biases (cached for the
//                        region: once a forward)
//   TRAIN_HEAD_LOSS      ln_f, the head's weight cast, the logits, and
//                        cross-entropy (its FP32 cast of the logits under
//                        autocast)
//   HEAD_BACKWARD        the loss gradient (GradScaler's scale under FP16)
//                        back through cross-entropy, the head and ln_f
//   BLOCK_BACKWARD       one block's backward, and with `recompute` its
//                        forward first (checkpoint's recomputation)
//   EMBED_BACKWARD       both tables' gradients, and for a tied head the sum
//                        of the token table's two gradients
//   GRAD_ACCUMULATE      one add into the accumulated shard (FSDP)
//   OPTIMIZER_STEP       AdamW's eight foreach passes over the op's
//                        tensors, after GradScaler's unscale under FP16;
//                        the step's found_inf read and scale update with
//                        the HEAD_PART's step
// Gradients land as AccumulateGrad finds them after
// zero_grad(set_to_none=True): the first micro-batch's are stolen, no launch.
//
// Not in the plans: a later micro-batch's add into .grad (12 bytes an
// element; the op does not say which micro-batch it is); DDP's copies of the
// gradients into its buckets and back (16 bytes an element, the sync
// micro-batch only) and FSDP2's all-gather copy-outs (the op does not say
// which strategy ran it; FSDP1 gathers in place); dropout, gradient
// clipping, torch.compile; the data loader's copies and the host syncs of
// logging (loss.item()).
//
// Counting (kernel.h's units; c = bytes of the compute dtype). GEMM m, n, k
// are the cuBLAS call's (column-major): y[T, out] = x[T, in]·Wᵀ is called
// as yᵀ = W·xᵀ, m = out, n = tokens, k = in. A fused attention kernel is
// one GEMM per (example, head) over the tiles it visits, as in
// pytorch_zo_plan.h. Bytes are each operand read once and each output
// written once; token ids and targets int64, LayerNorm's statistics, the
// log-sum-exp and the softmax's output under autocast FP32, the mask bool.
#pragma once

#include "absl/status/statusor.h"
#include "kernel_plans/kernel.h"
#include "models/model.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The kernels PyTorch eager launches for first-order compute op `op` of a
// schedule over `model` computing in `compute_dtype` (FP16 or BF16: under
// autocast; FP32: autocast off), in launch order.
// What the plan reads off the op:
//   every kind but GRAD_ACCUMULATE and OPTIMIZER_STEP: examples, seq_len
//   TRAIN_BLOCK_FORWARD, BLOCK_BACKWARD: which attention ran, from the
//                        saved range (under recompute: the workspace),
//                        whose size the lowering takes from
//                        BlockSavedBytes (schedule/first_order_model.h):
//                        the scores' 5·a·s²·b bytes are kept only without
//                        flash_attention
//   BLOCK_BACKWARD:      recompute
//   GRAD_ACCUMULATE:     params.elements
//   OPTIMIZER_STEP:      params (a whole part: its parameter tensors, as
//                        torch.optim sees a module's; part of one: FSDP's
//                        flat shard, one tensor), whether master is set
// Errors: InvalidArgument naming what the program does not run: a family
// other than GPT2 and OPT (OPT at its sizes runs as GPT-2 blocks, as ZO2's
// nanoGPT path does), a block other than pre-norm LayerNorm with biases, an
// activation other than GELU and RELU, grouped-query attention, a head
// width other than hidden / heads or above 128, project_in/out, positions
// other than a learned table; a compute dtype other than FP32, FP16 and
// BF16; a ZO kind (EMBED to CAST: ZO2's and MeZO's profiles run those);
// examples or seq_len < 1 or seq_len above max_positions; a saved (or
// workspace) range that is neither attention's size, or a recomputing
// schedule's forward, whose saved range does not say which; an
// OPTIMIZER_STEP with master weights (Megatron's recipe, not torch.optim
// over FP32 parameters) or a range outside its part.
absl::StatusOr<KernelPlan> PyTorchFirstOrderPlan(const ModelSpec& model, const ComputeOp& op,
                                                 DType compute_dtype);

}  // namespace zosched
