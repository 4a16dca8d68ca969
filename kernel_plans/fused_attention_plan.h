// A fused causal attention kernel (one that never writes the scores) as
// the first-order plans launch it: PyTorch's SDPA (FlashAttention-2 for
// FP16/BF16, the memory-efficient kernel for FP32) and Transformer
// Engine's FusedAttention (cuDNN) under Megatron-LM.
//
// Tiles (PyTorch's flash_fwd_launch_template.h and
// flash_bwd_launch_template.h on sm80+: forward 128 query rows by 128 keys
// up to width 64, by 64 above; backward 128 by 128 up to width 64, 64 by
// 128 above; U: the memory-efficient kernel's forward 64 by 64 up to width
// 64, 64 by 128 above, its backward 64 by 64; U: cuDNN's as
// FlashAttention-2's, its kernels not being public). The MMAs run at the
// head width rounded up to a multiple of 32 (FA2's hdim32/64/96/128
// kernels). The tile arithmetic is one GEMM per (example, head): query
// tile i (rows i·R .. (i + 1)·R - 1) visits key tiles up to
// ⌈min(seq, (i + 1)·R) / K⌉, the tiles above the diagonal skipped; m = R,
// n = K · (the key tiles all its query tiles visit), k = products · width
// (the forward's Q·Kᵀ and P·V: 2; the backward's Q·Kᵀ again, dO·Vᵀ, Pᵀ·dO,
// dS·K and dSᵀ·Q: 5).
//
// Bytes (kernel.h's units; c = bytes of the compute dtype): q, k, v, the
// context and their gradients at c, the log-sum-exp and D (rowsum(dO·O))
// FP32 per (token, head), FA2's dQ accumulator FP32.
#pragma once

#include <string>

#include "kernel_plans/gpt_first_order_op.h"
#include "kernel_plans/kernel.h"

namespace zosched {

// The forward: one kernel named `name` + " forward (causal)"; reads q, k,
// v, writes the context and the log-sum-exp.
Kernel FusedAttentionForward(const std::string& name, const GptShape& s);

// The backward, appended to `plan`: rowsum(dO·O) into D (`name` + "
// backward: rowsum(dO·O)"; FA2's dot_do_o also clears the FP32 dQ
// accumulator), the dQ/dK/dV kernel (`name` + " backward: dQ, dK, dV
// (causal)": reads q, k, v, dO, the log-sum-exp and D; writes dK, dV;
// accumulates dQ in FP32), and for 16-bit dtypes the dQ accumulator's
// conversion ("cast dQ accumulator"; the FP32 kernel writes dQ directly).
void AppendFusedAttentionBackward(const std::string& name, const GptShape& s, KernelPlan* plan);

}  // namespace zosched
