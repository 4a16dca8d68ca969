// Differential test of the GPU forward (decoder_forward_gpu.h) against the
// CPU reference (runtime/nn/decoder_forward.h) on small random models of
// every family — OPT (with and without project_in/out and a final norm, odd
// widths, OPT-125m's block), GPT-2 (fused Conv1D attention, GELU), LLaMA
// (RMSNorm, rotary with Llama-3.1 scaling, SwiGLU, grouped-query and
// multi-query attention, head_dim 128, untied head), Qwen2 (q/k/v biases),
// Qwen3 (QK-norm, q wider than h) — plus the GPU's own determinism: run to
// run, and an example's independence of the rest of its batch (both
// bitwise); the blocks with LoRA adapters on every projection
// (GpuBlockLora against runtime/nn/block_lora.h) for OPT and LLaMA; and the
// blocks over a prefix (GpuBlockPrefix against runtime/nn/block_prefix.h:
// learned positions read from row k on, rotary angles at positions k + t,
// grouped- and multi-query heads) for OPT, GPT-2, LLaMA and Qwen3; in FP32,
// FP16 and BF16 with the same tolerances. Built only under --config=cuda;
// the GPU tests skip when no GPU is visible.
//
// Tolerances. The CPU runs in fp32 on the parameters the GPU sees (rounded
// to the element type first), so only the activations' storage and the
// summation orders differ:
//  - FP32: every hidden state of a real position within 1e-4 · max(1, |cpu|)
//    (cuBLAS and Eigen sum in different orders, about 1e-6 per block);
//    losses within 1e-5 · max(1, |cpu|);
//  - FP16 / BF16 (activations rounded to 11 / 8 significant bits at each
//    store): the hidden states of real positions within a relative RMS
//    error of 2e-2 / 5e-2 (per element the rounding of small values makes
//    relative errors meaningless); losses within 2e-2 / 1e-1 · max(1, |cpu|).
#include "runtime/cuda/nn/decoder_forward_gpu.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "models/family_for_test.h"
#include "models/model_spec.h"
#include "models/model_zoo.h"
#include "runtime/cuda/device_test_util.h"
#include "runtime/cuda/nn/gemm.h"
#include "runtime/dtype/element.h"
#include "runtime/nn/decoder_forward.h"
#include "runtime/nn/param_layout.h"
#include "runtime/nn/rotary_table.h"

namespace zosched {
namespace {

const std::vector<int32_t> kLabelWords = {3, 17, 41};

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

const char* Name(ElementType type) {
  switch (type) {
    case ElementType::kF32: return "FP32";
    case ElementType::kF16: return "FP16";
    case ElementType::kBF16: return "BF16";
  }
  return "?";
}

// x rounded to `type` and widened back (exact for FP32).
float Rounded(ElementType type, float x) {
  switch (type) {
    case ElementType::kF16: return ToFloat(FromFloat<Half>(x));
    case ElementType::kBF16: return ToFloat(FromFloat<BFloat16>(x));
    case ElementType::kF32: break;
  }
  return x;
}

// Device memory, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) {
    if (bytes > 0) {
      EXPECT_EQ(cudaMalloc(&data_, bytes), cudaSuccess);
    }
  }
  DeviceBuffer(DeviceBuffer&& other) : data_(std::exchange(other.data_, nullptr)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) {
    std::swap(data_, other.data_);
    return *this;
  }
  ~DeviceBuffer() { cudaFree(data_); }
  void* get() const { return data_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
};

// n floats from `host` stored on the device as elements of `type`.
DeviceBuffer Upload(ElementType type, const float* host, int64_t n) {
  const size_t bytes = static_cast<size_t>(n) * ElementBytes(type);
  std::vector<char> staged(bytes);
  for (int64_t i = 0; i < n; ++i) {
    char* dst = staged.data() + i * ElementBytes(type);
    switch (type) {
      case ElementType::kF32: std::memcpy(dst, &host[i], 4); break;
      case ElementType::kF16: {
        const Half x = FromFloat<Half>(host[i]);
        std::memcpy(dst, &x, 2);
        break;
      }
      case ElementType::kBF16: {
        const BFloat16 x = FromFloat<BFloat16>(host[i]);
        std::memcpy(dst, &x, 2);
        break;
      }
    }
  }
  DeviceBuffer buffer(bytes);
  EXPECT_EQ(cudaMemcpy(buffer.get(), staged.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  return buffer;
}

DeviceBuffer UploadInts(const std::vector<int32_t>& host) {
  DeviceBuffer buffer(host.size() * sizeof(int32_t));
  EXPECT_EQ(
      cudaMemcpy(buffer.get(), host.data(), host.size() * sizeof(int32_t), cudaMemcpyHostToDevice),
      cudaSuccess);
  return buffer;
}

// n elements of `type` from the device, widened to float.
std::vector<float> Download(ElementType type, const void* device, int64_t n) {
  std::vector<char> staged(static_cast<size_t>(n) * ElementBytes(type));
  EXPECT_EQ(cudaMemcpy(staged.data(), device, staged.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i) {
    const char* src = staged.data() + i * ElementBytes(type);
    switch (type) {
      case ElementType::kF32: std::memcpy(&out[i], src, 4); break;
      case ElementType::kF16: {
        Half x;
        std::memcpy(&x, src, 2);
        out[i] = ToFloat(x);
        break;
      }
      case ElementType::kBF16: {
        BFloat16 x;
        std::memcpy(&x, src, 2);
        out[i] = ToFloat(x);
        break;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Models and batches.

ModelSpec Zoo(const std::string& name) {
  absl::StatusOr<ModelSpec> spec = LoadModelSpec(name);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : ModelSpec();
}

// opt-tiny's shape (h 64, 4 heads, f 256, 4 blocks, final norm).
ModelSpec OptTiny() { return Zoo("opt-tiny"); }

// opt-350m's embedding shape, shrunk: project_in / project_out (e 32 != h
// 48), no final norm; pre-norm (the runtime runs pre-norm blocks).
ModelSpec Opt350mShaped() {
  ModelSpec spec = OptTiny();
  spec.set_name("opt-350m-shaped");
  spec.set_hidden_size(48);
  spec.set_num_heads(3);
  spec.set_ffn_size(192);
  spec.set_num_layers(2);
  spec.set_vocab_size(100);
  spec.set_max_positions(32);
  spec.set_word_embed_proj_dim(32);
  spec.set_final_norm(false);
  return spec;
}

// Widths that are not multiples of a warp: h 200, 5 heads of d 40, f 600.
ModelSpec OddWidths() {
  ModelSpec spec = OptTiny();
  spec.set_name("odd-widths");
  spec.set_hidden_size(200);
  spec.set_num_heads(5);
  spec.set_ffn_size(600);
  spec.set_num_layers(1);
  spec.set_vocab_size(70);
  spec.set_max_positions(24);
  return spec;
}

// OPT-125m's block and head (h 768, 12 heads of d 64, f 3072, final norm),
// one block and a small vocabulary so the CPU reference stays quick.
ModelSpec Opt125mShaped() {
  ModelSpec spec = Zoo("opt-125m");
  spec.set_name("opt-125m-shaped");
  spec.set_num_layers(1);
  spec.set_vocab_size(1000);
  return spec;
}

// The zoo's tiny model of each other family (h 64, 4 heads, 4 blocks):
// GPT-2 (fused c_attn, Conv1D, GELU, learned positions, tied head); LLaMA
// (2 key/value heads, Llama-3.1 rotary scaling, untied head); Qwen2 (q/k/v
// biases, tied head); Qwen3 (QK-norm, head_dim 32: q 128 wide, untied).
ModelSpec Gpt2Tiny() { return Zoo("gpt2-tiny"); }
ModelSpec LlamaTiny() { return Zoo("llama-tiny"); }
ModelSpec Qwen2Tiny() { return Zoo("qwen2-tiny"); }
ModelSpec Qwen3Tiny() { return Zoo("qwen3-tiny"); }

// LLaMA-sized heads: d 128 (64 rotary pairs, one per thread of the head
// kernel), one key/value head for 4 query heads (multi-query attention).
ModelSpec LlamaWideHeads() {
  ModelSpec spec = FamilyForTest(LLAMA, "llama-wide-heads", {512, 1, 4, 1024, 300, 32});
  spec.set_num_kv_heads(1);
  return spec;
}

// Widths off the warp: Qwen3 with h 96, 6 heads of d 32 (q 192) on 3
// key/value heads, f 200; GPT-2 with h 120, 5 heads of d 24, f 360.
ModelSpec Qwen3OddWidths() {
  return FamilyForTest(QWEN3, "qwen3-odd-widths", {96, 1, 6, 200, 90, 24});
}
ModelSpec Gpt2OddWidths() {
  return FamilyForTest(GPT2, "gpt2-odd-widths", {120, 1, 5, 360, 90, 24});
}

bool IsNormWeight(TensorSlot slot) {
  return slot == TensorSlot::kAttnNormWeight || slot == TensorSlot::kFfnNormWeight ||
         slot == TensorSlot::kFinalNormWeight || slot == TensorSlot::kQNorm ||
         slot == TensorSlot::kKNorm;
}

bool IsTable(TensorSlot slot) {
  return slot == TensorSlot::kTokenTable || slot == TensorSlot::kPositionTable ||
         slot == TensorSlot::kLmHead;
}

// The flat fp32 parts of a model with random weights, rounded to `type`.
struct Model {
  ModelSpec spec;
  std::vector<float> embedding;
  std::vector<std::vector<float>> blocks;
  std::vector<float> head;
};

void Fill(const ModelSpec& spec, const PartLayout& layout, ElementType type, std::mt19937* rng,
          std::vector<float>* part) {
  part->assign(layout.total_floats, 0.0f);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const TensorSlice& t : layout.tensors) {
    // Matrices ~ N(0, 1/in) keep activations O(1) (in: the checkpoint's
    // second dimension, the first for Conv1D's [in, out]); tables ~
    // N(0, 0.3²) keep the label logits O(1-10); norms 1 + N(0, 0.1²),
    // biases N(0, 0.1²).
    const bool matrix = t.shape.size() == 2 && !IsTable(t.slot);
    const int64_t in = matrix ? (WeightsInOut(spec) ? t.shape[0] : t.shape[1]) : 1;
    const float scale = !matrix && !IsTable(t.slot) ? 0.1f
                        : IsTable(t.slot)           ? 0.3f
                                                    : 1.0f / std::sqrt(static_cast<float>(in));
    const float mean = IsNormWeight(t.slot) ? 1.0f : 0.0f;
    for (int64_t i = 0; i < t.elements(); ++i) {
      (*part)[t.offset + i] = Rounded(type, mean + scale * normal(*rng));
    }
  }
}

Model RandomModel(const ModelSpec& spec, ElementType type) {
  Model m;
  m.spec = spec;
  std::mt19937 rng(7);
  Fill(spec, EmbeddingPartLayout(spec), type, &rng, &m.embedding);
  m.blocks.resize(spec.num_layers());
  for (auto& block : m.blocks) Fill(spec, BlockPartLayout(spec), type, &rng, &block);
  Fill(spec, HeadPartLayout(spec), type, &rng, &m.head);
  return m;
}

// LoRA adapters on every projection of a block (the q, k, v, output, gate,
// up and down weights the model has: every LoraTarget), random and rounded
// to `type` like the model. B is random too (PEFT starts it at 0, which
// would leave nothing to compare). Each block's adapters lie in one flat
// vector, A [r, in] then B [out, r] per adapter, as in an ADAPTER_PART.
struct Lora {
  struct Adapter {
    TensorSlot base = TensorSlot::kUnspecified;
    int64_t in = 0, out = 0;
    int64_t a_offset = 0, b_offset = 0;  // in the block's flat vector
  };
  int64_t rank = 0;
  float scaling = 0;
  std::vector<Adapter> adapters;
  std::vector<std::vector<float>> blocks;  // per block
};

Lora RandomLora(const ModelSpec& spec, ElementType type, int64_t rank, float scaling) {
  Lora lora;
  lora.rank = rank;
  lora.scaling = scaling;
  const PartLayout layout = BlockPartLayout(spec);
  int64_t elements = 0;
  for (TensorSlot slot : {TensorSlot::kQWeight, TensorSlot::kKWeight, TensorSlot::kVWeight,
                          TensorSlot::kOWeight, TensorSlot::kGateWeight, TensorSlot::kUpWeight,
                          TensorSlot::kDownWeight}) {
    const TensorSlice* w = layout.Find(slot);
    if (w == nullptr) continue;
    Lora::Adapter a;
    a.base = slot;
    a.out = w->shape[0];  // nn.Linear [out, in]
    a.in = w->shape[1];
    a.a_offset = elements;
    a.b_offset = a.a_offset + rank * a.in;
    elements = a.b_offset + a.out * rank;
    lora.adapters.push_back(a);
  }
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  lora.blocks.resize(spec.num_layers());
  for (std::vector<float>& block : lora.blocks) {
    block.resize(elements);
    // A ~ N(0, 1/in), B ~ N(0, 1/r): the adapter's term is O(1) like the
    // projection's.
    for (const Lora::Adapter& a : lora.adapters) {
      for (int64_t i = 0; i < rank * a.in; ++i) {
        block[a.a_offset + i] = Rounded(type, normal(rng) / std::sqrt(static_cast<float>(a.in)));
      }
      for (int64_t i = 0; i < a.out * rank; ++i) {
        block[a.b_offset + i] = Rounded(type, normal(rng) / std::sqrt(static_cast<float>(rank)));
      }
    }
  }
  return lora;
}

// The CPU forward's adapters (block_lora.h) of block `layer`.
BlockLora CpuLora(const Lora& lora, int layer) {
  BlockLora cpu;
  cpu.rank = lora.rank;
  cpu.scaling = lora.scaling;
  for (const Lora::Adapter& a : lora.adapters) {
    LoraWeights w;
    w.base = a.base;
    w.in = a.in;
    w.out = a.out;
    w.a = lora.blocks[layer].data() + a.a_offset;
    w.b = lora.blocks[layer].data() + a.b_offset;
    cpu.adapters.push_back(w);
  }
  return cpu;
}

// A prefix of `tokens` virtual tokens: each block's ADAPTER_PART (keys
// [k, kv] then values [k, kv], models/adapters.h), random N(0, 1) (O(1)
// like the real keys and values) and rounded to `type` like the model.
struct Prefix {
  int64_t tokens = 0;
  std::vector<std::vector<float>> blocks;  // per block, [2 · k · kv]
};

Prefix RandomPrefix(const ModelSpec& spec, ElementType type, int64_t tokens) {
  Prefix prefix;
  prefix.tokens = tokens;
  std::mt19937 rng(13);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  prefix.blocks.resize(spec.num_layers());
  for (std::vector<float>& block : prefix.blocks) {
    block.resize(2 * tokens * KvWidth(spec));
    for (float& x : block) x = Rounded(type, normal(rng));
  }
  return prefix;
}

// The CPU forward's prefix (block_prefix.h) of block `layer`.
BlockPrefix CpuPrefix(const ModelSpec& spec, const Prefix& prefix, int layer) {
  BlockPrefix cpu;
  cpu.tokens = prefix.tokens;
  cpu.keys = prefix.blocks[layer].data();
  cpu.values = cpu.keys + prefix.tokens * KvWidth(spec);
  return cpu;
}

struct Batch {
  int examples = 0;
  int seq = 0;
  std::vector<int32_t> tokens;   // [examples * seq]
  std::vector<int32_t> lengths;  // [examples]
  std::vector<int32_t> labels;   // [examples]
};

// Random tokens; lengths and labels as given.
Batch MakeBatch(const ModelSpec& spec, int seq, std::vector<int32_t> lengths,
                std::vector<int32_t> labels, uint32_t seed) {
  Batch b;
  b.examples = static_cast<int>(lengths.size());
  b.seq = seq;
  b.lengths = std::move(lengths);
  b.labels = std::move(labels);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> token(0, spec.vocab_size() - 1);
  b.tokens.resize(b.examples * seq);
  for (int32_t& t : b.tokens) t = token(rng);
  return b;
}

// The forward's inputs gathered from the embedding and head parts, as the
// executor gathers them: token rows [EmbedTokenRows, e] (zero past the
// batch), position rows [seq, h] of positions first_position .. + seq
// (none for rotary models), the label words' rows [n_labels, e] of the LM
// head (the untied lm_head, or the token table).
struct Gathered {
  std::vector<float> token_rows, position_rows, label_rows;
  const float* project_in = nullptr;  // into the model's embedding part
};

Gathered Gather(const Model& m, const Batch& b, int64_t first_position = 0) {
  const EmbeddingView view = MakeEmbeddingView(m.spec, m.embedding.data());
  const HeadView head = MakeHeadView(m.spec, m.head.data());
  const int64_t e = EmbedDim(m.spec), h = m.spec.hidden_size();
  Gathered g;
  g.token_rows.assign(EmbedTokenRows(m.spec, b.examples, b.seq) * e, 0.0f);
  for (size_t t = 0; t < b.tokens.size(); ++t) {
    std::copy_n(view.tokens + b.tokens[t] * e, e, &g.token_rows[t * e]);
  }
  if (view.positions != nullptr) {
    // The table's rows for positions 0 .. seq - 1 start after the rows it
    // has beyond max_positions (OPT's 2 offset rows; models/position_rows.h
    // FirstPositionRow). RunCpu checks this against runtime/nn's Embed.
    const int64_t rows = EmbeddingPartLayout(m.spec).Get(TensorSlot::kPositionTable).shape[0];
    const float* positions =
        view.positions + (rows - m.spec.max_positions() + first_position) * h;
    g.position_rows.assign(positions, positions + b.seq * h);
  }
  const float* table = head.lm_head != nullptr ? head.lm_head : view.tokens;
  for (int32_t word : kLabelWords) {
    g.label_rows.insert(g.label_rows.end(), table + word * e, table + (word + 1) * e);
  }
  g.project_in = view.project_in;
  return g;
}

// What a forward produced: the hidden states after the embedding and after
// each block ([examples * seq * h] each) and the losses.
struct Outputs {
  std::vector<std::vector<float>> hidden;
  std::vector<float> losses;
};

// With `lora`, every block adds its adapters' terms; with `prefix`, every
// block's attention reads its prefix first and the tokens sit at positions
// k + t.
Outputs RunCpu(const Model& m, const Batch& b, const Lora* lora = nullptr,
               const Prefix* prefix = nullptr) {
  const int64_t first_position = prefix == nullptr ? 0 : prefix->tokens;
  const Gathered g = Gather(m, b, first_position);
  const int64_t h = m.spec.hidden_size();
  Outputs out;
  std::vector<float> hidden(b.examples * b.seq * h);
  std::vector<float> workspace(EmbedWorkspaceFloats(m.spec, b.examples, b.seq));
  EmbedRows(m.spec, g.token_rows.data(),
            g.position_rows.empty() ? nullptr : g.position_rows.data(), g.project_in, b.examples,
            b.seq, workspace.data(), hidden.data());
  // The gathered rows are runtime/nn's own.
  std::vector<float> reference(hidden.size());
  Embed(m.spec, m.embedding.data(), b.tokens.data(), b.examples, b.seq, reference.data(),
        first_position);
  EXPECT_EQ(std::memcmp(hidden.data(), reference.data(), hidden.size() * sizeof(float)), 0);
  out.hidden.push_back(hidden);
  workspace.assign(BlockWorkspaceFloats(m.spec, b.examples, b.seq), 0.0f);
  for (size_t layer = 0; layer < m.blocks.size(); ++layer) {
    if (lora == nullptr && prefix == nullptr) {
      BlockForward(m.spec, m.blocks[layer].data(), b.lengths.data(), b.examples, b.seq,
                   hidden.data(), workspace.data());
    } else {
      // The CPU makes its own rotary table (of k + seq positions).
      PartWeights weights(m.blocks[layer].data());
      const BlockLora adapters =
          lora == nullptr ? BlockLora() : CpuLora(*lora, static_cast<int>(layer));
      const BlockPrefix block_prefix =
          prefix == nullptr ? BlockPrefix() : CpuPrefix(m.spec, *prefix, static_cast<int>(layer));
      BlockForward(m.spec, weights, b.lengths.data(), b.examples, b.seq, hidden.data(),
                   workspace.data(), /*team=*/nullptr, /*rotary=*/nullptr,
                   lora == nullptr ? nullptr : &adapters,
                   prefix == nullptr ? nullptr : &block_prefix);
    }
    out.hidden.push_back(hidden);
  }
  const int n_labels = static_cast<int>(kLabelWords.size());
  workspace.assign(HeadLossWorkspaceFloats(m.spec, b.examples, n_labels), 0.0f);
  out.losses.resize(b.examples);
  HeadLossFromRows(m.spec, m.head.data(), g.label_rows.data(), hidden.data(), b.lengths.data(),
                   b.examples, b.seq, n_labels, b.labels.data(), workspace.data(),
                   out.losses.data());
  return out;
}

// The same forward on the GPU with elements of `type` (the model's values
// must already be rounded to it), workspaces of exactly the CPU's sizes, the
// head part without an untied lm_head (as HEAD_LOSS perturbs it,
// runtime/ops/head_loss_plan.h) and the rotary table uploaded as the
// backend uploads it. With `lora` (values rounded to `type`), every block
// adds its adapters' terms, with u in a scratch of exactly examples · seq ·
// rank elements. With `prefix` (values rounded to `type`), the position rows
// are those of positions k .. k + seq, the rotary table has k + seq
// positions, and every block reads its prefix, with a scratch of exactly
// BlockPrefixScratchBytes.
void RunGpu(const Model& m, const Batch& b, ElementType type, Outputs* out,
            const Lora* lora = nullptr, const Prefix* prefix = nullptr) {
  absl::StatusOr<DecoderGpuModel> model = DecoderGpuModel::From(m.spec);
  ASSERT_TRUE(model.ok()) << model.status();
  const int64_t first_position = prefix == nullptr ? 0 : prefix->tokens;
  const Gathered g = Gather(m, b, first_position);
  const int64_t h = m.spec.hidden_size(), e = EmbedDim(m.spec);
  const int64_t rows = static_cast<int64_t>(b.examples) * b.seq;
  const int n_labels = static_cast<int>(kLabelWords.size());
  const size_t bytes = ElementBytes(type);

  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } stream_guard{stream};
  DeviceBuffer gemm_workspace(kGemmWorkspaceBytes);
  absl::StatusOr<std::unique_ptr<Gemm>> gemm =
      Gemm::Create(stream, gemm_workspace.get(), kGemmWorkspaceBytes, /*allow_tf32=*/false);
  ASSERT_TRUE(gemm.ok()) << gemm.status();

  DeviceBuffer token_rows = Upload(type, g.token_rows.data(), g.token_rows.size());
  DeviceBuffer position_rows;
  if (!g.position_rows.empty()) {
    position_rows = Upload(type, g.position_rows.data(), g.position_rows.size());
  }
  DeviceBuffer project_in;
  if (g.project_in != nullptr) project_in = Upload(type, g.project_in, h * e);
  DeviceBuffer label_rows = Upload(type, g.label_rows.data(), g.label_rows.size());
  const TensorSlice* lm_head = HeadPartLayout(m.spec).Find(TensorSlot::kLmHead);
  const int64_t head_floats = lm_head != nullptr ? lm_head->offset : m.head.size();
  DeviceBuffer head = Upload(type, m.head.data(), head_floats);
  std::vector<DeviceBuffer> blocks;
  for (const auto& block : m.blocks) blocks.push_back(Upload(type, block.data(), block.size()));
  DeviceBuffer rotary_values;
  GpuRotary rotary;
  if (model->rotary) {
    const RotaryTable table(m.spec, first_position + b.seq);
    rotary_values = Upload(ElementType::kF32, table.values().data(), table.values().size());
    rotary.values = rotary_values.as<float>();
    rotary.positions = table.positions();
  }
  DeviceBuffer lengths = UploadInts(b.lengths);
  DeviceBuffer labels = UploadInts(b.labels);
  DeviceBuffer hidden(rows * h * bytes);
  DeviceBuffer embed_workspace(EmbedWorkspaceFloats(m.spec, b.examples, b.seq) * bytes);
  DeviceBuffer block_workspace(BlockWorkspaceFloats(m.spec, b.examples, b.seq) * bytes);
  DeviceBuffer losses(b.examples * sizeof(float));
  // Each block's adapters in one flat buffer, as the backend's perturbed
  // operand holds them.
  std::vector<DeviceBuffer> adapter_parts;
  std::vector<GpuBlockLora> adapters(m.blocks.size());
  DeviceBuffer lora_u;
  if (lora != nullptr) {
    lora_u = DeviceBuffer(rows * lora->rank * bytes);
    for (size_t layer = 0; layer < m.blocks.size(); ++layer) {
      const std::vector<float>& part = lora->blocks[layer];
      adapter_parts.push_back(Upload(type, part.data(), part.size()));
      GpuBlockLora& g = adapters[layer];
      g.rank = lora->rank;
      g.scaling = lora->scaling;
      for (const Lora::Adapter& a : lora->adapters) {
        GpuLoraAdapter ga;
        ga.base = a.base;
        ga.in = a.in;
        ga.out = a.out;
        ga.a = static_cast<const char*>(adapter_parts.back().get()) + a.a_offset * bytes;
        ga.b = static_cast<const char*>(adapter_parts.back().get()) + a.b_offset * bytes;
        g.adapters.push_back(ga);
      }
    }
  }
  // Each block's prefix in one flat buffer (keys then values), as the
  // backend's perturbed operand holds it.
  std::vector<DeviceBuffer> prefix_parts;
  std::vector<GpuBlockPrefix> prefixes(m.blocks.size());
  DeviceBuffer prefix_scratch;
  if (prefix != nullptr) {
    prefix_scratch =
        DeviceBuffer(BlockPrefixScratchBytes(type, *model, prefix->tokens, b.seq));
    for (size_t layer = 0; layer < m.blocks.size(); ++layer) {
      const std::vector<float>& part = prefix->blocks[layer];
      prefix_parts.push_back(Upload(type, part.data(), part.size()));
      GpuBlockPrefix& g = prefixes[layer];
      g.tokens = prefix->tokens;
      g.keys = prefix_parts.back().get();
      g.values = static_cast<const char*>(g.keys) + prefix->tokens * model->kv_width * bytes;
      g.scratch = prefix_scratch.get();
    }
  }
  ASSERT_FALSE(::testing::Test::HasFailure());

  out->hidden.clear();
  absl::Status status =
      EmbedRowsGpu(**gemm, type, *model, token_rows.get(), position_rows.get(), project_in.get(),
                   b.examples, b.seq, embed_workspace.get(), hidden.get());
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  out->hidden.push_back(Download(type, hidden.get(), rows * h));
  for (size_t layer = 0; layer < blocks.size(); ++layer) {
    status = BlockForwardGpu(**gemm, type, *model, blocks[layer].get(), lengths.as<int32_t>(),
                             b.examples, b.seq, hidden.get(), block_workspace.get(), rotary,
                             lora == nullptr ? nullptr : &adapters[layer], lora_u.get(),
                             prefix == nullptr ? nullptr : &prefixes[layer]);
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    out->hidden.push_back(Download(type, hidden.get(), rows * h));
  }
  status = HeadLossFromRowsGpu(stream, type, *model, head.get(), label_rows.get(), hidden.get(),
                               lengths.as<int32_t>(), b.examples, b.seq, n_labels,
                               labels.as<int32_t>(), losses.as<float>());
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  out->losses.resize(b.examples);
  ASSERT_EQ(cudaMemcpy(out->losses.data(), losses.get(), b.examples * sizeof(float),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
}

// ---------------------------------------------------------------------------
// Comparisons.

// GPU against CPU at the real positions (t < lengths[e]) of every stage, and
// every element of every stage finite (padding rows included).
void ExpectMatchesCpu(const Outputs& gpu, const Outputs& cpu, const Batch& b, int64_t h,
                      ElementType type) {
  ASSERT_EQ(gpu.hidden.size(), cpu.hidden.size());
  for (size_t stage = 0; stage < cpu.hidden.size(); ++stage) {
    const std::vector<float>& g = gpu.hidden[stage];
    const std::vector<float>& c = cpu.hidden[stage];
    int64_t nonfinite = 0, far = 0;
    double err2 = 0, ref2 = 0, worst = 0;
    for (size_t i = 0; i < g.size(); ++i) nonfinite += !std::isfinite(g[i]);
    for (int e = 0; e < b.examples; ++e) {
      for (int64_t i = e * b.seq * h; i < (e * b.seq + b.lengths[e]) * h; ++i) {
        const double d = std::fabs(double{g[i]} - c[i]);
        err2 += d * d;
        ref2 += double{c[i]} * c[i];
        const double rel = d / std::max(1.0, std::fabs(double{c[i]}));
        worst = std::max(worst, rel);
        far += type == ElementType::kF32 && rel > 1e-4;
      }
    }
    const std::string where = std::string(Name(type)) + " stage " + std::to_string(stage) +
                              " (0: embedding, k: after block k)";
    EXPECT_EQ(nonfinite, 0) << where;
    if (type == ElementType::kF32) {
      EXPECT_EQ(far, 0) << where << ": worst relative error " << worst;
    } else {
      const double rms = std::sqrt(err2 / ref2);
      EXPECT_LE(rms, type == ElementType::kF16 ? 2e-2 : 5e-2) << where;
    }
  }
  ASSERT_EQ(gpu.losses.size(), cpu.losses.size());
  for (size_t e = 0; e < cpu.losses.size(); ++e) {
    const double scale = std::max(1.0, std::fabs(double{cpu.losses[e]}));
    const double tolerance = type == ElementType::kF32   ? 1e-5 * scale
                             : type == ElementType::kF16 ? 2e-2 * scale
                                                         : 1e-1 * scale;
    EXPECT_NEAR(gpu.losses[e], cpu.losses[e], tolerance) << Name(type) << " example " << e;
  }
}

// Example 0's rows (all seq of them, padding included) and loss, bitwise.
void ExpectExampleZeroBitwise(const Outputs& a, const Outputs& b, int seq, int64_t h) {
  ASSERT_EQ(a.hidden.size(), b.hidden.size());
  for (size_t stage = 0; stage < a.hidden.size(); ++stage) {
    int64_t differ = 0;
    for (int64_t i = 0; i < seq * h; ++i)
      differ += Bits(a.hidden[stage][i]) != Bits(b.hidden[stage][i]);
    EXPECT_EQ(differ, 0) << "stage " << stage;
  }
  EXPECT_EQ(Bits(a.losses[0]), Bits(b.losses[0]));
}

// ---------------------------------------------------------------------------

class DecoderForwardGpu : public ::testing::TestWithParam<ModelSpec (*)()> {};

TEST_P(DecoderForwardGpu, Fp32MatchesCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const Model m = RandomModel(GetParam()(), ElementType::kF32);
  // seq 11: 33 tokens, not a multiple of the CPU's GEMM panel of 4; one
  // example of length 1, one full, one padded.
  const Batch b = MakeBatch(m.spec, 11, {11, 6, 1}, {0, 2, 1}, /*seed=*/5);
  Outputs gpu;
  RunGpu(m, b, ElementType::kF32, &gpu);
  if (HasFatalFailure()) return;
  ExpectMatchesCpu(gpu, RunCpu(m, b), b, m.spec.hidden_size(), ElementType::kF32);
}

TEST_P(DecoderForwardGpu, SameInputsGiveTheSameBits) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  for (ElementType type : {ElementType::kF32, ElementType::kBF16}) {
    const Model m = RandomModel(GetParam()(), type);
    const Batch b = MakeBatch(m.spec, 11, {11, 6, 1}, {0, 2, 1}, /*seed=*/5);
    Outputs first, second;
    RunGpu(m, b, type, &first);
    if (HasFatalFailure()) return;
    RunGpu(m, b, type, &second);
    if (HasFatalFailure()) return;
    for (size_t stage = 0; stage < first.hidden.size(); ++stage) {
      int64_t differ = 0;
      for (size_t i = 0; i < first.hidden[stage].size(); ++i) {
        differ += Bits(first.hidden[stage][i]) != Bits(second.hidden[stage][i]);
      }
      EXPECT_EQ(differ, 0) << Name(type) << " stage " << stage;
    }
    for (size_t e = 0; e < first.losses.size(); ++e) {
      EXPECT_EQ(Bits(first.losses[e]), Bits(second.losses[e])) << Name(type) << " example " << e;
    }
  }
}

TEST_P(DecoderForwardGpu, AnExampleDoesNotDependOnTheOthers) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const Model m = RandomModel(GetParam()(), ElementType::kF32);
  const int64_t h = m.spec.hidden_size();
  const int seq = 11;
  const Batch a = MakeBatch(m.spec, seq, {7, 6, 1}, {1, 2, 1}, /*seed=*/5);
  // The same example 0; other tokens, lengths and labels around it.
  Batch b = MakeBatch(m.spec, seq, {7, 11, 3}, {1, 0, 2}, /*seed=*/9);
  std::copy_n(a.tokens.begin(), seq, b.tokens.begin());
  Outputs in_a, in_b, alone;
  RunGpu(m, a, ElementType::kF32, &in_a);
  if (HasFatalFailure()) return;
  RunGpu(m, b, ElementType::kF32, &in_b);
  if (HasFatalFailure()) return;
  // Same batch shape: bitwise.
  ExpectExampleZeroBitwise(in_a, in_b, seq, h);
  // Alone (another GEMM shape, so cuBLAS may pick another algorithm): within
  // the FP32 tolerance of the CPU comparison.
  Batch single = a;
  single.examples = 1;
  single.tokens.resize(seq);
  single.lengths.resize(1);
  single.labels.resize(1);
  RunGpu(m, single, ElementType::kF32, &alone);
  if (HasFatalFailure()) return;
  ExpectMatchesCpu(alone, RunCpu(m, single), single, h, ElementType::kF32);
  for (size_t stage = 0; stage < alone.hidden.size(); ++stage) {
    for (int64_t i = 0; i < a.lengths[0] * h; ++i) {
      ASSERT_NEAR(alone.hidden[stage][i], in_a.hidden[stage][i],
                  1e-4 * std::max(1.0f, std::fabs(in_a.hidden[stage][i])))
          << "stage " << stage << " element " << i;
    }
  }
  EXPECT_NEAR(alone.losses[0], in_a.losses[0], 1e-5 * std::max(1.0f, std::fabs(in_a.losses[0])));
}

std::string ModelName(const ::testing::TestParamInfo<ModelSpec (*)()>& info) {
  const std::string model = info.param().name();
  std::string name;
  bool upper = true;
  for (char c : model) {
    if (c == '-' || c == '.') {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Models, DecoderForwardGpu,
                         ::testing::Values(&OptTiny, &Opt350mShaped, &OddWidths, &Opt125mShaped,
                                           &Gpt2Tiny, &Gpt2OddWidths, &LlamaTiny,
                                           &LlamaWideHeads, &Qwen2Tiny, &Qwen3Tiny,
                                           &Qwen3OddWidths),
                         ModelName);

// FP16 and BF16 storage against the FP32 CPU, on each family's tiny model.
class DecoderForwardGpuHalf : public ::testing::TestWithParam<ModelSpec (*)()> {};

TEST_P(DecoderForwardGpuHalf, Fp16AndBf16MatchCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  for (ElementType type : {ElementType::kF16, ElementType::kBF16}) {
    const Model m = RandomModel(GetParam()(), type);
    const Batch b = MakeBatch(m.spec, 11, {11, 6, 1}, {0, 2, 1}, /*seed=*/5);
    Outputs gpu;
    RunGpu(m, b, type, &gpu);
    if (HasFatalFailure()) return;
    ExpectMatchesCpu(gpu, RunCpu(m, b), b, m.spec.hidden_size(), type);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, DecoderForwardGpuHalf,
                         ::testing::Values(&OptTiny, &Gpt2Tiny, &LlamaTiny, &Qwen2Tiny,
                                           &Qwen3Tiny),
                         ModelName);

// LoRA on every projection (every LoraTarget the family has: OPT's q, k,
// v, out_proj, fc1, fc2; LLaMA's q, k, v, o, gate, up, down), rank 4 and a
// scaling that is not a power of two, in each element type against the
// FP32 CPU, with the tolerances of the full-parameter forward.
class DecoderForwardGpuLora : public ::testing::TestWithParam<ModelSpec (*)()> {};

constexpr int64_t kLoraRank = 4;
constexpr float kLoraScaling = 0.75f;  // α 3 / r 4

// The GPU forward of `m` in `type` with LoRA adapters or a prefix (either
// may be null) on a batch of three examples of 11, 6 and 1 tokens, against
// the CPU's.
void ExpectGpuMatchesCpu(const Model& m, ElementType type, const Lora* lora,
                         const Prefix* prefix) {
  const Batch b = MakeBatch(m.spec, 11, {11, 6, 1}, {0, 2, 1}, /*seed=*/5);
  Outputs gpu;
  RunGpu(m, b, type, &gpu, lora, prefix);
  if (::testing::Test::HasFatalFailure()) return;
  ExpectMatchesCpu(gpu, RunCpu(m, b, lora, prefix), b, m.spec.hidden_size(), type);
}

// The largest |difference| between two forwards' hidden states after
// `stage` over the first example's real rows (h wide).
double FirstExampleDiff(const Outputs& a, const Outputs& b, size_t stage, const Batch& batch,
                        int64_t h) {
  double diff = 0;
  for (int64_t i = 0; i < batch.lengths[0] * h; ++i) {
    diff = std::max(diff, std::fabs(double{a.hidden[stage][i]} - b.hidden[stage][i]));
  }
  return diff;
}

// No GPU needed: the comparison below is not vacuous, because the
// adapters move every block's output and the losses.
TEST_P(DecoderForwardGpuLora, AdaptersChangeTheCpuForward) {
  const Model m = RandomModel(GetParam()(), ElementType::kF32);
  const Lora lora = RandomLora(m.spec, ElementType::kF32, kLoraRank, kLoraScaling);
  const Batch b = MakeBatch(m.spec, 11, {11, 6, 1}, {0, 2, 1}, /*seed=*/5);
  EXPECT_EQ(lora.adapters.size(), m.spec.activation() == SWIGLU ? 7u : 6u);
  const Outputs plain = RunCpu(m, b), adapted = RunCpu(m, b, &lora);
  for (size_t stage = 1; stage < plain.hidden.size(); ++stage) {
    EXPECT_GT(FirstExampleDiff(plain, adapted, stage, b, m.spec.hidden_size()), 0.1)
        << "stage " << stage;
  }
  EXPECT_NE(plain.losses, adapted.losses);
}

TEST_P(DecoderForwardGpuLora, MatchesCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  for (ElementType type : {ElementType::kF32, ElementType::kF16, ElementType::kBF16}) {
    const Model m = RandomModel(GetParam()(), type);
    const Lora lora = RandomLora(m.spec, type, kLoraRank, kLoraScaling);
    ExpectGpuMatchesCpu(m, type, &lora, /*prefix=*/nullptr);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, DecoderForwardGpuLora,
                         ::testing::Values(&OptTiny, &LlamaTiny, &LlamaWideHeads), ModelName);

// Adapters that do not fit the model are refused before anything is
// enqueued.
TEST(DecoderGpuModel, RefusesLoraAdaptersThatDoNotFit) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  absl::StatusOr<DecoderGpuModel> opt = DecoderGpuModel::From(OptTiny());
  ASSERT_TRUE(opt.ok()) << opt.status();
  DeviceBuffer gemm_workspace(kGemmWorkspaceBytes);
  absl::StatusOr<std::unique_ptr<Gemm>> gemm =
      Gemm::Create(nullptr, gemm_workspace.get(), kGemmWorkspaceBytes, /*allow_tf32=*/false);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  DeviceBuffer any(4096);
  GpuRotary no_rotary;
  auto run = [&](const GpuBlockLora& lora, void* u) {
    return BlockForwardGpu(**gemm, ElementType::kF32, *opt, any.get(), any.as<int32_t>(), 1, 4,
                           any.get(), any.get(), no_rotary, &lora, u);
  };
  GpuBlockLora lora;
  lora.rank = 4;
  lora.scaling = 1.0f;
  GpuLoraAdapter adapter;
  adapter.a = adapter.b = any.get();
  // OPT has no gate projection.
  adapter.base = TensorSlot::kGateWeight;
  adapter.in = opt->h;
  adapter.out = opt->f;
  lora.adapters = {adapter};
  absl::Status status = run(lora, any.get());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("not a projection"), std::string::npos) << status;
  // fc2 maps f -> h, not h -> f.
  lora.adapters[0].base = TensorSlot::kDownWeight;
  status = run(lora, any.get());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("projects 256 -> 64"), std::string::npos) << status;
  // No scratch for u.
  lora.adapters[0].base = TensorSlot::kUpWeight;
  status = run(lora, nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("scratch"), std::string::npos) << status;
}

// A prefix of k 5 (MeZO's) before sequences of 11 (k + seq 16 of the
// models' 32 or 64 positions), in each element type against the FP32 CPU,
// with the tolerances of the plain forward: OPT (learned positions with
// its offset rows), GPT-2 (fused q | k | v rows), LLaMA (rotary, 2
// key/value heads for 4), LLaMA with one key/value head of d 128, Qwen3
// (QK-norm, q wider than h).
class DecoderForwardGpuPrefix : public ::testing::TestWithParam<ModelSpec (*)()> {};

constexpr int64_t kPrefixTokens = 5;

// No GPU needed: the comparison below is not vacuous, because the prefix
// moves every block's output and the losses.
TEST_P(DecoderForwardGpuPrefix, APrefixChangesTheCpuForward) {
  const Model m = RandomModel(GetParam()(), ElementType::kF32);
  const Prefix prefix = RandomPrefix(m.spec, ElementType::kF32, kPrefixTokens);
  const Batch b = MakeBatch(m.spec, 11, {11, 6, 1}, {0, 2, 1}, /*seed=*/5);
  const Outputs plain = RunCpu(m, b), over = RunCpu(m, b, /*lora=*/nullptr, &prefix);
  for (size_t stage = 0; stage < plain.hidden.size(); ++stage) {
    // The embedding moves only with learned positions (rows from k on).
    if (stage > 0 || m.spec.positional() != ROTARY) {
      EXPECT_GT(FirstExampleDiff(plain, over, stage, b, m.spec.hidden_size()), 0.1)
          << "stage " << stage;
    }
  }
  EXPECT_NE(plain.losses, over.losses);
}

TEST_P(DecoderForwardGpuPrefix, MatchesCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  for (ElementType type : {ElementType::kF32, ElementType::kF16, ElementType::kBF16}) {
    const Model m = RandomModel(GetParam()(), type);
    const Prefix prefix = RandomPrefix(m.spec, type, kPrefixTokens);
    ExpectGpuMatchesCpu(m, type, /*lora=*/nullptr, &prefix);
    if (HasFatalFailure()) return;
  }
}

// Attention over a prefix runs example by example: an example's rows and
// loss do not depend on the rest of its batch (bitwise, same batch shape).
TEST_P(DecoderForwardGpuPrefix, AnExampleDoesNotDependOnTheOthers) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const Model m = RandomModel(GetParam()(), ElementType::kBF16);
  const Prefix prefix = RandomPrefix(m.spec, ElementType::kBF16, kPrefixTokens);
  const int seq = 11;
  const Batch a = MakeBatch(m.spec, seq, {7, 6, 1}, {1, 2, 1}, /*seed=*/5);
  Batch b = MakeBatch(m.spec, seq, {7, 11, 3}, {1, 0, 2}, /*seed=*/9);
  std::copy_n(a.tokens.begin(), seq, b.tokens.begin());
  Outputs in_a, in_b;
  RunGpu(m, a, ElementType::kBF16, &in_a, /*lora=*/nullptr, &prefix);
  if (HasFatalFailure()) return;
  RunGpu(m, b, ElementType::kBF16, &in_b, /*lora=*/nullptr, &prefix);
  if (HasFatalFailure()) return;
  ExpectExampleZeroBitwise(in_a, in_b, seq, m.spec.hidden_size());
}

INSTANTIATE_TEST_SUITE_P(Models, DecoderForwardGpuPrefix,
                         ::testing::Values(&OptTiny, &Gpt2Tiny, &LlamaTiny, &LlamaWideHeads,
                                           &Qwen3Tiny),
                         ModelName);

// A prefix that does not fit the model or the batch is refused before
// anything is enqueued.
TEST(DecoderGpuModel, RefusesAPrefixThatDoesNotFit) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  absl::StatusOr<DecoderGpuModel> llama = DecoderGpuModel::From(LlamaTiny());
  ASSERT_TRUE(llama.ok()) << llama.status();
  DeviceBuffer gemm_workspace(kGemmWorkspaceBytes);
  absl::StatusOr<std::unique_ptr<Gemm>> gemm =
      Gemm::Create(nullptr, gemm_workspace.get(), kGemmWorkspaceBytes, /*allow_tf32=*/false);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  DeviceBuffer any(4096);
  GpuRotary table;
  table.values = any.as<float>();
  table.positions = 64;  // llama-tiny's max_positions
  GpuBlockPrefix prefix;
  prefix.tokens = kPrefixTokens;
  prefix.keys = prefix.values = prefix.scratch = any.get();
  auto run = [&](int seq) {
    return BlockForwardGpu(**gemm, ElementType::kF32, *llama, any.get(), any.as<int32_t>(), 1,
                           seq, any.get(), any.get(), table, /*lora=*/nullptr,
                           /*lora_u=*/nullptr, &prefix);
  };
  // 5 + 60 positions of 64.
  absl::Status status = run(60);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("needs 65 positions"), std::string::npos) << status;
  // The rotary table must cover k + seq positions.
  table.positions = 8;
  status = run(4);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("9 positions; got a table of 8"), std::string::npos) << status;
  // No scratch for the joined rows.
  table.positions = 64;
  prefix.scratch = nullptr;
  status = run(4);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("scratch"), std::string::npos) << status;
}

// No GPU needed: the model description.
TEST(DecoderGpuModel, TensorsAreTheParamLayoutsSlots) {
  for (ModelSpec (*make)() : {&OptTiny, &Opt350mShaped, &OddWidths, &Opt125mShaped, &Gpt2Tiny,
                             &Gpt2OddWidths, &LlamaTiny, &LlamaWideHeads, &Qwen2Tiny, &Qwen3Tiny,
                             &Qwen3OddWidths}) {
    const ModelSpec spec = make();
    SCOPED_TRACE(spec.name());
    absl::StatusOr<DecoderGpuModel> m = DecoderGpuModel::From(spec);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->h, spec.hidden_size());
    EXPECT_EQ(m->e, EmbedDim(spec));
    EXPECT_EQ(m->head_dim, HeadDim(spec));
    EXPECT_EQ(m->q_width, QueryWidth(spec));
    EXPECT_EQ(m->kv_width, KvWidth(spec));
    EXPECT_EQ(m->kv_heads, KvHeads(spec));
    EXPECT_EQ(m->norm_eps, NormEps(spec));
    EXPECT_EQ(m->fused_qkv, spec.family() == GPT2);
    EXPECT_EQ(m->weights_in_out, spec.family() == GPT2);
    EXPECT_EQ(m->rotary, spec.positional() == ROTARY);
    EXPECT_EQ(m->has_positions, spec.positional() != ROTARY);
    EXPECT_EQ(m->swiglu, spec.activation() == SWIGLU);
    EXPECT_EQ(m->norm == NormKind::kRmsNorm, spec.norm() == RMS_NORM);
    for (const TensorSlice& t : BlockPartLayout(spec).tensors) {
      EXPECT_EQ(m->Block(t.slot).offset, t.offset) << t.suffix;
      EXPECT_EQ(m->Block(t.slot).elements, t.elements()) << t.suffix;
    }
    for (const TensorSlice& t : HeadPartLayout(spec).tensors) {
      EXPECT_EQ(m->Head(t.slot).offset, t.offset) << t.suffix;
    }
    EXPECT_EQ(m->Block(TensorSlot::kQNorm).present(), spec.qk_norm());
    EXPECT_EQ(m->Head(TensorSlot::kProjectOut).present(), EmbedDim(spec) != spec.hidden_size());
    EXPECT_FALSE(m->Block(TensorSlot::kTokenTable).present());
  }
}

// The GPU runs exactly what the CPU runs: every zoo model CheckRuntimeSupports
// accepts, and it refuses the others with the CPU's reason.
TEST(DecoderGpuModel, AcceptsWhatTheCpuAccepts) {
  for (const std::string& name : ZooModelNames()) {
    SCOPED_TRACE(name);
    const ModelSpec spec = Zoo(name);
    const absl::Status cpu = CheckRuntimeSupports(spec);
    const absl::Status gpu = DecoderGpuModel::From(spec).status();
    EXPECT_EQ(gpu, cpu);
  }
  const absl::Status post_norm = DecoderGpuModel::From(Zoo("opt-350m")).status();
  EXPECT_EQ(post_norm.code(), absl::StatusCode::kInvalidArgument) << post_norm;
  EXPECT_NE(post_norm.message().find("post-norm"), std::string::npos) << post_norm;
}

// Arguments that do not fit the model are refused before anything is
// enqueued.
TEST(DecoderGpuModel, RefusesPositionsForARotaryModelAndAShortRotaryTable) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  absl::StatusOr<DecoderGpuModel> llama = DecoderGpuModel::From(LlamaTiny());
  ASSERT_TRUE(llama.ok()) << llama.status();
  DeviceBuffer gemm_workspace(kGemmWorkspaceBytes);
  absl::StatusOr<std::unique_ptr<Gemm>> gemm =
      Gemm::Create(nullptr, gemm_workspace.get(), kGemmWorkspaceBytes, /*allow_tf32=*/false);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  DeviceBuffer any(4096);
  absl::Status status = EmbedRowsGpu(**gemm, ElementType::kF32, *llama, any.get(), any.get(),
                                     nullptr, 1, 4, nullptr, any.get());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("position rows"), std::string::npos) << status;
  GpuRotary short_table;
  short_table.values = any.as<float>();
  short_table.positions = 3;
  status = BlockForwardGpu(**gemm, ElementType::kF32, *llama, any.get(), any.as<int32_t>(), 1, 4,
                           any.get(), any.get(), short_table);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("4 positions; got a table of 3"), std::string::npos) << status;
}

}  // namespace
}  // namespace zosched
