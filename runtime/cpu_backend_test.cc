// The CPU backend's compute ops against the reference math of runtime/nn:
// a whole MeZO step executed op by op through the backend gives bitwise the
// losses, hidden states and projected gradient that nn's Embed,
// BlockForward and HeadLoss give on the perturbed parameters, and the next
// step's fused updates give bitwise ZO-SGD's update (with several
// directions, n-SPSA's: each direction's forwards along its own z, the
// update averaging them). For opt-tiny, the tiny
// model of every other family, and OPT-350m's embedding and head
// (word_embed_proj_dim 512 ≠ hidden 1024: project_in and project_out, no
// final norm). Under LoRA or a prefix: the base read unperturbed, only the
// adapters (runtime/nn/block_lora.h's term) or the prefix
// (runtime/nn/block_prefix.h) perturbed and updated, the base bitwise
// unchanged.
#include "runtime/cpu_backend.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/model_spec.h"
#include "models/model_zoo.h"
#include "runtime/model_parts.h"
#include "runtime/model_state.h"
#include "models/adapters.h"
#include "runtime/nn/block_lora.h"
#include "runtime/nn/block_prefix.h"
#include "runtime/nn/decoder_forward.h"
#include "runtime/zo/normal.h"
#include "runtime/zo/zo_math.h"
#include "schedule/cluster_catalog.h"
#include "schedule/lowering.h"

namespace zosched {
namespace {

constexpr int kBatch = 2;
constexpr int kSeq = 8;
constexpr uint64_t kSeed = 0x5eed;
constexpr float kLearningRate = 1e-3f;
const std::vector<int32_t> kLabelWords = {3, 7};

// Perturbs a whole part with the per-element math directly (not through
// runtime/zo_ranges.h): θ ± εz, z = normal(seed, stream, element).
std::vector<float> PerturbedPart(const std::vector<float>& theta, uint64_t seed, uint32_t stream,
                                 float eps, int sign) {
  std::vector<float> z(theta.size()), out(theta.size());
  FillNormals(seed, stream, 0, z.size(), z.data());
  for (size_t i = 0; i < theta.size(); ++i) out[i] = Perturbed(theta[i], z[i], eps, sign);
  return out;
}

class BackendStep {
 public:
  // A MeZO step of `model` with `directions` perturbation directions,
  // training what `peft` says.
  explicit BackendStep(const ModelSpec& model, int directions = 1, const Peft& peft = Peft()) {
    absl::StatusOr<Cluster> cluster = LoadCluster("local_cpu");
    EXPECT_TRUE(cluster.ok()) << cluster.status();
    LowerOptions options;
    options.strategy = MEZO;
    options.training = DefaultTrainingSettings();
    options.training.set_batch_size(kBatch);
    options.training.set_seq_len(kSeq);
    options.training.set_weight_decay(0.1);
    if (directions > 1) options.training.set_directions(directions);
    *options.training.mutable_peft() = peft;
    absl::StatusOr<Schedule> lowered = LowerSchedule(model, *cluster, options);
    EXPECT_TRUE(lowered.ok()) << lowered.status();
    schedule_ = *lowered;
    absl::StatusOr<std::unique_ptr<CpuBackend>> backend =
        CpuBackend::Create(schedule_, 0, kLabelWords, nullptr, nullptr);
    EXPECT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(*backend);
    absl::StatusOr<std::vector<StoredPart>> parts = StoredParts(schedule_, 0, *backend_);
    EXPECT_TRUE(parts.ok()) << parts.status();
    parts_ = *parts;
    for (const StoredPart& part : parts_) {
      std::vector<float> values(part.elements());
      InitPart(part, /*seed=*/3, values.data());
      // LoRA starts B at 0; a non-zero B makes its adapters count.
      if (TrainsAdapters(peft) && part.name.rfind("adapters", 0) == 0) {
        for (size_t i = 0; i < values.size(); ++i) values[i] += 0.01f * ((i % 7) - 3.0f);
      }
      StorePart(part, values.data());
    }
    // Deterministic inputs: tokens spread over the vocabulary, the second
    // example shorter (its padding must not matter).
    for (int i = 0; i < kBatch * kSeq; ++i) {
      tokens_.push_back(static_cast<int32_t>((i * 7919 + 13) % model.vocab_size()));
    }
    lengths_ = {kSeq, kSeq - 3};
    labels_ = {1, 0};
  }

  const Schedule& schedule() const { return schedule_; }
  const ModelSpec& model() const { return schedule_.model(); }

  // Which part the p-th stored part is: the embedding, the blocks, the head,
  // then (LoRA) every block's adapters.
  std::pair<Part, int> PartOf(size_t p) const {
    const size_t layers = model().num_layers();
    if (p == 0) return {EMBEDDING_PART, 0};
    if (p <= layers) return {DECODER_BLOCK, static_cast<int>(p - 1)};
    if (p == layers + 1) return {HEAD_PART, 0};
    return {ADAPTER_PART, static_cast<int>(p - layers - 2)};
  }

  // The stored values of every part (StoredParts' order), fp32.
  std::vector<std::vector<float>> Parameters() const {
    std::vector<std::vector<float>> values;
    for (const StoredPart& part : parts_) {
      values.emplace_back(part.elements());
      std::memcpy(values.back().data(), part.data, part.elements() * sizeof(float));
    }
    return values;
  }

  // Runs every op of the step through the backend, in schedule order (a
  // MeZO schedule has one device and one stream).
  void RunStep(uint64_t seed) {
    StepInputs inputs;
    inputs.seed = seed;
    inputs.learning_rate = kLearningRate;
    inputs.tokens = tokens_.data();
    inputs.lengths = lengths_.data();
    inputs.labels = labels_.data();
    StepResult result;
    for (const Op& op : schedule_.ops()) {
      ASSERT_TRUE(op.has_compute()) << op.name();
      absl::Status status = backend_->RunCompute(op, inputs, &result);
      ASSERT_TRUE(status.ok()) << status;
    }
  }

  // The floats of `range` as the backend holds them.
  const float* Data(const BufferRange& range) const {
    for (int b = 0; b < schedule_.buffers_size(); ++b) {
      if (schedule_.buffers(b).name() == range.buffer()) {
        return reinterpret_cast<const float*>(backend_->HostView(b) + range.offset_bytes());
      }
    }
    ADD_FAILURE() << "no buffer " << range.buffer();
    return nullptr;
  }

  // The HEAD_LOSS op of `sign` along `direction` (one micro-batch).
  const ComputeOp& HeadLossOp(int direction, Sign sign) const {
    for (const Op& op : schedule_.ops()) {
      const ComputeOp& c = op.compute();
      if (c.kind() == HEAD_LOSS && c.sign() == sign && c.direction() == direction) return c;
    }
    ADD_FAILURE() << "no HEAD_LOSS";
    return ComputeOp::default_instance();
  }

  // The reference forward of `sign` along the z of `seed` over the batch
  // from `params` (as Parameters() returns them): final hidden states and
  // per-example losses.
  void Reference(const std::vector<std::vector<float>>& params, uint64_t seed, Sign sign,
                 std::vector<float>* hidden, std::vector<float>* losses) const {
    const ModelSpec& m = model();
    const Peft& peft = schedule_.training().peft();
    const bool lora = TrainsAdapters(peft);
    const float eps = schedule_.training().epsilon();
    const int s = sign == MINUS ? -1 : 1;
    const int layers = m.num_layers();
    // θ ± εz of a trained part; a frozen one (LoRA's base) as it is.
    auto perturbed = [&](const std::vector<float>& theta, Part part, int block) {
      return lora && part != ADAPTER_PART ? theta
                                          : PerturbedPart(theta, seed, PartStream(m, part, block),
                                                          eps, s);
    };
    const std::vector<float> embedding = perturbed(params[0], EMBEDDING_PART, 0);
    hidden->assign(static_cast<size_t>(kBatch) * kSeq * m.hidden_size(), 0.0f);
    Embed(m, embedding.data(), tokens_.data(), kBatch, kSeq, hidden->data(), PrefixTokens(peft));
    std::vector<float> workspace(BlockWorkspaceFloats(m, kBatch, kSeq));
    for (int b = 0; b < layers; ++b) {
      const std::vector<float> block = perturbed(params[1 + b], DECODER_BLOCK, b);
      if (!lora) {
        BlockForward(m, block.data(), lengths_.data(), kBatch, kSeq, hidden->data(),
                     workspace.data());
        continue;
      }
      const std::vector<float> adapters = perturbed(params[2 + layers + b], ADAPTER_PART, b);
      PartWeights weights(block.data());
      if (TrainsLora(peft)) {
        const BlockLora adapted = MakeBlockLora(m, peft, adapters.data());
        BlockForward(m, weights, lengths_.data(), kBatch, kSeq, hidden->data(), workspace.data(),
                     nullptr, nullptr, &adapted);
      } else {
        const BlockPrefix prefix = MakeBlockPrefix(m, peft, adapters.data());
        BlockForward(m, weights, lengths_.data(), kBatch, kSeq, hidden->data(), workspace.data(),
                     nullptr, nullptr, nullptr, &prefix);
      }
    }
    const std::vector<float> head = perturbed(params[1 + layers], HEAD_PART, 0);
    losses->assign(kBatch, 0.0f);
    HeadLoss(m, head.data(), embedding.data(), hidden->data(), lengths_.data(), kBatch, kSeq,
             kLabelWords.data(), kLabelWords.size(), labels_.data(), losses->data());
  }

  std::vector<ZoState> pending() const { return backend_->pending(); }

 private:
  Schedule schedule_;
  std::unique_ptr<CpuBackend> backend_;
  std::vector<StoredPart> parts_;
  std::vector<int32_t> tokens_, lengths_, labels_;
};

void ExpectBitwise(const float* got, const std::vector<float>& want, const std::string& what) {
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(std::memcmp(got, want.data(), want.size() * sizeof(float)), 0)
      << what << " differs from the nn reference (first values " << got[0] << " vs " << want[0]
      << ")";
}

// One step and the next one's updates, checked against the references:
// each direction's two passes, its g, and the update of all of them.
void CheckStepAgainstReference(BackendStep& step) {
  const int q = DirectionsOf(step.schedule().training());
  const std::vector<std::vector<float>> before = step.Parameters();
  step.RunStep(kSeed);
  const std::vector<ZoState> pending = step.pending();
  ASSERT_EQ(pending.size(), static_cast<size_t>(q));
  std::vector<float> g(q);
  for (int d = 0; d < q; ++d) {
    SCOPED_TRACE("direction " + std::to_string(d));
    std::vector<float> plus_loss, minus_loss;
    for (Sign sign : {PLUS, MINUS}) {
      std::vector<float> hidden, losses;
      step.Reference(before, DirectionSeed(kSeed, d), sign, &hidden, &losses);
      const ComputeOp& head = step.HeadLossOp(d, sign);
      ExpectBitwise(step.Data(head.activations()), hidden,
                    std::string("hidden states of the ") + Sign_Name(sign) + " pass");
      ExpectBitwise(step.Data(head.losses()), losses,
                    std::string("losses of the ") + Sign_Name(sign) + " pass");
      (sign == PLUS ? plus_loss : minus_loss) = losses;
    }
    EXPECT_EQ(pending[d].seed, DirectionSeed(kSeed, d));
    EXPECT_EQ(pending[d].learning_rate, kLearningRate);
    EXPECT_EQ(pending[d].g, ProjectedGradient(plus_loss.data(), minus_loss.data(), kBatch,
                                              step.schedule().training().epsilon()));
    g[d] = pending[d].g;
  }
  // The next step applies this update to every part first: θ - η(g z + λθ),
  // λ only where the tensor decays; with q directions, θ - η((1/q) Σ g_i z_i
  // + λθ).
  step.RunStep(kSeed + 1);
  const std::vector<std::vector<float>> after = step.Parameters();
  const ModelSpec& m = step.model();
  const Peft& peft = step.schedule().training().peft();
  const float lambda = step.schedule().training().weight_decay();
  for (size_t p = 0; p < before.size(); ++p) {
    const auto [part, block] = step.PartOf(p);
    if (TrainsAdapters(peft) && part != ADAPTER_PART) {
      ExpectBitwise(after[p].data(), before[p], "frozen part " + std::to_string(p));
      continue;
    }
    std::vector<std::vector<float>> z(q, std::vector<float>(before[p].size()));
    for (int d = 0; d < q; ++d) {
      FillNormals(DirectionSeed(kSeed, d), PartStream(m, part, block), 0, z[d].size(),
                  z[d].data());
    }
    std::vector<float> want(before[p].size()), zi(q);
    int64_t i = 0;
    for (const TensorSpec& t : PartTensors(m, part, block, peft)) {
      for (int64_t k = 0; k < t.elements(); ++k, ++i) {
        if (q == 1) {
          want[i] = Updated(before[p][i], z[0][i], kLearningRate, g[0], lambda, t.weight_decay());
          continue;
        }
        for (int d = 0; d < q; ++d) zi[d] = z[d][i];
        want[i] = UpdatedAlong(before[p][i], DirectionsMean(DirectionsSum(g.data(), zi.data(), q), q),
                               kLearningRate, lambda, t.weight_decay());
      }
    }
    ExpectBitwise(after[p].data(), want, "part " + std::to_string(p) + " after the update");
  }
}

TEST(CpuBackend, OptTinyStepMatchesTheNnReference) {
  absl::StatusOr<ModelSpec> model = LoadModelSpec("opt-tiny");
  ASSERT_TRUE(model.ok()) << model.status();
  BackendStep step(*model);
  CheckStepAgainstReference(step);
}

// The tiny model of every other family: GPT-2 (fused Conv1D attention,
// GELU, learned positions without offset), LLaMA (untied head: its label
// rows perturbed with the head part's z; rotary positions, so an EMBED
// without perturbed position rows; grouped-query attention), Qwen2 (q/k/v
// biases, tied) and Qwen3 (QK-norm, head_dim != h / heads).
// n-SPSA: three directions, each with its own z (DirectionSeed), g and
// share of the update.
TEST(CpuBackend, SeveralDirectionsMatchTheNnReference) {
  for (const char* name : {"opt-tiny", "llama-tiny"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<ModelSpec> model = LoadModelSpec(name);
    ASSERT_TRUE(model.ok()) << model.status();
    BackendStep step(*model, /*directions=*/3);
    CheckStepAgainstReference(step);
  }
}

// LoRA: the adapters of every target of OPT (and LLaMA's gated FFN),
// perturbed along one and along two directions; the base frozen.
TEST(CpuBackend, LoraStepMatchesTheNnReference) {
  for (const char* name : {"opt-tiny", "llama-tiny"}) {
    for (int q : {1, 2}) {
      SCOPED_TRACE(std::string(name) + " q " + std::to_string(q));
      absl::StatusOr<ModelSpec> model = LoadModelSpec(name);
      ASSERT_TRUE(model.ok()) << model.status();
      Peft peft;
      peft.set_kind(LORA);
      peft.set_lora_rank(3);
      peft.set_lora_alpha(6);
      for (LoraTarget t : {LORA_QUERY, LORA_KEY, LORA_VALUE, LORA_OUTPUT, LORA_UP, LORA_DOWN}) {
        peft.add_lora_targets(t);
      }
      if (model->activation() == SWIGLU) peft.add_lora_targets(LORA_GATE);
      BackendStep step(*model, q, peft);
      CheckStepAgainstReference(step);
    }
  }
}

// A prefix: its keys and values perturbed along one and along two
// directions, the real tokens at positions k + t, the base frozen.
TEST(CpuBackend, PrefixStepMatchesTheNnReference) {
  for (const char* name : {"opt-tiny", "llama-tiny", "gpt2-tiny"}) {
    for (int q : {1, 2}) {
      SCOPED_TRACE(std::string(name) + " q " + std::to_string(q));
      absl::StatusOr<ModelSpec> model = LoadModelSpec(name);
      ASSERT_TRUE(model.ok()) << model.status();
      Peft peft;
      peft.set_kind(PREFIX);
      peft.set_prefix_tokens(4);
      BackendStep step(*model, q, peft);
      CheckStepAgainstReference(step);
    }
  }
}

TEST(CpuBackend, EveryFamilysTinyStepMatchesTheNnReference) {
  for (const char* name : {"gpt2-tiny", "llama-tiny", "qwen2-tiny", "qwen3-tiny"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<ModelSpec> model = LoadModelSpec(name);
    ASSERT_TRUE(model.ok()) << model.status();
    BackendStep step(*model);
    CheckStepAgainstReference(step);
  }
}

// OPT-350m's embedding and head exactly (token table 50272 × 512, project_in
// 1024 × 512, project_out, no final norm), with one block; its blocks are
// post-norm, which the CPU runtime does not run, so the one block here is
// pre-norm (the embedding and head paths do not involve block norms).
TEST(CpuBackend, Opt350mEmbeddingAndHeadMatchTheNnReference) {
  absl::StatusOr<ModelSpec> model = LoadModelSpec("opt-350m");
  ASSERT_TRUE(model.ok()) << model.status();
  model->set_num_layers(1);
  model->set_norm_placement(PRE_NORM);
  model->set_weight_dtype(FP32);
  ASSERT_NE(EmbedDim(*model), model->hidden_size());
  BackendStep step(*model);
  CheckStepAgainstReference(step);
}

TEST(CpuBackend, RefusesWhatTheCpuRuntimeDoesNotRun) {
  absl::StatusOr<Cluster> cluster = LoadCluster("local_cpu");
  ASSERT_TRUE(cluster.ok());
  absl::StatusOr<ModelSpec> model = LoadModelSpec("opt-tiny");
  ASSERT_TRUE(model.ok());
  LowerOptions options;
  options.strategy = ZO2;
  options.training = DefaultTrainingSettings();
  absl::StatusOr<Schedule> schedule = LowerSchedule(*model, *cluster, options);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  absl::StatusOr<std::unique_ptr<CpuBackend>> backend =
      CpuBackend::Create(*schedule, 0, {3, 7, 9}, nullptr, nullptr);
  ASSERT_FALSE(backend.ok());
  EXPECT_NE(backend.status().message().find("the task has 3 label words but the schedule was "
                                            "lowered for 2"),
            std::string::npos)
      << backend.status();
  backend = CpuBackend::Create(*schedule, 0, {3, 100000}, nullptr, nullptr);
  ASSERT_FALSE(backend.ok());
  EXPECT_NE(backend.status().message().find("label word token 100000 is outside"),
            std::string::npos)
      << backend.status();
}

}  // namespace
}  // namespace zosched
