#include "runtime/checkpoint/hf_checkpoint_testdata.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/files.h"
#include "gtest/gtest.h"
#include "models/model_spec.h"
#include "nlohmann/json.hpp"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/dtype/convert.h"

namespace zosched {
namespace {

// Appends tensor `name` of `shape` with values distinct per tensor and
// element, rounded to BF16.
void Add(const std::string& name, std::vector<int64_t> shape, int seed,
         std::vector<HfTensor>* out) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const int64_t salt = static_cast<int64_t>(out->size()) * 131 + seed * 977;
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) {
    values[i] = 0.001f * static_cast<float>((i * 7919 + salt * 104729) % 2001 - 1000);
  }
  std::vector<uint16_t> bf16(n);
  ConvertBuffer(FP32, values.data(), BF16, bf16.data(), n);
  ConvertBuffer(BF16, bf16.data(), FP32, values.data(), n);
  out->push_back({name, std::move(shape), std::move(values), BF16});
}

void LlamaLike(const ModelSpec& spec, int seed, std::vector<HfTensor>* out) {
  const int64_t h = spec.hidden_size();
  const int64_t hd = spec.head_dim() != 0 ? spec.head_dim() : h / spec.num_heads();
  const int64_t q = spec.num_heads() * hd;
  const int64_t kv = (spec.num_kv_heads() != 0 ? spec.num_kv_heads() : spec.num_heads()) * hd;
  const int64_t f = spec.ffn_size();
  const bool bias = spec.family() == QWEN2;
  Add("model.embed_tokens.weight", {spec.vocab_size(), h}, seed, out);
  for (int64_t l = 0; l < spec.num_layers(); ++l) {
    const std::string p = absl::StrCat("model.layers.", l, ".");
    Add(p + "input_layernorm.weight", {h}, seed, out);
    Add(p + "self_attn.q_proj.weight", {q, h}, seed, out);
    if (bias) Add(p + "self_attn.q_proj.bias", {q}, seed, out);
    Add(p + "self_attn.k_proj.weight", {kv, h}, seed, out);
    if (bias) Add(p + "self_attn.k_proj.bias", {kv}, seed, out);
    Add(p + "self_attn.v_proj.weight", {kv, h}, seed, out);
    if (bias) Add(p + "self_attn.v_proj.bias", {kv}, seed, out);
    if (spec.family() == QWEN3) {
      Add(p + "self_attn.q_norm.weight", {hd}, seed, out);
      Add(p + "self_attn.k_norm.weight", {hd}, seed, out);
    }
    Add(p + "self_attn.o_proj.weight", {h, q}, seed, out);
    Add(p + "post_attention_layernorm.weight", {h}, seed, out);
    Add(p + "mlp.gate_proj.weight", {f, h}, seed, out);
    Add(p + "mlp.up_proj.weight", {f, h}, seed, out);
    Add(p + "mlp.down_proj.weight", {h, f}, seed, out);
  }
  Add("model.norm.weight", {h}, seed, out);
  if (!spec.tied_lm_head()) Add("lm_head.weight", {spec.vocab_size(), h}, seed, out);
}

void Gpt2(const ModelSpec& spec, int seed, std::vector<HfTensor>* out) {
  const int64_t h = spec.hidden_size();
  const int64_t f = spec.ffn_size();
  Add("wte.weight", {spec.vocab_size(), h}, seed, out);
  Add("wpe.weight", {spec.max_positions(), h}, seed, out);
  for (int64_t l = 0; l < spec.num_layers(); ++l) {
    const std::string p = absl::StrCat("h.", l, ".");
    Add(p + "ln_1.weight", {h}, seed, out);
    Add(p + "ln_1.bias", {h}, seed, out);
    Add(p + "attn.c_attn.weight", {h, 3 * h}, seed, out);
    Add(p + "attn.c_attn.bias", {3 * h}, seed, out);
    Add(p + "attn.c_proj.weight", {h, h}, seed, out);
    Add(p + "attn.c_proj.bias", {h}, seed, out);
    Add(p + "ln_2.weight", {h}, seed, out);
    Add(p + "ln_2.bias", {h}, seed, out);
    Add(p + "mlp.c_fc.weight", {h, f}, seed, out);
    Add(p + "mlp.c_fc.bias", {f}, seed, out);
    Add(p + "mlp.c_proj.weight", {f, h}, seed, out);
    Add(p + "mlp.c_proj.bias", {h}, seed, out);
  }
  Add("ln_f.weight", {h}, seed, out);
  Add("ln_f.bias", {h}, seed, out);
  if (!spec.tied_lm_head()) Add("lm_head.weight", {spec.vocab_size(), h}, seed, out);
}

}  // namespace

std::vector<HfTensor> HfParameters(const ModelSpec& spec, int seed) {
  std::vector<HfTensor> out;
  if (spec.family() == GPT2) {
    Gpt2(spec, seed, &out);
  } else {
    LlamaLike(spec, seed, &out);
  }
  return out;
}

std::vector<HfTensor> WithPrefix(const std::vector<HfTensor>& tensors, const std::string& prefix) {
  std::vector<HfTensor> out = tensors;
  for (HfTensor& t : out) t.name = prefix + t.name;
  return out;
}

const HfTensor* FindHf(const std::vector<HfTensor>& tensors, const std::string& name) {
  for (const HfTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string ShardName(int k, int n) {
  return absl::StrFormat("model-%05d-of-%05d.safetensors", k, n);
}

std::string WriteHfCheckpoint(const std::string& dir, const std::vector<HfTensor>& tensors,
                              int shards) {
  mkdir(dir.c_str(), 0755);
  // Each tensor's bytes in its dtype; kept alive until written.
  std::vector<std::vector<unsigned char>> bytes;
  std::vector<SafetensorsTensor> all;
  for (const HfTensor& t : tensors) {
    bytes.emplace_back(t.values.size() * DTypeBytes(t.dtype));
    ConvertBuffer(FP32, t.values.data(), t.dtype, bytes.back().data(), t.values.size());
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    SafetensorsTensor st;
    st.name = tensors[i].name;
    st.dtype = tensors[i].dtype;
    st.shape = tensors[i].shape;
    st.bytes = absl::string_view(reinterpret_cast<const char*>(bytes[i].data()), bytes[i].size());
    all.push_back(std::move(st));
  }
  const std::map<std::string, std::string> metadata = {{"format", "pt"}};
  if (shards == 1) {
    const std::string path = absl::StrCat(dir, "/model.safetensors");
    const absl::Status s = WriteSafetensors(path, all, metadata);
    if (!s.ok()) ADD_FAILURE() << s;
    return path;
  }
  nlohmann::json weight_map = nlohmann::json::object();
  uint64_t total = 0;
  const size_t per_shard = (all.size() + shards - 1) / shards;
  for (int k = 0; k < shards; ++k) {
    const size_t begin = std::min(all.size(), k * per_shard);
    const size_t end = std::min(all.size(), begin + per_shard);
    const std::vector<SafetensorsTensor> shard(all.begin() + begin, all.begin() + end);
    for (const SafetensorsTensor& t : shard) {
      weight_map[t.name] = ShardName(k + 1, shards);
      total += t.bytes.size();
    }
    const absl::Status s =
        WriteSafetensors(absl::StrCat(dir, "/", ShardName(k + 1, shards)), shard, metadata);
    if (!s.ok()) ADD_FAILURE() << s;
  }
  const nlohmann::json index = {{"metadata", {{"total_size", total}}},
                                {"weight_map", weight_map}};
  const std::string path = absl::StrCat(dir, "/model.safetensors.index.json");
  const absl::Status s = WriteFile(path, index.dump(2));
  if (!s.ok()) ADD_FAILURE() << s;
  return path;
}

}  // namespace zosched
