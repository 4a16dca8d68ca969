// The kernels zosched's CUDA backend (runtime/cuda) launches for a ZO
// compute op of the IR, in launch order, each with the shape, FLOPs and
// bytes the GPU cost model (sim/) needs: the plan a timeline of the backend
// shows for that op.
//
// Source (what each part mirrors; change them together):
//   dispatch by kind:   runtime/cuda/cuda_backend.cc CudaBackend::EnqueueCompute,
//                       and its PerturbedBlockWeights (vectors first, each
//                       matrix just before its GEMM)
//   UPDATE:             runtime/cuda/zo/update.{h,cu} LaunchUpdate
//   EMBED:              runtime/ops/embed_plan.cc PlanEmbed; runtime/cuda/zo/
//                       perturb.cu LaunchPerturb, LaunchPerturbRows;
//                       runtime/cuda/nn/decoder_forward_gpu.cc EmbedRowsGpu;
//                       runtime/cuda/nn/embed_add.cu EmbedAdd
//   BLOCK_FORWARD:      runtime/cuda/nn/decoder_forward_gpu.cc BlockForwardGpu
//                       (norm: row_norm.cu NormRows; linear: gemm.cc
//                       Gemm::Linear then bias_activation.cu BiasActivation;
//                       head_norm_rotary.cu NormRotateHeads; residual_add.cu
//                       ResidualAdd; swiglu.cu SwiGluInPlace);
//                       runtime/nn/perturbed_block_layout.cc (which tensors
//                       are vectors); runtime/cuda/nn/attention.cc
//                       CausalAttention, attention_plan.cc PlanAttentionTiling
//                       and ForEachAttentionStep (the split into strided-
//                       batched cuBLAS products, Gemm::StridedBatched, and
//                       causal_softmax.cu CausalSoftmaxRows passes); with a
//                       prefix, attention.cc PrefixAttention (per example
//                       prefix_join.cu JoinPrefixRows, the steps of
//                       attention_plan.cc PrefixJoinedShape, a
//                       cudaMemcpy2DAsync of the context back)
//   HEAD_LOSS:          runtime/ops/head_loss_plan.cc PlanHeadLoss;
//                       perturb.cu; decoder_forward_gpu.cc HeadLossFromRowsGpu;
//                       runtime/cuda/nn/head_loss.cu LabelHeadLoss
//   PROJECTED_GRADIENT: runtime/cuda/zo/projected_gradient.cu
//                       LaunchProjectedGradient, then EnqueueCompute's two
//                       cudaMemcpyAsync of the result to the host
//   CAST:               runtime/cuda/zo/cast.cu LaunchCast
//
// Counting (kernel.h's units). A GEMM's m, n, k are those of the cuBLAS
// call, which is column-major: a projection y[T, out] = x[T, in] · Wᵀ is
// called as yᵀ = W · xᵀ, m = out, n = T tokens, k = in. Bytes are the
// fewest each kernel moves: each operand read once and each output written
// once, at its element size (c = bytes of the compute dtype: fp32 4, fp16
// and bf16 2; attention scores, losses and the rotary table fp32; token
// ids, lengths and labels int32).
// FLOPs count the floating-point arithmetic of the kernel's formula; the
// Philox counter hashing and Box-Muller transform that regenerate z are
// not FLOPs: a perturbation or update pass counts them as normal_elements,
// one per parameter it perturbs or updates. Each kernel's comment in the
// .cc says what it counts.
//
// Assumptions (the backend's behaviour that the op alone does not fix):
//   - every example is seq tokens long (lengths[e] = seq): the softmax of
//     padding rows and the head's row choice depend on the values, the
//     kernels' shapes do not;
//   - an UPDATE has an update pending (every step but the first; with none
//     the kernel reads the 16-byte state and returns);
//   - FP32 GEMMs run without TF32 (CudaOptions.allow_tf32 false, the
//     default);
//   - device buffers start 256-byte aligned (cuda_backend.cc kDeviceAlign),
//     so the workspace's offset_bytes decides the attention scratch's skip
//     to a 16-byte boundary.
#pragma once

#include "absl/status/statusor.h"
#include "kernel_plans/kernel.h"
#include "models/model.pb.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// The kernels the CUDA backend launches for compute op `op` (of a schedule
// over `model` that ValidateSchedule accepts) with parameters and
// activations of `compute_dtype`, in launch order; a run of identical
// launches is one Kernel with `launches` > 1. The attention's per-call
// triple (scores, softmax, context) is listed once per distinct shape with
// launches = how many times the triple repeats; on the GPU the three
// interleave (scores, softmax, context, scores, ...). With a prefix, each
// example's join before them and copy back after them are listed likewise
// (launches = examples).
// What the plan reads off the op besides its kind:
//   UPDATE, CAST:       params.elements (and for CAST wire.size_bytes: the
//                       wire dtype's element size); UPDATE zo_state.size_bytes
//   EMBED:              examples, seq_len
//   BLOCK_FORWARD:      examples, seq_len and workspace.offset_bytes: the
//                       attention's scratch, hence its split, is the
//                       workspace past q | k | v, sized as the backend
//                       sizes it (BlockForwardWorkspaceElements of the
//                       model, examples and seq_len: what lowering gives the
//                       op; a larger range is not used) from the range's
//                       start rounded up to 16 bytes
//   HEAD_LOSS:          examples, perturbed.size_bytes (hence the number of
//                       label words: the head part's perturbed tensors then
//                       one row of EmbedDim elements per label word)
//   PROJECTED_GRADIENT: examples (the batch), losses and zo_state sizes
// Errors: InvalidArgument for a kind the CUDA backend does not run (the
// first-order kinds), a compute dtype other than FP32, FP16 or BF16, or an
// op whose fields above are inconsistent (examples or seq_len < 1, an
// attention scratch smaller than one row of scores, a perturbed range that
// is not whole label rows).
// Under `peft` LoRA or PREFIX the params of EMBED, BLOCK_FORWARD and
// HEAD_LOSS are copied where a full-parameter op perturbs them (the block
// not at all: it is read as stored) and the block's ADAPTER_PART
// (AdapterParams elements) is perturbed in one launch. LoRA: each adapted
// projection adds its adapter's GEMMs and scaling pass. A prefix of k
// tokens: attention runs one example at a time (the workspace, hence the
// score scratch, as without one): a join pass writes the example's queries
// behind k zero rows and its keys and values behind the prefix's (reads
// seq·(q + 2kv) + 2k·kv elements, writes (k + seq)·(q + 2kv); q =
// QueryWidth, kv = KvWidth), the attention's steps run on that one example
// of seq k + seq (attention_plan.h PrefixJoinedShape: whole heads' scores
// and context are (k + seq) × (k + seq), the k zero query rows included,
// whose softmax rows are written as 0 and read nothing), and a 2-D copy
// moves its seq context rows back (seq·q elements read and written).
absl::StatusOr<KernelPlan> ZoschedCudaPlan(const ModelSpec& model, const ComputeOp& op,
                                           DType compute_dtype, const Peft& peft);

}  // namespace zosched
