#include "kernel_plans/zosched_cuda_plan.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_plans/one_gpu_cluster_for_test.h"
#include "models/adapters.h"
#include "models/family_for_test.h"
#include "models/model_spec.h"
#include "models/model_tensors.h"
#include "models/peft_for_test.h"
#include "models/zoo_model_for_test.h"
#include "schedule/lowering.h"

namespace zosched {
namespace {

KernelPlan PlanOf(const ModelSpec& model, const ComputeOp& op, DType dtype) {
  absl::StatusOr<KernelPlan> plan = ZoschedCudaPlan(model, op, dtype, Peft());
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *std::move(plan) : KernelPlan();
}

ComputeOp ForwardOp(ComputeKind kind, int examples, int seq) {
  ComputeOp op;
  op.set_kind(kind);
  op.set_sign(PLUS);
  op.set_examples(examples);
  op.set_seq_len(seq);
  return op;
}

// Elements of the block's projection matrices (models/model_tensors.h).
int64_t BlockMatrixElements(const ModelSpec& model) {
  int64_t n = 0;
  for (const TensorSpec& t : BlockTensors(model, 0)) {
    if (t.role == TensorRole::kMatrix) n += t.elements();
  }
  return n;
}

double GemmFlops(const KernelPlan& plan) {
  double flops = 0;
  for (const Kernel& k : plan) {
    if (k.kind == KernelKind::kGemm) flops += k.flops * k.launches;
  }
  return flops;
}

// FLOPs of the kernels named `name`.
double FlopsOf(const KernelPlan& plan, const std::string& name) {
  double flops = 0;
  for (const Kernel& k : plan) {
    if (k.name == name) flops += k.flops * k.launches;
  }
  return flops;
}

// The block forward's GEMM FLOPs when attention runs whole heads: the
// projections, 2 · tokens · M, and for every (example, head) the scores and
// the context, 2 · seq² · d each (cuBLAS computes the full square).
double WholeHeadGemmFlops(const ModelSpec& model, int64_t examples, int64_t seq) {
  return 2.0 * examples * seq * BlockMatrixElements(model) +
         2.0 * 2.0 * examples * model.num_heads() * seq * seq * HeadDim(model);
}

const Kernel* FindKernel(const KernelPlan& plan, const std::string& name) {
  for (const Kernel& k : plan) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

void ExpectWellFormed(const KernelPlan& plan, const std::string& what) {
  EXPECT_FALSE(plan.empty()) << what;
  for (const Kernel& k : plan) {
    EXPECT_FALSE(k.name.empty()) << what;
    EXPECT_GE(k.launches, 1) << what << ": " << k.name;
    EXPECT_GT(k.bytes, 0) << what << ": " << k.name;
    EXPECT_GE(k.flops, 0) << what << ": " << k.name;
    if (k.kind == KernelKind::kGemm) {
      EXPECT_GE(k.m, 1) << what << ": " << k.name;
      EXPECT_GE(k.n, 1) << what << ": " << k.name;
      EXPECT_GE(k.k, 1) << what << ": " << k.name;
      EXPECT_GE(k.batch, 1) << what << ": " << k.name;
      EXPECT_DOUBLE_EQ(k.flops, 2.0 * k.m * k.n * k.k * k.batch) << what << ": " << k.name;
    }
  }
}

std::vector<ModelSpec> EveryFamily() {
  OptTestSizes sizes;
  sizes.hidden = 64;
  sizes.heads = 4;
  sizes.ffn = 256;
  sizes.vocab = 96;
  sizes.max_positions = 64;
  std::vector<ModelSpec> models;
  for (Family family : {OPT, GPT2, LLAMA, QWEN2, QWEN3}) {
    models.push_back(FamilyForTest(family, Family_Name(family), sizes));
  }
  return models;
}

TEST(ZoschedCudaPlan, EveryKindOfEveryFamilyIsWellFormed) {
  for (const ModelSpec& model : EveryFamily()) {
    for (DType dtype : {FP32, FP16, BF16}) {
      const int64_t c = DTypeBytes(dtype);
      const std::string what = model.name() + " " + DType_Name(dtype);
      ComputeOp update;
      update.set_kind(UPDATE);
      update.mutable_params()->set_part(DECODER_BLOCK);
      update.mutable_params()->set_elements(1000);
      update.mutable_zo_state()->set_size_bytes(16);
      ExpectWellFormed(PlanOf(model, update, dtype), what + " UPDATE");

      ExpectWellFormed(PlanOf(model, ForwardOp(EMBED, 2, 48), dtype), what + " EMBED");
      ExpectWellFormed(PlanOf(model, ForwardOp(BLOCK_FORWARD, 2, 48), dtype),
                       what + " BLOCK_FORWARD");

      ComputeOp head = ForwardOp(HEAD_LOSS, 2, 48);
      const int64_t head_elements =
          CountElements(FinalNormTensors(model)) + CountElements(HeadTensors(model)) -
          (model.tied_lm_head() ? 0 : model.vocab_size() * EmbedDim(model));
      head.mutable_perturbed()->set_size_bytes((head_elements + 2 * EmbedDim(model)) * c);
      ExpectWellFormed(PlanOf(model, head, dtype), what + " HEAD_LOSS");

      ComputeOp gradient;
      gradient.set_kind(PROJECTED_GRADIENT);
      gradient.set_examples(4);
      gradient.mutable_losses()->set_size_bytes(2 * 4 * 4);
      gradient.mutable_zo_state()->set_size_bytes(16);
      ExpectWellFormed(PlanOf(model, gradient, dtype), what + " PROJECTED_GRADIENT");

      ComputeOp cast;
      cast.set_kind(CAST);
      cast.set_cast_direction(WIRE_TO_COMPUTE);
      cast.mutable_params()->set_elements(1000);
      cast.mutable_wire()->set_size_bytes(1000 * 2);
      ExpectWellFormed(PlanOf(model, cast, dtype), what + " CAST");
    }
  }
}

TEST(ZoschedCudaPlan, BlockGemmFlopsAreProjectionsPlusFullSquareAttention) {
  // Whole heads fit the scratch at these shapes (checked below), so each
  // head's scores and context cover the full seq × seq square.
  struct Case {
    ModelSpec model;
    int examples, seq;
  };
  const std::vector<Case> cases = {{Zoo("opt-1.3b"), 1, 2048},
                                   {Zoo("opt-tiny"), 3, 64},
                                   {Zoo("llama-tiny"), 2, 64},
                                   {Zoo("qwen3-tiny"), 2, 64}};
  for (const Case& c : cases) {
    for (DType dtype : {FP32, FP16}) {
      const KernelPlan plan =
          PlanOf(c.model, ForwardOp(BLOCK_FORWARD, c.examples, c.seq), dtype);
      const Kernel* scores = FindKernel(plan, "attention scores");
      ASSERT_NE(scores, nullptr) << c.model.name();
      EXPECT_EQ(scores->m, c.seq) << c.model.name();
      EXPECT_EQ(scores->n, c.seq) << c.model.name();
      EXPECT_EQ(scores->k, HeadDim(c.model)) << c.model.name();
      EXPECT_DOUBLE_EQ(GemmFlops(plan), WholeHeadGemmFlops(c.model, c.examples, c.seq))
          << c.model.name() << " " << DType_Name(dtype);
    }
  }
}

TEST(ZoschedCudaPlan, Opt13bAtSeq2048RunsOneHeadPerCall) {
  // FP16: the scratch past q | k | v is T·h + seq² elements of 2 bytes,
  // exactly one head's 2048 × 2048 fp32 scores.
  const ModelSpec model = Zoo("opt-1.3b");
  const KernelPlan plan = PlanOf(model, ForwardOp(BLOCK_FORWARD, 1, 2048), FP16);
  for (const std::string name : {"attention scores", "causal softmax", "attention context"}) {
    const Kernel* k = FindKernel(plan, name);
    ASSERT_NE(k, nullptr) << name;
    EXPECT_EQ(k->launches, 32) << name;
    EXPECT_EQ(k->batch, 1) << name;
  }
  // FP32: twice the scratch bytes, two heads per call.
  const KernelPlan fp32 = PlanOf(model, ForwardOp(BLOCK_FORWARD, 1, 2048), FP32);
  EXPECT_EQ(FindKernel(fp32, "attention scores")->batch, 2);
  EXPECT_EQ(FindKernel(fp32, "attention scores")->launches, 16);
  // A workspace 8 bytes past a 16-byte boundary leaves 8 bytes less than a
  // head: the heads go in chunks of 2047 and 1 query rows (n).
  ComputeOp shifted = ForwardOp(BLOCK_FORWARD, 1, 2048);
  shifted.mutable_workspace()->set_offset_bytes(8);
  int chunks = 0;
  for (const Kernel& k : PlanOf(model, shifted, FP16)) {
    if (k.name != "attention scores") continue;
    EXPECT_EQ(k.n, chunks == 0 ? 2047 : 1);
    EXPECT_EQ(k.m, chunks == 0 ? 2047 : 2048);  // the keys the chunk's rows see
    ++chunks;
  }
  EXPECT_EQ(chunks, 2);
}

TEST(ZoschedCudaPlan, ChunkedAttentionComputesTheTrapezoidOfEachChunk) {
  // h 64, seq 256, one example, FP16: the scratch holds 160 rows of 256
  // scores (BlockForwardWorkspaceElements 131072, q | k | v 49152:
  // 163840 bytes, 40960 floats), one head at a time.
  OptTestSizes sizes;
  sizes.hidden = 64;
  sizes.heads = 4;
  sizes.ffn = 256;
  sizes.max_positions = 256;
  const ModelSpec model = FamilyForTest(OPT, "opt-chunked", sizes);
  const KernelPlan plan = PlanOf(model, ForwardOp(BLOCK_FORWARD, 1, 256), FP16);
  std::vector<std::pair<int64_t, int64_t>> chunks;  // (keys, rows): cuBLAS's m, n
  for (const Kernel& k : plan) {
    if (k.name != "attention scores") continue;
    EXPECT_EQ(k.batch, 1);
    EXPECT_EQ(k.launches, 4);  // per head
    chunks.emplace_back(k.m, k.n);
  }
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0], std::make_pair(int64_t{160}, int64_t{160}));
  EXPECT_EQ(chunks[1], std::make_pair(int64_t{256}, int64_t{96}));
  const double attention = 2.0 * 2.0 * 4 * HeadDim(model) * (160 * 160 + 96 * 256);
  EXPECT_DOUBLE_EQ(GemmFlops(plan), 2.0 * 256 * BlockMatrixElements(model) + attention);
  EXPECT_LT(GemmFlops(plan), WholeHeadGemmFlops(model, 1, 256));
}

TEST(ZoschedCudaPlan, OptBlockPerturbsEachMatrixJustBeforeItsGemm) {
  const KernelPlan plan = PlanOf(Zoo("opt-tiny"), ForwardOp(BLOCK_FORWARD, 1, 16), FP16);
  // The vectors first, one launch each, in block order.
  const std::vector<std::string> vectors = {
      "self_attn_layer_norm.weight", "self_attn_layer_norm.bias", "self_attn.q_proj.bias",
      "self_attn.k_proj.bias",       "self_attn.v_proj.bias",     "self_attn.out_proj.bias",
      "final_layer_norm.weight",     "final_layer_norm.bias",     "fc1.bias",
      "fc2.bias"};
  ASSERT_GT(plan.size(), vectors.size());
  for (size_t i = 0; i < vectors.size(); ++i) {
    EXPECT_EQ(plan[i].name, "perturb " + vectors[i]);
  }
  EXPECT_EQ(plan[vectors.size()].name, "attention norm");
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"perturb self_attn.q_proj.weight", "q projection"},
      {"perturb self_attn.k_proj.weight", "k projection"},
      {"perturb self_attn.v_proj.weight", "v projection"},
      {"perturb self_attn.out_proj.weight", "o projection"},
      {"perturb fc1.weight", "up projection"},
      {"perturb fc2.weight", "down projection"}};
  for (const auto& [perturb, gemm] : pairs) {
    bool found = false;
    for (size_t i = 0; i + 1 < plan.size(); ++i) {
      if (plan[i].name != perturb) continue;
      found = true;
      EXPECT_EQ(plan[i + 1].name, gemm);
    }
    EXPECT_TRUE(found) << perturb;
  }
  ASSERT_NE(FindKernel(plan, "up bias + relu"), nullptr);
  EXPECT_EQ(FindKernel(plan, "rotary q"), nullptr);
}

TEST(ZoschedCudaPlan, FamiliesLaunchTheirOwnKernels) {
  const std::vector<ModelSpec> models = EveryFamily();
  const KernelPlan gpt2 = PlanOf(models[1], ForwardOp(BLOCK_FORWARD, 1, 32), FP16);
  EXPECT_NE(FindKernel(gpt2, "qkv projection"), nullptr);
  EXPECT_EQ(FindKernel(gpt2, "q projection"), nullptr);
  EXPECT_NE(FindKernel(gpt2, "up bias + gelu"), nullptr);

  const KernelPlan llama = PlanOf(models[2], ForwardOp(BLOCK_FORWARD, 1, 32), FP16);
  EXPECT_NE(FindKernel(llama, "rotary q"), nullptr);
  EXPECT_NE(FindKernel(llama, "rotary k"), nullptr);
  EXPECT_NE(FindKernel(llama, "swiglu"), nullptr);
  EXPECT_EQ(FindKernel(llama, "q bias"), nullptr);  // no biases, no bias pass

  const KernelPlan qwen2 = PlanOf(models[3], ForwardOp(BLOCK_FORWARD, 1, 32), FP16);
  EXPECT_NE(FindKernel(qwen2, "q bias"), nullptr);
  EXPECT_EQ(FindKernel(qwen2, "o bias"), nullptr);

  const KernelPlan qwen3 = PlanOf(models[4], ForwardOp(BLOCK_FORWARD, 1, 32), FP16);
  EXPECT_NE(FindKernel(qwen3, "q-norm + rotary"), nullptr);
  EXPECT_NE(FindKernel(qwen3, "k-norm + rotary"), nullptr);
  // Qwen3's queries are 2h wide: the o projection reads them.
  EXPECT_EQ(FindKernel(qwen3, "o projection")->k, QueryWidth(models[4]));
  EXPECT_EQ(FindKernel(qwen3, "o projection")->k, 2 * models[4].hidden_size());

  // A rotary model without project_in copies its perturbed token rows.
  const KernelPlan embed = PlanOf(models[2], ForwardOp(EMBED, 1, 32), FP16);
  EXPECT_NE(FindKernel(embed, "copy token rows to activations"), nullptr);
  EXPECT_EQ(FindKernel(embed, "perturb position rows"), nullptr);
}

TEST(ZoschedCudaPlan, UpdateReadsAndWritesEachElementOnceAndGeneratesItsZ) {
  ComputeOp op;
  op.set_kind(UPDATE);
  op.mutable_params()->set_part(DECODER_BLOCK);
  op.mutable_params()->set_elements(1000003);
  op.mutable_zo_state()->set_size_bytes(16);
  for (DType dtype : {FP32, FP16, BF16}) {
    const KernelPlan plan = PlanOf(Zoo("opt-1.3b"), op, dtype);
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0].kind, KernelKind::kMemory);
    EXPECT_EQ(plan[0].launches, 1);
    // θ read and written at the compute dtype, the 16-byte ZoState read.
    EXPECT_DOUBLE_EQ(plan[0].bytes, 2.0 * 1000003 * DTypeBytes(dtype) + 16);
    EXPECT_DOUBLE_EQ(plan[0].normal_elements, 1000003);
  }
}

TEST(ZoschedCudaPlan, HeadLossTakesItsLabelWordsFromThePerturbedRange) {
  const ModelSpec model = Zoo("opt-1.3b");  // tied head: the final norm is the head part
  ComputeOp op = ForwardOp(HEAD_LOSS, 4, 128);
  const int64_t final_norm = 2 * model.hidden_size();
  op.mutable_perturbed()->set_size_bytes((final_norm + 3 * model.hidden_size()) * 2);
  const KernelPlan plan = PlanOf(model, op, FP16);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_DOUBLE_EQ(plan[0].normal_elements, final_norm);
  EXPECT_DOUBLE_EQ(plan[1].normal_elements, 3 * model.hidden_size());  // 3 label rows

  op.mutable_perturbed()->set_size_bytes((final_norm + 3 * model.hidden_size() + 1) * 2);
  EXPECT_EQ(ZoschedCudaPlan(model, op, FP16, Peft()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ZoschedCudaPlan, RefusesWhatTheBackendDoesNotRun) {
  const ModelSpec model = Zoo("opt-tiny");
  ComputeOp first_order = ForwardOp(TRAIN_BLOCK_FORWARD, 1, 16);
  EXPECT_EQ(ZoschedCudaPlan(model, first_order, FP16, Peft()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ZoschedCudaPlan(model, ForwardOp(BLOCK_FORWARD, 1, 16), DTYPE_UNSPECIFIED, Peft())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ZoschedCudaPlan(model, ForwardOp(BLOCK_FORWARD, 0, 16), FP16, Peft()).status().code(),
            absl::StatusCode::kInvalidArgument);
}


Schedule Lower(const ModelSpec& model, StrategyKind strategy, int batch, int seq,
               DType compute, DType wire) {
  const Cluster cluster = OneGpuClusterForTest();
  LowerOptions options;
  options.strategy = strategy;
  TrainingSettings& t = options.training;
  t.set_batch_size(batch);
  t.set_seq_len(seq);
  t.set_epsilon(1e-3);
  t.set_learning_rate(1e-6);
  t.set_seed_policy(SEED_FROM_STEP);
  t.set_num_label_words(2);
  t.set_compute_dtype(compute);
  t.set_wire_dtype(wire);
  t.set_host_dtype(wire);
  absl::StatusOr<Schedule> s = LowerSchedule(model, cluster, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : Schedule();
}

// The lowering costs a BLOCK_FORWARD as BlockForwardFlopsPerToken · tokens:
// 2·M per token for the projections and 4·seq·q for attention over the full
// score square, nothing for norms, softmax, biases, activations or the
// perturbation. The plan's GEMMs compute exactly that when whole heads fit
// the attention scratch (they do here), fewer when it runs in row chunks;
// the plan's other FLOPs are the lowering's omissions, reported below.
TEST(ZoschedCudaPlan, AgreesWithTheLoweredOps) {
  struct Case {
    ModelSpec model;
    StrategyKind strategy;
    int batch, seq;
    DType compute, wire;
  };
  const std::vector<Case> cases = {{Zoo("opt-1.3b"), MEZO, 1, 2048, FP16, FP16},
                                   {Zoo("qwen3-tiny"), MEZO, 4, 64, BF16, BF16},
                                   {Zoo("llama-tiny"), ZO2, 2, 64, FP32, FP16}};
  for (const Case& c : cases) {
    const Schedule s = Lower(c.model, c.strategy, c.batch, c.seq, c.compute, c.wire);
    int forwards = 0, casts = 0;
    for (const Op& op : s.ops()) {
      if (!op.has_compute()) continue;
      const ComputeOp& compute = op.compute();
      const KernelPlan plan = PlanOf(c.model, compute, c.compute);
      ExpectWellFormed(plan, c.model.name() + " " + op.name());
      if (compute.kind() == BLOCK_FORWARD) {
        const double gemm = GemmFlops(plan);
        EXPECT_DOUBLE_EQ(gemm, compute.flops()) << op.name();
        if (forwards++ == 0) {
          std::printf("%s %s: plan %.6g FLOPs (GEMMs %.6g), lowering %.6g: +%.3f%%\n",
                      c.model.name().c_str(), op.name().c_str(), PlanFlops(plan), gemm,
                      static_cast<double>(compute.flops()),
                      100 * (PlanFlops(plan) / compute.flops() - 1));
        }
      }
      if (compute.kind() == UPDATE) {
        // The lowering counts θ's two passes; the plan adds the ZoState.
        EXPECT_DOUBLE_EQ(PlanBytes(plan), compute.bytes_accessed() + 16) << op.name();
      }
      if (compute.kind() == CAST) {
        ++casts;
        EXPECT_DOUBLE_EQ(PlanBytes(plan), compute.bytes_accessed()) << op.name();
      }
    }
    EXPECT_EQ(forwards, 2 * c.model.num_layers()) << c.model.name();
    EXPECT_EQ(casts > 0, c.compute != c.wire) << c.model.name();
  }
}

// Under LoRA or a prefix the embedding and the head are frozen: they copy
// and gather instead of perturbing, and draw no z.
void ExpectFrozenEmbedAndHead(const ModelSpec& model, const Peft& peft) {
  for (ComputeKind kind : {EMBED, HEAD_LOSS}) {
    ComputeOp frozen = ForwardOp(kind, 2, 128);
    frozen.mutable_perturbed()->set_size_bytes(
        2 * (CountElements(FinalNormTensors(model)) + 2 * EmbedDim(model)));
    absl::StatusOr<KernelPlan> plan = ZoschedCudaPlan(model, frozen, FP16, peft);
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (const Kernel& k : *plan) {
      EXPECT_EQ(k.normal_elements, 0) << PeftLabel(peft) << " " << ComputeKind_Name(kind) << " "
                                      << k.name;
    }
  }
}

// The block's perturbation under adapters: one launch, over the
// ADAPTER_PART's elements only.
void ExpectPerturbsOnlyTheAdapters(const ModelSpec& model, const Peft& peft,
                                   const KernelPlan& plan) {
  double normals = 0;
  int perturbs = 0;
  for (const Kernel& k : plan) {
    normals += k.normal_elements * k.launches;
    perturbs += k.name.rfind("perturb", 0) == 0;
  }
  EXPECT_EQ(perturbs, 1) << PeftLabel(peft);
  EXPECT_EQ(normals, AdapterParams(model, peft)) << PeftLabel(peft);
}

// LoRA: the block is read as stored (no weight perturbed), its adapters are
// perturbed in one launch, each adapted projection adds two GEMMs of rank r
// and a scaling pass, and the embedding and head copy instead of
// perturbing.
TEST(ZoschedCudaPlanTest, LoraPerturbsOnlyTheAdapters) {
  const ModelSpec model = Zoo("opt-125m");
  const Peft peft = LoraPeft(8, 16);
  const int64_t examples = 2, seq = 128, tokens = examples * seq, h = model.hidden_size();
  ComputeOp op = ForwardOp(BLOCK_FORWARD, examples, seq);
  absl::StatusOr<KernelPlan> lora = ZoschedCudaPlan(model, op, FP16, peft);
  ASSERT_TRUE(lora.ok()) << lora.status();
  ExpectPerturbsOnlyTheAdapters(model, peft, *lora);
  int lora_gemms = 0;
  for (const Kernel& k : *lora) {
    lora_gemms += k.kind == KernelKind::kGemm && k.name.find(" lora_") != std::string::npos;
  }
  EXPECT_EQ(lora_gemms, 4);  // A and B of query and value
  // The adapters add 2·T·r·(in + out) per adapted projection to the GEMMs.
  EXPECT_DOUBLE_EQ(GemmFlops(*lora) - GemmFlops(PlanOf(model, op, FP16)),
                   2.0 * 2.0 * tokens * 8 * (h + h));
  ExpectFrozenEmbedAndHead(model, peft);
}

// Index of the first kernel named `name` in `plan`, or -1.
int IndexOf(const KernelPlan& plan, const std::string& name) {
  for (size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// Launches of the kernels named `name`.
int64_t LaunchesOf(const KernelPlan& plan, const std::string& name) {
  int64_t launches = 0;
  for (const Kernel& k : plan) {
    if (k.name == name) launches += k.launches;
  }
  return launches;
}

// Σ_{i = k}^{k + seq - 1} (i + 1): the scores the softmax reads for one
// head of one example joined behind a prefix of k (row i >= k, position
// i - k, sees keys 0 .. i; the k prefix rows read none).
double JoinedVisibleScores(int64_t k, int64_t seq) {
  return static_cast<double>(k + seq) * (k + seq + 1) / 2 - static_cast<double>(k) * (k + 1) / 2;
}

// The join's bytes for one example behind a prefix of k (prefix_join.h):
// it reads the example's seq rows of q | kv | kv and the prefix's keys and
// values, and writes k + seq dense rows of q | kv | kv, at c bytes each.
double JoinBytes(int64_t k, int64_t seq, int64_t q, int64_t kv, int64_t c) {
  return (seq * (q + 2 * kv) + 2 * k * kv + (k + seq) * (q + 2 * kv)) * static_cast<double>(c);
}

// A prefix of k tokens, as the backend's attention.cc runs it: each
// example on its own, joined behind k rows (one join launch), attention
// over its k + seq rows (the k zero query rows too), its context copied
// back (one 2-D copy launch). The block is read as stored and its 2·k·kv
// prefix elements are perturbed in one launch. Here whole heads fit the
// scratch, which a prefix leaves as it is (q | k | v 256 · 2304 of the
// 983040 elements: 196608 floats, 10 heads of 133 × 136 scores a call,
// where without a prefix 12 heads of 128 × 128 fit).
TEST(ZoschedCudaPlanTest, PrefixRunsEachExampleJoinedBehindItsKRows) {
  const ModelSpec model = Zoo("opt-125m");
  const int64_t k = 5, examples = 2, seq = 128, tokens = examples * seq;
  const int64_t heads = model.num_heads(), d = HeadDim(model);
  const int64_t q = QueryWidth(model), kv = KvWidth(model), c = 2;
  const Peft peft = PrefixPeft(k);
  const ComputeOp op = ForwardOp(BLOCK_FORWARD, examples, seq);
  absl::StatusOr<KernelPlan> prefix = ZoschedCudaPlan(model, op, FP16, peft);
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  ExpectWellFormed(*prefix, "prefix k5");
  ExpectPerturbsOnlyTheAdapters(model, peft, *prefix);
  EXPECT_EQ(AdapterParams(model, peft), 2 * k * kv);

  // Per example: the join, then the attention's steps, then the copy back,
  // o_proj after them.
  const int join = IndexOf(*prefix, "join prefix and example rows");
  const int copy = IndexOf(*prefix, "copy context rows back");
  ASSERT_GE(join, 0);
  ASSERT_GE(copy, 0);
  EXPECT_EQ((*prefix)[join + 1].name, "attention scores");
  EXPECT_EQ((*prefix)[copy - 1].name, "attention context");
  EXPECT_EQ((*prefix)[copy + 1].name, "o projection");
  EXPECT_EQ((*prefix)[join].launches, examples);
  EXPECT_EQ((*prefix)[copy].launches, examples);
  EXPECT_DOUBLE_EQ((*prefix)[join].bytes, JoinBytes(k, seq, q, kv, c));
  EXPECT_DOUBLE_EQ((*prefix)[copy].bytes, 2.0 * seq * q * c);  // seq rows of q, read and written

  // Every score and context product is a whole head's (k + seq) square:
  // calls of 10 heads, then of 2, per example.
  int64_t score_heads = 0, context_heads = 0;
  for (const Kernel& kernel : *prefix) {
    if (kernel.name == "attention scores") {
      EXPECT_EQ(kernel.m, k + seq);
      EXPECT_EQ(kernel.n, k + seq);
      EXPECT_EQ(kernel.k, d);
      EXPECT_EQ(kernel.launches, examples);
      score_heads += kernel.batch * kernel.launches;
    } else if (kernel.name == "attention context") {
      EXPECT_EQ(kernel.m, d);
      EXPECT_EQ(kernel.n, k + seq);
      EXPECT_EQ(kernel.k, k + seq);
      context_heads += kernel.batch * kernel.launches;
    }
  }
  EXPECT_EQ(score_heads, examples * heads);
  EXPECT_EQ(context_heads, examples * heads);
  EXPECT_EQ(FindKernel(*prefix, "attention scores")->batch, 10);
  EXPECT_EQ(LaunchesOf(*prefix, "causal softmax"), 2 * examples);
  EXPECT_DOUBLE_EQ(GemmFlops(*prefix), 2.0 * tokens * BlockMatrixElements(model) +
                                           2.0 * 2.0 * examples * heads * (k + seq) * (k + seq) *
                                               d);
  // The softmax reads the scores of the real query rows, writes every row
  // (the prefix's rows as 0), and reads the example's length per launch.
  const double visible = examples * heads * JoinedVisibleScores(k, seq);
  EXPECT_DOUBLE_EQ(FlopsOf(*prefix, "causal softmax"), 5.0 * visible);
  double softmax_bytes = 0;
  for (const Kernel& kernel : *prefix) {
    if (kernel.name == "causal softmax") softmax_bytes += kernel.bytes * kernel.launches;
  }
  EXPECT_DOUBLE_EQ(softmax_bytes, 4.0 * visible +
                                      static_cast<double>(examples) * heads * (k + seq) *
                                          (k + seq) * c +
                                      4.0 * 2 * examples);

  // Without a prefix: no join, no copy back, the batch's whole heads.
  const KernelPlan full = PlanOf(model, op, FP16);
  EXPECT_EQ(FindKernel(full, "join prefix and example rows"), nullptr);
  EXPECT_EQ(FindKernel(full, "copy context rows back"), nullptr);
  EXPECT_EQ(FindKernel(full, "attention scores")->batch, heads);
  ExpectFrozenEmbedAndHead(model, peft);
}

// Every family (grouped-query heads, GPT-2's fused q | k | v rows, Qwen3's
// wider queries) and compute dtype: the join moves dense rows of
// QueryWidth and KvWidth, and the products cover (k + seq)² per head.
TEST(ZoschedCudaPlanTest, PrefixJoinsDenseRowsOfEveryFamily) {
  const int64_t k = 3, examples = 2, seq = 48;
  for (const ModelSpec& model : EveryFamily()) {
    for (DType dtype : {FP32, FP16, BF16}) {
      const std::string what = model.name() + " " + DType_Name(dtype);
      const int64_t q = QueryWidth(model), kv = KvWidth(model), c = DTypeBytes(dtype);
      absl::StatusOr<KernelPlan> plan =
          ZoschedCudaPlan(model, ForwardOp(BLOCK_FORWARD, examples, seq), dtype, PrefixPeft(k));
      ASSERT_TRUE(plan.ok()) << what << ": " << plan.status();
      ExpectWellFormed(*plan, what);
      const Kernel* join = FindKernel(*plan, "join prefix and example rows");
      const Kernel* copy = FindKernel(*plan, "copy context rows back");
      ASSERT_NE(join, nullptr) << what;
      ASSERT_NE(copy, nullptr) << what;
      EXPECT_DOUBLE_EQ(join->bytes, JoinBytes(k, seq, q, kv, c)) << what;
      EXPECT_DOUBLE_EQ(copy->bytes, 2.0 * seq * q * c) << what;
      const double square = 2.0 * examples * model.num_heads() * (k + seq) * (k + seq) *
                            HeadDim(model);
      EXPECT_DOUBLE_EQ(FlopsOf(*plan, "attention scores"), square) << what;
      EXPECT_DOUBLE_EQ(FlopsOf(*plan, "attention context"), square) << what;
    }
  }
}

// One head per call in chunks of query rows: the joined example's rows of
// k + seq scores, in the scratch a prefix leaves as it is.
TEST(ZoschedCudaPlanTest, PrefixChunksEachJoinedExampleInTheSameScratch) {
  // As ChunkedAttentionComputesTheTrapezoidOfEachChunk's model (d 16), two
  // examples: q | k | v take 98304 of the 196608 elements, leaving 49152
  // floats: 186 rows of 264 (5 + 256 rounded up to 4) scores, so chunks
  // [0, 186) and [186, 261) of the joined rows.
  OptTestSizes sizes;
  sizes.hidden = 64;
  sizes.heads = 4;
  sizes.ffn = 256;
  sizes.max_positions = 512;
  const ModelSpec model = FamilyForTest(OPT, "opt-chunked", sizes);
  const int64_t k = 5, examples = 2, seq = 256;
  absl::StatusOr<KernelPlan> plan =
      ZoschedCudaPlan(model, ForwardOp(BLOCK_FORWARD, examples, seq), FP16, PrefixPeft(k));
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<std::pair<int64_t, int64_t>> chunks;  // (keys, rows): cuBLAS's m, n
  for (const Kernel& kernel : *plan) {
    if (kernel.name != "attention scores") continue;
    EXPECT_EQ(kernel.batch, 1);
    EXPECT_EQ(kernel.launches, examples * 4);  // per example and head
    chunks.emplace_back(kernel.m, kernel.n);
  }
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0], std::make_pair(int64_t{186}, int64_t{186}));
  EXPECT_EQ(chunks[1], std::make_pair(int64_t{261}, int64_t{75}));
  EXPECT_EQ(LaunchesOf(*plan, "join prefix and example rows"), examples);
  EXPECT_EQ(LaunchesOf(*plan, "copy context rows back"), examples);
  const double attention = 2.0 * 2.0 * examples * 4 * HeadDim(model) * (186 * 186 + 75 * 261);
  EXPECT_DOUBLE_EQ(GemmFlops(*plan),
                   2.0 * examples * seq * BlockMatrixElements(model) + attention);
  // Per example and head, the real rows 5 .. 260 read 6 .. 261 scores.
  EXPECT_DOUBLE_EQ(FlopsOf(*plan, "causal softmax"),
                   5.0 * examples * 4 * JoinedVisibleScores(k, seq));
  EXPECT_DOUBLE_EQ(JoinedVisibleScores(k, seq), 261 * 262 / 2 - 15);
}

}  // namespace
}  // namespace zosched
