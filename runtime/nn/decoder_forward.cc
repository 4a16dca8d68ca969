#include "runtime/nn/decoder_forward.h"


#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>


#include "absl/strings/str_format.h"
#include "base/check.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "models/model_tensors.h"
#include "models/position_rows.h"
#include "runtime/nn/gemm.h"
#include "runtime/nn/param_layout.h"
#include "runtime/nn/row_kernels.h"

namespace zosched {
namespace {

// GemmAcc (gemm.h) takes tokens as its kernel's columns in panels of 4 and
// the leftover ones one by one, in two depth orders. Padding the token count
// to a multiple of 4 puts every token into a 4-wide panel, which computes
// each column independently of its neighbours and of the column count.
constexpr int64_t kTokenPanel = 4;

int64_t RoundUp(int64_t n, int64_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

// y[rows x out] = x[rows x in] · wᵀ + b, w [out, in] row-major (nn.Linear),
// or x · w with w [in, out] when `in_out` (GPT-2's Conv1D); b may be
// nullptr. `rows` must be a multiple of kTokenPanel (see above).
void Linear(const float* x, int64_t rows, int64_t in, const float* w,
            const float* b, int64_t out, float* y, bool in_out = false) {
  CHECK(rows % kTokenPanel == 0) << rows;
  for (int64_t r = 0; r < rows; ++r) {
    float* yr = y + r * out;
    if (b != nullptr) {
      std::memcpy(yr, b, sizeof(float) * out);
    } else {
      std::fill(yr, yr + out, 0.0f);
    }
  }
  if (in_out) {
    GemmAcc(kRhsRowMajor, rows, out, in, x, in, w, out, y, out);
  } else {
    GemmAcc(kRhsTransposed, rows, out, in, x, in, w, in, y, out);
  }
}

// Sums in a fixed order (16 interleaved partial sums, then a fixed tree) so
// that the result does not depend on the pointer's alignment, unlike
// Eigen's vectorised reductions, which peel to the first aligned element.
float FixedSum(const float* x, int64_t n) {
  float lane[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int l = 0; l < 16; ++l) lane[l] += x[i + l];
  }
  for (int l = 0; i < n; ++i, ++l) lane[l] += x[i];
  for (int width = 8; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) lane[l] += lane[l + width];
  }
  return lane[0];
}

float FixedDot(const float* x, const float* y, int64_t n) {
  float lane[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int l = 0; l < 16; ++l) lane[l] += x[i + l] * y[i + l];
  }
  for (int l = 0; i < n; ++i, ++l) lane[l] += x[i] * y[i];
  for (int width = 8; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) lane[l] += lane[l + width];
  }
  return lane[0];
}

// y = (x - mean(x)) / sqrt(var(x) + eps) · w + b over one row of h values
// (biased variance, as torch.nn.LayerNorm). y may alias x.
void LayerNormRow(const float* x, int64_t h, const float* w, const float* b, float eps,
                  float* y) {
  const float mean = FixedSum(x, h) / static_cast<float>(h);
  for (int64_t i = 0; i < h; ++i) y[i] = x[i] - mean;
  const float var = FixedDot(y, y, h) / static_cast<float>(h);
  const float rstd = 1.0f / std::sqrt(var + eps);
  for (int64_t i = 0; i < h; ++i) y[i] = y[i] * rstd * w[i] + b[i];
}

// A model's norm: its kind, epsilon and (for one tensor pair) weights.
struct RowNorm {
  Norm kind = LAYER_NORM;
  float eps = 0;
  const float* w = nullptr;  // nullptr: no norm (y = x)
  const float* b = nullptr;  // LAYER_NORM only

  // The norm of one row of n values into y (which may alias x).
  void Apply(const float* x, int64_t n, float* y) const {
    if (w == nullptr) {
      if (y != x) std::memcpy(y, x, sizeof(float) * n);
    } else if (kind == RMS_NORM) {
      RmsNormRow(x, n, w, eps, y);
    } else {
      LayerNormRow(x, n, w, b, eps, y);
    }
  }
};

RowNorm NormOf(const ModelSpec& spec, const float* w, const float* b) {
  RowNorm norm;
  norm.kind = spec.norm();
  norm.eps = NormEps(spec);
  norm.w = w;
  norm.b = b;
  return norm;
}

// The norm of rows [0, rows) of x into y; rows [rows, padded_rows) of y
// are zeroed (the GEMM padding of Linear).
void NormRows(const RowNorm& norm, const float* x, int64_t rows, int64_t padded_rows, int64_t h,
              float* y) {
  for (int64_t r = 0; r < rows; ++r) norm.Apply(x + r * h, h, y + r * h);
  std::fill(y + rows * h, y + padded_rows * h, 0.0f);
}

// Softmax of row i of the causal score matrix s [L x L] in place over keys
// j <= i; keys j > i get exactly 0 (so that later tokens' values, multiplied
// by 0, leave the context of query i bitwise unchanged).
// Softmax of each row of s [L, P + L] over its first P + i + 1 scores (the
// prefix's P keys, then the real keys up to query i); the rest set to 0.
void CausalSoftmaxRows(float* s, int64_t L, int64_t P) {
  const int64_t width = P + L;
  for (int64_t i = 0; i < L; ++i) {
    float* row = s + i * width;
    const int64_t last = P + i;
    float max = row[0];
    for (int64_t j = 1; j <= last; ++j) max = std::max(max, row[j]);
    for (int64_t j = 0; j <= last; ++j) row[j] = std::exp(row[j] - max);
    const float inv = 1.0f / FixedSum(row, last + 1);
    for (int64_t j = 0; j <= last; ++j) row[j] *= inv;
    std::fill(row + last + 1, row + width, 0.0f);
  }
}

void CheckBatch(const ModelSpec& spec, const int32_t* lengths, int examples,
                int seq, int64_t first_position = 0) {
  CHECK(examples >= 1 && seq >= 1) << examples << " x " << seq;
  CHECK(first_position >= 0 && first_position + seq <= spec.max_positions())
      << "positions " << first_position << " + seq " << seq << " > max_positions "
      << spec.max_positions();
  if (lengths == nullptr) return;
  for (int e = 0; e < examples; ++e) {
    CHECK(lengths[e] >= 1 && lengths[e] <= seq)
        << "lengths[" << e << "] = " << lengths[e] << " not in [1, " << seq
        << "]";
  }
}

// The input of the LM head for one hidden row: the final norm (if any),
// then project_out (if any). `normed` has h floats of scratch; returns a
// pointer to EmbedDim floats (normed or projected).
const float* HeadInput(const ModelSpec& spec, const HeadView& head,
                       const float* x, float* normed, float* projected) {
  const int64_t h = spec.hidden_size();
  NormOf(spec, head.norm_weight, head.norm_bias).Apply(x, h, normed);
  if (head.project_out == nullptr) return normed;
  const int64_t e_dim = EmbedDim(spec);
  for (int64_t i = 0; i < e_dim; ++i) {
    projected[i] = FixedDot(head.project_out + i * h, normed, h);
  }
  return projected;
}

// The LM head's matrix [V, e]: the untied head of the head part, or the
// token table of the embedding part.
const float* HeadTable(const ModelSpec& spec, const float* head_part,
                       const float* embedding_part) {
  const HeadView head = MakeHeadView(spec, head_part);
  return head.lm_head != nullptr ? head.lm_head
                                 : MakeEmbeddingView(spec, embedding_part).tokens;
}

}  // namespace

absl::Status CheckRuntimeSupports(const ModelSpec& spec) {
  if (absl::Status status = ValidateModelSpec(spec, "CPU runtime"); !status.ok()) {
    return status;
  }
  if (spec.norm_placement() != PRE_NORM) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "model '%s' is post-norm (norm_placement %s); the runtime runs pre-norm blocks",
        spec.name(), NormPlacement_Name(spec.norm_placement())));
  }
  // The output projection writes into the room of the queries, keys and values.
  if (QueryWidth(spec) + 2 * KvWidth(spec) < spec.hidden_size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "model '%s': queries, keys and values (%d + 2 x %d wide) are narrower than the hidden "
        "size %d; the runtime's block workspace needs them at least as wide",
        spec.name(), QueryWidth(spec), KvWidth(spec), spec.hidden_size()));
  }
  return absl::OkStatus();
}

int64_t EmbedTokenRows(const ModelSpec& spec, int examples, int seq) {
  const int64_t tokens = static_cast<int64_t>(examples) * seq;
  return EmbedDim(spec) != spec.hidden_size() ? RoundUp(tokens, kTokenPanel) : tokens;
}

int64_t EmbedWorkspaceFloats(const ModelSpec& spec, int examples, int seq) {
  if (EmbedDim(spec) == spec.hidden_size()) return 0;
  return EmbedTokenRows(spec, examples, seq) * spec.hidden_size();
}

void EmbedRows(const ModelSpec& spec, const float* token_rows, const float* position_rows,
               const float* project_in, int examples, int seq, float* workspace,
               float* hidden) {
  CheckBatch(spec, /*lengths=*/nullptr, examples, seq);
  const int64_t h = spec.hidden_size();
  const int64_t e_dim = EmbedDim(spec);
  CHECK((project_in != nullptr) == (e_dim != h)) << "project_in must be given iff e != h";
  const int64_t tokens_total = static_cast<int64_t>(examples) * seq;
  // Token embeddings, [T, h]: the rows themselves, or their projection
  // (into the workspace, [T4, h]).
  if (project_in != nullptr) {
    Linear(token_rows, EmbedTokenRows(spec, examples, seq), e_dim, project_in, /*b=*/nullptr,
           h, workspace);
  }
  for (int64_t t = 0; t < tokens_total; ++t) {
    const float* word = project_in == nullptr ? token_rows + t * h : workspace + t * h;
    float* out = hidden + t * h;
    if (position_rows == nullptr) {
      std::memcpy(out, word, sizeof(float) * h);
      continue;
    }
    const float* position = position_rows + (t % seq) * h;
    for (int64_t i = 0; i < h; ++i) out[i] = word[i] + position[i];
  }
}

void Embed(const ModelSpec& spec, const float* embedding_part,
           const int32_t* tokens, int examples, int seq, float* hidden,
           int64_t first_position) {
  CheckBatch(spec, /*lengths=*/nullptr, examples, seq, first_position);
  const EmbeddingView view = MakeEmbeddingView(spec, embedding_part);
  const int64_t e_dim = EmbedDim(spec);
  const int64_t vocab = spec.vocab_size();
  const int64_t tokens_total = static_cast<int64_t>(examples) * seq;
  std::vector<float> rows(EmbedTokenRows(spec, examples, seq) * e_dim, 0.0f);
  for (int64_t t = 0; t < tokens_total; ++t) {
    CHECK(tokens[t] >= 0 && tokens[t] < vocab)
        << "token " << tokens[t] << " at " << t << " not in [0, " << vocab
        << ")";
    std::memcpy(&rows[t * e_dim], view.tokens + tokens[t] * e_dim, sizeof(float) * e_dim);
  }
  std::vector<float> workspace(EmbedWorkspaceFloats(spec, examples, seq));
  const float* positions = view.positions == nullptr
                              ? nullptr
                              : view.positions + (FirstPositionRow(spec) + first_position) *
                                                     spec.hidden_size();
  EmbedRows(spec, rows.data(), positions, view.project_in, examples, seq, workspace.data(),
            hidden);
}

int64_t BlockWorkspaceFloats(const ModelSpec& spec, int examples, int seq) {
  static_assert(kTokenPanel == 4, "BlockForwardWorkspaceElements rounds T up to 4");
  return BlockForwardWorkspaceElements(spec, examples, seq);
}

void BlockForward(const ModelSpec& spec, const float* block_part,
                  const int32_t* lengths, int examples, int seq, float* hidden,
                  float* workspace, KeyValueRows* captured) {
  PartWeights weights(block_part);
  BlockForward(spec, weights, lengths, examples, seq, hidden, workspace, /*team=*/nullptr,
               /*rotary=*/nullptr, /*lora=*/nullptr, /*prefix=*/nullptr, captured);
}

void BlockForward(const ModelSpec& spec, BlockWeightSource& weights, const int32_t* lengths,
                  int examples, int seq, float* hidden, float* workspace, ThreadTeam* team,
                  const RotaryTable* rotary, const BlockLora* lora, const BlockPrefix* prefix,
                  KeyValueRows* captured) {
  const int64_t P = prefix == nullptr ? 0 : prefix->tokens;  // the prefix's keys
  CheckBatch(spec, lengths, examples, seq, P);
  std::unique_ptr<RotaryTable> own_rotary;
  if (spec.positional() == ROTARY && rotary == nullptr) {
    own_rotary = std::make_unique<RotaryTable>(spec, P + seq);
    rotary = own_rotary.get();
  }
  CHECK(rotary == nullptr || rotary->positions() >= P + seq)
      << "rotary table of " << rotary->positions() << " positions for " << P << " + seq " << seq;
  const PartLayout layout = BlockPartLayout(spec);
  // Each tensor asked for right before it is read (matrices one at a time),
  // on the calling thread; nullptr for a slot the model does not have.
  auto w = [&](TensorSlot slot) -> const float* {
    const TensorSlice* t = layout.Find(slot);
    return t == nullptr ? nullptr : weights.Get(*t);
  };
  const int64_t h = spec.hidden_size();
  const int64_t f = spec.ffn_size();
  const int64_t heads = spec.num_heads();
  const int64_t group = heads / KvHeads(spec);  // query heads per key/value head
  const int64_t d = HeadDim(spec);
  const int64_t qw = QueryWidth(spec);
  const int64_t kvw = KvWidth(spec);
  const int64_t aw = std::max(h, qw);
  const bool in_out = WeightsInOut(spec);
  const bool fused_qkv = layout.Find(TensorSlot::kQkvWeight) != nullptr;
  const int64_t T = static_cast<int64_t>(examples) * seq;
  const int64_t T4 = RoundUp(T, kTokenPanel);
  // Row-wise steps over token rows [0, rows), and projections over whole
  // token panels: the GEMM of a range of panels gives each token the bits
  // of the whole batch's GEMM (see kTokenPanel).
  auto rows = [&](int64_t count, auto fn) {
    ParallelFor(team, count, 1, [&](int64_t begin, int64_t end, int) { fn(begin, end); });
  };
  // The projection in `slot` (with its LoRA adapter, if any) over whole
  // token panels, then its epilogue over the same panels.
  auto linear = [&](const float* x, int64_t in, TensorSlot slot, TensorSlot bias_slot,
                    int64_t out, float* y, auto epilogue) {
    const float* weight = w(slot);
    const float* bias = w(bias_slot);
    const LoraWeights* adapter = lora == nullptr ? nullptr : lora->Find(slot);
    ParallelFor(team, T4, kTokenPanel, [&](int64_t begin, int64_t end, int) {
      Linear(x + begin * in, end - begin, in, weight, bias, out, y + begin * out, in_out);
      if (adapter != nullptr) {
        thread_local std::vector<float> u;
        u.resize(std::max<size_t>(u.size(), (end - begin) * lora->rank));
        AddLora(*adapter, lora->rank, lora->scaling, x + begin * in, end - begin,
                y + begin * out, u.data());
      }
      epilogue(begin, end);
    });
  };
  auto no_epilogue = [](int64_t, int64_t) {};

  // Workspace (floats), attention phase:
  float* a = workspace;        // [T4, aw]  norm(x), then the attention context [T4, qw]
  float* q = a + T4 * aw;      // [T4, qw]  queries, then o_proj's output [T4, h]
  float* k = q + T4 * qw;      // [T4, kvw]
  float* v = k + T4 * kvw;     // [T4, kvw]
  float* scores = v + T4 * kvw;  // [L, L]  one (example, head)
  // GPT-2's fused projection writes q | k | v side by side into the same
  // room, [T4, qw + 2 kvw].
  int64_t ldq = qw, ldkv = kvw;
  // FFN phase (reuses the same memory):
  float* inner = workspace + T4 * h;  // [T4, f]  act(up(norm(x))), or silu(gate) · up
  float* up = inner + T4 * f;         // [T4, f]  SwiGLU's up projection
  auto norm = [&](TensorSlot weight, TensorSlot bias) {
    const RowNorm n = NormOf(spec, w(weight), w(bias));
    rows(T, [&](int64_t begin, int64_t end) {
      NormRows(n, hidden + begin * h, end - begin, end - begin, h, a + begin * h);
    });
    std::fill(a + T * h, a + T4 * h, 0.0f);  // the GEMM's padding rows
  };

  // ---- attention: x += o_proj(attention(norm1(x))) ----
  norm(TensorSlot::kAttnNormWeight, TensorSlot::kAttnNormBias);
  if (fused_qkv) {
    ldq = ldkv = qw + 2 * kvw;
    linear(a, h, TensorSlot::kQkvWeight, TensorSlot::kQkvBias, ldq, q, no_epilogue);
    k = q + qw;
    v = k + kvw;
  } else {
    linear(a, h, TensorSlot::kQWeight, TensorSlot::kQBias, qw, q, no_epilogue);
    linear(a, h, TensorSlot::kKWeight, TensorSlot::kKBias, kvw, k, no_epilogue);
    linear(a, h, TensorSlot::kVWeight, TensorSlot::kVBias, kvw, v, no_epilogue);
  }
  // Per token: QK-norm of each head (Qwen3), the rotary embedding at the
  // token's position (LLaMA, Qwen), and the queries scaled by 1/sqrt(d).
  const float* q_norm = w(TensorSlot::kQNorm);
  const float* k_norm = w(TensorSlot::kKNorm);
  const float eps = NormEps(spec);
  const float scaling = 1.0f / std::sqrt(static_cast<float>(d));
  auto rotate = [&](float* x, int64_t position) {
    const int p = static_cast<int>(position);
    RotateHead(x, d, rotary->cos(p), rotary->sin(p));
  };
  rows(T, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      for (int64_t head = 0; head < heads; ++head) {
        float* qh = q + t * ldq + head * d;
        if (q_norm != nullptr) RmsNormRow(qh, d, q_norm, eps, qh);
        if (rotary != nullptr) rotate(qh, P + t % seq);
        for (int64_t i = 0; i < d; ++i) qh[i] *= scaling;
      }
      if (k_norm == nullptr && rotary == nullptr) continue;
      for (int64_t head = 0; head < heads / group; ++head) {
        float* kh = k + t * ldkv + head * d;
        if (k_norm != nullptr) RmsNormRow(kh, d, k_norm, eps, kh);
        if (rotary != nullptr) rotate(kh, P + t % seq);
      }
    }
  });
  if (captured != nullptr) {
    rows(T, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        std::memcpy(captured->keys + t * kvw, k + t * ldkv, sizeof(float) * kvw);
        std::memcpy(captured->values + t * kvw, v + t * ldkv, sizeof(float) * kvw);
      }
    });
  }

  // The context goes into `a` (norm1(x) is no longer needed); rows at
  // padding positions and the GEMM padding rows stay 0.
  std::fill(a, a + T4 * qw, 0.0f);
  ParallelFor(team, examples * heads, 1, [&](int64_t begin, int64_t end, int worker) {
    // Scores [seq, P + seq], and with a prefix the head's keys and values
    // with the prefix's first, [P + seq, d] each.
    thread_local std::vector<float> own;
    float* s = scores;
    if (worker != 0 || P > 0) {
      const size_t floats = static_cast<size_t>(seq) * (P + seq) + (P > 0 ? 2 * (P + seq) * d : 0);
      if (own.size() < floats) own.resize(floats);
      s = own.data();
    }
    float* joined_k = s + seq * (P + seq);
    float* joined_v = joined_k + (P + seq) * d;
    for (int64_t pair = begin; pair < end; ++pair) {
      const int64_t e = pair / heads, head = pair % heads;
      const int64_t L = lengths[e];
      const int64_t row0 = e * seq;
      const int64_t kv_head = (head / group) * d;
      const float* qh = q + row0 * ldq + head * d;      // [L, d], row stride ldq
      const float* kh = k + row0 * ldkv + kv_head;      // [L, d], row stride ldkv
      const float* vh = v + row0 * ldkv + kv_head;      // [L, d], row stride ldkv
      int64_t ld = ldkv;
      float* ctx = a + row0 * qw + head * d;            // [L, d], row stride qw
      if (P > 0) {
        for (int64_t j = 0; j < P; ++j) {
          std::memcpy(joined_k + j * d, prefix->keys + j * kvw + kv_head, sizeof(float) * d);
          std::memcpy(joined_v + j * d, prefix->values + j * kvw + kv_head, sizeof(float) * d);
        }
        for (int64_t j = 0; j < L; ++j) {
          std::memcpy(joined_k + (P + j) * d, kh + j * ldkv, sizeof(float) * d);
          std::memcpy(joined_v + (P + j) * d, vh + j * ldkv, sizeof(float) * d);
        }
        kh = joined_k;
        vh = joined_v;
        ld = d;
      }
      // s[L, P + L] = qh · khᵀ
      const int64_t width = P + L;
      std::fill(s, s + L * width, 0.0f);
      GemmAcc(kRhsTransposed, L, width, d, qh, ldq, kh, ld, s, width);
      CausalSoftmaxRows(s, L, P);
      // ctx[L, d] = softmax · vh
      GemmAcc(kRhsRowMajor, L, d, width, s, width, vh, ld, ctx, qw);
    }
  });
  float* projected = q;  // o_proj's output [T4, h]: q, k and v are no longer needed
  linear(a, qw, TensorSlot::kOWeight, TensorSlot::kOBias, h, projected,
         [&](int64_t begin, int64_t end) {
           for (int64_t i = begin * h; i < std::min(end, T) * h; ++i) hidden[i] += projected[i];
         });

  // ---- FFN: x += down(act(up(norm2(x)))), or down(silu(gate(x')) · up(x')) ----
  norm(TensorSlot::kFfnNormWeight, TensorSlot::kFfnNormBias);
  if (spec.activation() == SWIGLU) {
    linear(a, h, TensorSlot::kGateWeight, TensorSlot::kGateBias, f, inner, no_epilogue);
    linear(a, h, TensorSlot::kUpWeight, TensorSlot::kUpBias, f, up,
           [&](int64_t begin, int64_t end) {
             SwiGluRange(inner + begin * f, up + begin * f, (end - begin) * f);
           });
  } else if (spec.activation() == GELU) {
    linear(a, h, TensorSlot::kUpWeight, TensorSlot::kUpBias, f, inner,
           [&](int64_t begin, int64_t end) {
             GeluTanhRange(inner + begin * f, (end - begin) * f);
           });
  } else {
    linear(a, h, TensorSlot::kUpWeight, TensorSlot::kUpBias, f, inner,
           [&](int64_t begin, int64_t end) {
             for (int64_t i = begin * f; i < end * f; ++i) inner[i] = std::max(inner[i], 0.0f);
           });
  }
  linear(inner, f, TensorSlot::kDownWeight, TensorSlot::kDownBias, h, a,
         [&](int64_t begin, int64_t end) {
           for (int64_t i = begin * h; i < std::min(end, T) * h; ++i) hidden[i] += a[i];
         });
}

int64_t HeadLossWorkspaceFloats(const ModelSpec& spec, int examples, int n_labels) {
  return spec.hidden_size() + EmbedDim(spec) + static_cast<int64_t>(examples) * n_labels;
}

void LabelLogitsFromRows(const ModelSpec& spec, const float* head_part,
                         const float* label_rows, const float* hidden,
                         const int32_t* lengths, int examples, int seq, int n_labels,
                         float* workspace, float* logits) {
  CheckBatch(spec, lengths, examples, seq);
  CHECK(n_labels >= 1) << n_labels;
  const HeadView head = MakeHeadView(spec, head_part);
  const int64_t h = spec.hidden_size();
  const int64_t e_dim = EmbedDim(spec);
  float* normed = workspace;           // [h]
  float* projected = workspace + h;    // [e]
  for (int e = 0; e < examples; ++e) {
    const int64_t last = static_cast<int64_t>(e) * seq + lengths[e] - 1;
    const float* x = HeadInput(spec, head, hidden + last * h, normed, projected);
    for (int l = 0; l < n_labels; ++l) {
      logits[static_cast<int64_t>(e) * n_labels + l] =
          FixedDot(label_rows + static_cast<int64_t>(l) * e_dim, x, e_dim);
    }
  }
}

void HeadLossFromRows(const ModelSpec& spec, const float* head_part, const float* label_rows,
                      const float* hidden, const int32_t* lengths, int examples, int seq,
                      int n_labels, const int32_t* labels, float* workspace, float* losses) {
  float* logits = workspace + spec.hidden_size() + EmbedDim(spec);  // [examples, n_labels]
  LabelLogitsFromRows(spec, head_part, label_rows, hidden, lengths, examples, seq, n_labels,
                      workspace, logits);
  for (int e = 0; e < examples; ++e) {
    CHECK(labels[e] >= 0 && labels[e] < n_labels)
        << "labels[" << e << "] = " << labels[e];
    const float* row = logits + static_cast<int64_t>(e) * n_labels;
    float max = row[0];
    for (int l = 1; l < n_labels; ++l) max = std::max(max, row[l]);
    double sum = 0.0;
    for (int l = 0; l < n_labels; ++l) sum += std::exp(double{row[l]} - max);
    losses[e] = static_cast<float>(std::log(sum) + max - row[labels[e]]);
  }
}

namespace {

// The LM head's rows of the label words, [n_labels, e].
std::vector<float> GatherLabelRows(const ModelSpec& spec, const float* head_part,
                                   const float* embedding_part, const int32_t* label_words,
                                   int n_labels) {
  const float* table = HeadTable(spec, head_part, embedding_part);
  const int64_t e_dim = EmbedDim(spec);
  std::vector<float> rows(n_labels * e_dim);
  for (int l = 0; l < n_labels; ++l) {
    CHECK(label_words[l] >= 0 && label_words[l] < spec.vocab_size())
        << "label word " << label_words[l];
    std::memcpy(&rows[l * e_dim], table + label_words[l] * e_dim, sizeof(float) * e_dim);
  }
  return rows;
}

}  // namespace

void LabelLogits(const ModelSpec& spec, const float* head_part,
                 const float* embedding_part, const float* hidden,
                 const int32_t* lengths, int examples, int seq,
                 const int32_t* label_words, int n_labels, float* logits) {
  const std::vector<float> rows =
      GatherLabelRows(spec, head_part, embedding_part, label_words, n_labels);
  std::vector<float> workspace(HeadLossWorkspaceFloats(spec, examples, n_labels));
  LabelLogitsFromRows(spec, head_part, rows.data(), hidden, lengths, examples, seq, n_labels,
                      workspace.data(), logits);
}

void HeadLoss(const ModelSpec& spec, const float* head_part,
              const float* embedding_part, const float* hidden,
              const int32_t* lengths, int examples, int seq,
              const int32_t* label_words, int n_labels, const int32_t* labels,
              float* losses) {
  const std::vector<float> rows =
      GatherLabelRows(spec, head_part, embedding_part, label_words, n_labels);
  std::vector<float> workspace(HeadLossWorkspaceFloats(spec, examples, n_labels));
  HeadLossFromRows(spec, head_part, rows.data(), hidden, lengths, examples, seq, n_labels, labels,
                   workspace.data(), losses);
}

void LmLogits(const ModelSpec& spec, const float* head_part,
              const float* embedding_part, const float* hidden, int examples,
              int seq, float* logits) {
  CheckBatch(spec, /*lengths=*/nullptr, examples, seq);
  const HeadView head = MakeHeadView(spec, head_part);
  const float* table = HeadTable(spec, head_part, embedding_part);
  const RowNorm final_norm = NormOf(spec, head.norm_weight, head.norm_bias);
  const int64_t h = spec.hidden_size();
  const int64_t e_dim = EmbedDim(spec);
  const int64_t vocab = spec.vocab_size();
  const int64_t T = static_cast<int64_t>(examples) * seq;
  constexpr int64_t kChunk = 64;  // tokens per GEMM, a multiple of kTokenPanel
  std::vector<float> normed(kChunk * h), projected(kChunk * e_dim),
      out(kChunk * vocab);
  for (int64_t t0 = 0; t0 < T; t0 += kChunk) {
    const int64_t rows = std::min(kChunk, T - t0);
    const int64_t rows4 = RoundUp(rows, kTokenPanel);
    NormRows(final_norm, hidden + t0 * h, rows, rows4, h, normed.data());
    const float* x = normed.data();
    if (head.project_out != nullptr) {
      Linear(normed.data(), rows4, h, head.project_out, /*b=*/nullptr, e_dim,
             projected.data());
      x = projected.data();
    }
    Linear(x, rows4, e_dim, table, /*b=*/nullptr, vocab, out.data());
    std::memcpy(logits + t0 * vocab, out.data(), sizeof(float) * rows * vocab);
  }
}

}  // namespace zosched
