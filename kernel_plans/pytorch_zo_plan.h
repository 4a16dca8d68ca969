// The kernels PyTorch eager launches, in ZO2's code, for the work that a ZO
// compute op of the IR stands for: the profile of what users run today, to
// compare the simulator's predictions with ZO2's and MeZO's measured steps
// (../shared/reference/peers_h100.md).
//
// Source: liangyuwang/zo2 @ 4bca25c (its nanoGPT path, which the measured
// runs used; no `transformers`):
//   model         zo2/model/nanogpt/model.py
//                   :21     vocab_size 50304 in every config
//                   :33-41  the OPT configs: only n_layer, n_head, n_embd
//                   :25     dropout 0.0 (and zo2/model/base.py:17-22:
//                           zo_train() puts the model in eval mode)
//                   :43-52  LayerNorm with bias: F.layer_norm
//                   :77-101 attention: c_attn (nn.Linear h→3h with bias),
//                           split and views (:81-84, no copy),
//                           F.scaled_dot_product_attention(is_causal=True)
//                           (:87-89), transpose().contiguous() (:97, no copy:
//                           SDPA's output is already token-major), c_proj
//                           (:100)
//                   :103-117 MLP: c_fc h→4h, nn.GELU() (erf), c_proj 4h→h
//                   :128-131 pre-norm block, two residual adds
//                   :142-149 wte [50304, h], wpe [block_size, h], ln_f,
//                           lm_head [50304, h]; :154 the tie is commented
//                           out: the head is its own tensor, perturbed and
//                           updated like any other
//   MeZO (resident, "mezo")
//                 zo2/model/nanogpt/mezo_sgd/zo.py:28-41 the forward: wte,
//                   wpe, add, blocks, ln_f, lm_head, F.cross_entropy over
//                   every position
//                 zo2/optimizer/mezo_sgd/zo.py:102-124 one step: perturb
//                   the whole model by +εz (:114), forward (:115), by -2εz
//                   (:117), forward (:118), g = (L+ - L-)/(2ε) .item()
//                   (:119, :99-100), restore by +εz (:121), update (:123),
//                   each pass after torch.manual_seed(seed) (z regenerated)
//   ZO2 (offloaded, "zo2")
//                 zo2/model/nanogpt/mezo_sgd/zo2.py:49-111 the forward,
//                   module by module (wte, wpe, add, each block, ln_f with
//                   weight_decay=0. (:96-100), lm_head, cross-entropy over
//                   every position (:106-110)), block i uploaded while block
//                   i-1 computes and block i-2 offloads (:64-95)
//                 zo2/optimizer/mezo_sgd/zo2.py:115-143 module_dual_forward:
//                   the previous step's update (:132-133, with its saved RNG
//                   state, :99-113), +εz (:135), forward (:136), -2εz
//                   (:138), forward (:139), restore +εz (:141); :163-184 the
//                   step: seeds, torch.cuda.synchronize() before and after
//                   the forward (:180, :182), g .item() (:183)
//   passes        zo2/optimizer/mezo_sgd/zo.py:46-62 perturbation, per
//                   parameter tensor: z = torch.normal(0, 1, shape, dtype of
//                   the parameter) (:61), then param.add_(s * z * eps)
//                   (:62): four launches (normal, s·z, ·ε, add_)
//                 zo.py:64-88 update, per tensor: z regenerated (:79), then
//                   param.sub_(lr * (g * z + wd * param)) (:85-86, or
//                   :81-82 when the caller passes weight_decay): six
//                   launches; for a tensor whose name holds "bias",
//                   "layer_norm", "layernorm" or "ln" (:84),
//                   param.sub_(lr * g * z) (:88, lr·g a Python float):
//                   three
//   dtype         test/mezo_sgd/nanogpt/test_speed.py:63-64, :78-79: the
//                   model is built under torch.set_default_dtype (FP16 or
//                   FP32); zo2/config/mezo_sgd.py:27 amp False: no autocast,
//                   every kernel in the model's dtype
//
// Mapping ZO2's work onto the IR's ops (each torch op one launch: eager, no
// fusion). Per parameter tensor a step has four passes, each regenerating
// its z: +εz, -2εz, restore +εz, update. The IR's ops carry them so that a
// step's total is ZO2's; where in the step they run is a convention:
//   EMBED (sign)          the sign's pass (+εz for PLUS, -2εz for MINUS) over
//                         wte and wpe, then the embedding forward
//   BLOCK_FORWARD (sign)  the sign's pass over the block's 12 tensors, then
//                         the block forward (ZO2 runs it just so, :135-139)
//   HEAD_LOSS (sign)      the sign's pass over ln_f and lm_head, then ln_f,
//                         the full-vocabulary head over every position and
//                         cross-entropy (not zosched's label-word head)
//   UPDATE (part)         the restore pass then the update pass over the
//                         part's tensors (MeZO runs both after the second
//                         forward, ZO2 the update before the first and the
//                         restore after the second)
//   PROJECTED_GRADIENT    L+ - L-, / 2ε, and the .item() that waits for it
// So every parameter element is generated 4 times a step (torch.normal,
// cuRAND Philox) and written in place 4 times (3 add_, 1 sub_).
// The two variants launch the same kernels but for ln_f's update: MeZO's
// name rule leaves "transformer.ln_f.*" undecayed (three launches a tensor),
// ZO2 passes weight_decay=0. and so takes the six-launch form.
//
// Not in the plans (the schedule's streams and the simulator carry them):
// ZO2's per-tensor host↔device copies (nn.Module.to(non_blocking=True) on
// the upload and offload streams, zo2/optimizer/mezo_sgd/zo2.py:188-235,
// :442-523: one cudaMemcpyAsync per tensor, 12 a block each way), and its
// host waits: before offloading block i-2 the host waits for the compute
// stream (:225), before computing block i-1 for the upload stream (:253),
// so the host is never more than a block ahead of the GPU.
//
// Which kernels PyTorch picks (U: the PyTorch of the measured runs is not
// recorded; these hold for PyTorch 2.x on an H100):
//   - nn.Linear with a bias on a contiguous [B, T, in] input: one
//     cublasLt GEMM with the bias in its epilogue (at::linear → addmm's Lt
//     path); without (lm_head): one cuBLAS GEMM (matmul folded to mm);
//   - SDPA, causal, dropout 0: FP16/BF16 FlashAttention-2 (recent releases
//     may prefer cuDNN's fused kernel on Hopper: also one launch that skips
//     the masked tiles), FP32 the memory-efficient (CUTLASS) kernel; q, k, v
//     strided views go in without copies;
//   - F.cross_entropy = log_softmax then nll_loss: two launches;
//   - dropout with p = 0 in eval mode returns its input: no launch.
//
// Counting (kernel.h's units; c = bytes of the compute dtype). GEMM m, n, k
// are the cuBLAS call's (column-major): y[T, out] = x[T, in]·Wᵀ is called as
// yᵀ = W·xᵀ, m = out, n = tokens, k = in. Bytes are each operand read once
// and each output written once: a torch.normal writes its z; s·z and ·ε
// read one tensor and write one; add_ and sub_ read two and write one.
// Token ids, positions and targets are int64; LayerNorm's mean and rstd and
// the attention's log-sum-exp fp32.
//
// Assumptions: ZO2 forwards the whole batch at once, so a schedule for
// these profiles has one forward op per sign and part (micro_batch_size =
// batch); every op's passes would otherwise repeat per micro-batch. A step
// with an update pending (ZO2's first step has none).
#pragma once

#include "absl/status/statusor.h"
#include "kernel_plans/kernel.h"
#include "models/model.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Which of ZO2's two programs runs.
enum class PyTorchZoVariant {
  kMezoResident,  // ZO2's MeZO-SGD, the whole model on the GPU ("mezo")
  kZo2Offloaded,  // ZO2, blocks offloaded to host memory ("zo2")
};

// PyTorch eager's host time to dispatch one op (CostPlan's host_dispatch_s):
// ../shared/reference/h100_measured.md, "A tiny kernel launch, back to back:
// 10.5 µs each through PyTorch".
constexpr double kPyTorchEagerDispatchS = 10.5e-6;

// The kernels PyTorch eager launches, in ZO2's code, for the work that
// compute op `op` of a schedule over `model` stands for (the mapping above),
// with parameters and activations of `compute_dtype`, in launch order within
// each pass. The model is ZO2's nanoGPT at `model`'s hidden_size, num_heads
// and max_positions (its block_size): GPT-2 blocks, vocabulary 50,304, an
// untied head, whatever the spec's other fields say.
// What the plan reads off the op:
//   EMBED, BLOCK_FORWARD, HEAD_LOSS: sign, examples, seq_len
//   UPDATE:                         params.part (and that the range is the
//                                   whole part)
//   PROJECTED_GRADIENT:             nothing (ZO2's loss is one scalar)
// Errors: InvalidArgument naming the family for a model that ZO2's nanoGPT
// path does not run (a family other than OPT and GPT2), for an FFN width
// other than 4·hidden_size or a head width above 128 (FlashAttention-2's
// tiles are known up to there), a compute dtype other than FP32, FP16 and
// BF16, a kind ZO2 has no counterpart for (CAST: ZO2's measured runs move
// blocks in the compute dtype; the first-order kinds), a forward op with
// its sign unset, examples or seq_len < 1, seq_len above max_positions, or
// an UPDATE of part of a part (ZO2 updates whole modules).
absl::StatusOr<KernelPlan> PyTorchZoPlan(const ModelSpec& model, const ComputeOp& op,
                                         DType compute_dtype, PyTorchZoVariant variant);

}  // namespace zosched
