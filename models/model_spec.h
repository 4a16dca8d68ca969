// Checks on a ModelSpec and the small derived quantities every layer uses.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/model.pb.h"

namespace zosched {

// Upper bounds on a ModelSpec's sizes, generous for real models (the largest
// published: hidden 18,432, 128 layers, FFN 73,728, vocabulary 256,000,
// 128k positions) and low enough that every count, byte size and FLOP
// figure derived from them fits int64.
constexpr int64_t kMaxHiddenSize = int64_t{1} << 17;  // also heads, word_embed_proj_dim
constexpr int64_t kMaxLayers = int64_t{1} << 12;
constexpr int64_t kMaxFfnSize = int64_t{1} << 19;
constexpr int64_t kMaxVocabSize = int64_t{1} << 22;
constexpr int64_t kMaxPositions = int64_t{1} << 22;

// Returns OK if `spec` describes a model that accounting.h can count: every
// enum set to one of its values, every size positive and within the limits above, hidden_size divisible by num_heads,
// num_heads divisible by num_kv_heads, a ModelSpec of family LLAMA, QWEN2
// or QWEN3 using ROTARY positions with a rope_theta, etc.
//
// Errors: InvalidArgument "SOURCE: model 'NAME': FIELD ... (expected ...)"
// naming the first offending field. `source` names where the spec came from.
absl::Status ValidateModelSpec(const ModelSpec& spec, const std::string& source);

// Width of one attention head: head_dim, or hidden_size / num_heads when 0.
int64_t HeadDim(const ModelSpec& spec);

// Width of the queries (and of the attention's context): num_heads · HeadDim.
int64_t QueryWidth(const ModelSpec& spec);

// Width of the keys and of the values: KvHeads · HeadDim.
int64_t KvWidth(const ModelSpec& spec);

// The norms' epsilon: norm_eps, or 1e-5 when 0, as fp32 (the value the
// kernels add; torch keeps eps as a Python float and adds it to an fp32
// variance, which rounds it to fp32 the same way).
float NormEps(const ModelSpec& spec);

// LLAMA, QWEN2 and QWEN3: pre-norm RMSNorm blocks with rotary positions,
// SwiGLU and no biases but Qwen2's on q, k and v.
bool IsLlamaLike(Family family);

// Key/value heads: num_kv_heads, or num_heads when num_kv_heads is 0.
int64_t KvHeads(const ModelSpec& spec);

// Width of the token embeddings: word_embed_proj_dim, or hidden_size when 0.
int64_t EmbedDim(const ModelSpec& spec);

// The dtype a command-line flag names: "fp32", "FP16", "bf16" (any case);
// DTYPE_UNSPECIFIED for an empty value. Errors: InvalidArgument
// "--FLAG=VALUE: expected FP32, FP16 or BF16".
absl::StatusOr<DType> ParseDTypeFlag(const std::string& flag, const std::string& value);

// Bytes of one element of `dtype` (FP32 4, FP16 and BF16 2). CHECK-fails on
// DTYPE_UNSPECIFIED, which validation rules out.
int64_t DTypeBytes(DType dtype);

}  // namespace zosched
