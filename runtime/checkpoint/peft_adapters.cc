#include "runtime/checkpoint/peft_adapters.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "models/adapters.h"
#include "models/model_spec.h"
#include "models/model_tensors.h"
#include "nlohmann/json.hpp"
#include "runtime/checkpoint/non_finite.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/dtype/convert.h"

namespace zosched {
namespace {

using Json = nlohmann::json;

// PEFT's prefix of every LoRA tensor name: PeftModel.base_model (LoraModel)
// .model (the transformers model).
constexpr absl::string_view kPeftPrefix = "base_model.model.";

// PEFT's name of a prefix's one tensor (the prompt encoder's embedding).
constexpr char kPromptEmbeddings[] = "prompt_embeddings";

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// A JSON value for a message: short, never the text of a deep structure.
std::string Show(const Json& value) {
  if (value.is_structured() && value.size() > 4) return value.type_name();
  std::string text = value.dump();
  return text.size() > 80 ? absl::StrCat(text.substr(0, 77), "...") : text;
}

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool IsPeftDType(DType dtype) { return dtype == FP32 || dtype == FP16 || dtype == BF16; }

// The checks both Save and Load make of `peft` before its layout may be
// computed.
absl::Status CheckAdapters(const ModelSpec& spec, const Peft& peft) {
  if (!TrainsAdapters(peft)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "peft kind is ", PeftKind_Name(peft.kind()),
        ", which has no adapters; PEFT adapter files hold LoRA adapters (kind LORA) or a "
        "prefix (kind PREFIX)"));
  }
  return ValidatePeft(spec, peft);
}

// What a block's ADAPTER_PART holds under `peft`, for messages.
std::string DescribeAdapters(const ModelSpec& spec, const Peft& peft) {
  if (TrainsLora(peft)) {
    return absl::StrCat("r = ", peft.lora_rank(), " on ", LoraTargetsOf(peft).size(),
                        " targets of model '", spec.name(), "'");
  }
  return absl::StrCat("the keys and values of k = ", PrefixTokens(peft),
                      " virtual tokens, ", KvWidth(spec), " wide, of model '", spec.name(), "'");
}

// "prompt_embeddings" of a prefix of k virtual tokens: [k, num_layers · 2 ·
// token_dim], token_dim = KvWidth.
std::vector<int64_t> PromptEmbeddingsShape(const ModelSpec& spec, int64_t k) {
  return {k, spec.num_layers() * 2 * KvWidth(spec)};
}

// The one mapping between a prefix's ADAPTER_PARTs (block l: keys [k, kv]
// then values [k, kv], row-major) and PEFT's "prompt_embeddings" (row j, the
// virtual token j: for each layer l in order, its key then its value, kv
// elements each, heads-major; PEFT views the row as [num_layers · 2, heads,
// head_dim] and splits it into one (key, value) pair per layer). Calls
// fn(l, block_offset, prompt_offset) for each run of kv elements, with the
// run's start in block l's ADAPTER_PART and in prompt_embeddings, in
// prompt_embeddings' order.
template <typename Fn>
void ForEachPrefixRun(const ModelSpec& spec, int64_t k, Fn fn) {
  const int64_t kv = KvWidth(spec);
  const int64_t layers = spec.num_layers();
  for (int64_t j = 0; j < k; ++j) {
    for (int64_t l = 0; l < layers; ++l) {
      for (int64_t half = 0; half < 2; ++half) {  // 0: the key, 1: the value
        fn(l, (half * k + j) * kv, ((j * layers + l) * 2 + half) * kv);
      }
    }
  }
}

// `dir` as a directory: created when missing (not its parents).
absl::Status MakeDirectory(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    const int error = errno;
    return absl::ErrnoToStatus(
        error, absl::StrCat("cannot create the adapter directory ", dir,
                            " (its parent must exist)"));
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    const int error = errno;
    return absl::ErrnoToStatus(error, absl::StrCat("cannot look at ", dir));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, " exists and is not a directory; expected an adapter directory"));
  }
  return absl::OkStatus();
}

// Writes `contents` to `path` through `path`.tmp, synced, then renamed.
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp";
  absl::Status status = WriteFile(tmp, contents);
  if (status.ok()) status = SyncFile(tmp);
  if (status.ok() && rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    status = absl::ErrnoToStatus(error, absl::StrCat("cannot rename ", tmp, " to ", path));
  }
  if (!status.ok()) {
    unlink(tmp.c_str());
    return status;
  }
  return SyncParentDirectory(path);
}

// α as PEFT's config holds it: an int when integer-valued (lora_alpha: int
// in LoraConfig), else a float.
Json AlphaJson(double alpha) {
  if (alpha == std::floor(alpha) && std::fabs(alpha) < 9.0e15) {
    return Json(static_cast<int64_t>(alpha));
  }
  return Json(alpha);
}

// The tensors of adapter_model.safetensors for `blocks` (checked), their
// bytes converted to `dtype` in `*data`, which they view.
std::vector<SafetensorsTensor> PeftTensors(const ModelSpec& spec, const Peft& peft,
                                           const std::vector<std::vector<float>>& blocks,
                                           DType dtype, std::string* data) {
  const int64_t element_bytes = DTypeBytes(dtype);
  data->assign(static_cast<size_t>(AdapterParams(spec, peft) * spec.num_layers() * element_bytes),
               '\0');
  std::vector<SafetensorsTensor> tensors;
  auto add = [&](std::string name, std::vector<int64_t> shape, int64_t at) {
    SafetensorsTensor out;
    out.name = std::move(name);
    out.dtype = dtype;
    out.bytes = absl::string_view(data->data() + at, Elements(shape) * element_bytes);
    out.shape = std::move(shape);
    tensors.push_back(std::move(out));
  };
  if (const int64_t k = PrefixTokens(peft); k > 0) {
    const int64_t kv = KvWidth(spec);
    ForEachPrefixRun(spec, k, [&](int64_t l, int64_t block_offset, int64_t prompt_offset) {
      ConvertBuffer(FP32, blocks[l].data() + block_offset, dtype,
                    &(*data)[prompt_offset * element_bytes], kv);
    });
    add(kPromptEmbeddings, PromptEmbeddingsShape(spec, k), 0);
    return tensors;
  }
  int64_t at = 0;  // bytes into `data`
  for (int64_t b = 0; b < spec.num_layers(); ++b) {
    for (const LoraAdapter& adapter : BlockAdapters(spec, peft, b)) {
      for (const auto& [t, offset] : {std::make_pair(&adapter.a, adapter.a_offset),
                                      std::make_pair(&adapter.b, adapter.b_offset)}) {
        const int64_t n = Elements(t->shape);
        ConvertBuffer(FP32, blocks[b].data() + offset, dtype, &(*data)[at], n);
        add(absl::StrCat(kPeftPrefix, t->name), t->shape, at);
        at += n * element_bytes;
      }
    }
  }
  return tensors;
}

// adapter_config.json for `peft`, the keys PEFT's save_pretrained writes
// for its LoraConfig or PrefixTuningConfig (sorted on output, as PEFT's
// json.dumps(sort_keys=True)).
Json PeftConfigJson(const ModelSpec& spec, const Peft& peft, const std::string& base_model) {
  Json config = Json::object();
  config["task_type"] = "CAUSAL_LM";
  config["inference_mode"] = true;
  config["base_model_name_or_path"] = base_model;
  config["revision"] = nullptr;
  if (const int64_t k = PrefixTokens(peft); k > 0) {
    // PEFT's _prepare_prompt_learning_config for a grouped-query model:
    // token_dim = kv_heads · head_dim, num_attention_heads = kv_heads, and
    // encoder_hidden_size (unused without a projection) = token_dim.
    config["peft_type"] = "PREFIX_TUNING";
    config["num_virtual_tokens"] = k;
    config["token_dim"] = KvWidth(spec);
    config["num_layers"] = spec.num_layers();
    config["num_attention_heads"] = KvHeads(spec);
    config["num_transformer_submodules"] = 1;
    config["encoder_hidden_size"] = KvWidth(spec);
    config["prefix_projection"] = false;
    return config;
  }
  std::vector<std::string> names;
  for (LoraTarget t : LoraTargetsOf(peft)) names.push_back(LoraTargetName(spec, t));
  std::sort(names.begin(), names.end());
  config["peft_type"] = "LORA";
  config["r"] = peft.lora_rank();
  config["lora_alpha"] = AlphaJson(peft.lora_alpha());
  config["lora_dropout"] = 0.0;
  config["target_modules"] = names;
  config["bias"] = "none";
  config["fan_in_fan_out"] = false;
  config["modules_to_save"] = nullptr;
  config["init_lora_weights"] = true;
  config["use_rslora"] = false;
  return config;
}

// The spellings a file may store `name` (a TensorSpec name) under, as the
// name it would be found by: "base_model.model." stripped, ".default."
// before "weight" dropped. Returns `stored` unchanged when neither applies.
std::string CanonicalName(absl::string_view stored) {
  std::string name(stored);
  if (absl::StartsWith(name, kPeftPrefix)) name.erase(0, kPeftPrefix.size());
  for (const char* ab : {".lora_A", ".lora_B"}) {
    const std::string old_suffix = absl::StrCat(ab, ".default.weight");
    if (absl::EndsWith(name, old_suffix)) {
      name.resize(name.size() - old_suffix.size());
      absl::StrAppend(&name, ab, ".weight");
    }
  }
  return name;
}

// A run of elements of a file's tensor that is a run of a block's
// ADAPTER_PART.
struct Run {
  const SafetensorsTensor* tensor;
  int64_t from;   // elements into the tensor
  int64_t count;  // elements
  int64_t layer;
  int64_t to;     // elements into the layer's ADAPTER_PART
};

absl::Status CheckDType(const std::string& path, const SafetensorsTensor& t) {
  if (IsPeftDType(t.dtype)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(path, ": tensor '", t.name, "' has dtype ",
                                                 t.dtype_name, "; expected F32, F16 or BF16"));
}

// Where LoRA adapters' values are in `file`: each tensor present, shaped and
// typed as expected, block by block in layout order; then none beyond them.
absl::StatusOr<std::vector<Run>> LoraRuns(const std::string& path, const SafetensorsFile& file,
                                          const ModelSpec& spec, const Peft& peft) {
  // The file's tensors by the name they are found under.
  std::map<std::string, const SafetensorsTensor*> by_name;
  for (const SafetensorsTensor& t : file.tensors()) {
    const auto [it, added] = by_name.emplace(CanonicalName(t.name), &t);
    if (!added) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": tensors '", it->second->name, "' and '", t.name, "' are both adapter '",
          it->first, "' (one name, with and without \"base_model.model.\" or \".default\"); "
          "expected each tensor once"));
    }
  }

  std::vector<Run> runs;
  std::set<std::string> expected;
  const int64_t r = peft.lora_rank();
  for (int64_t b = 0; b < spec.num_layers(); ++b) {
    for (const LoraAdapter& adapter : BlockAdapters(spec, peft, b)) {
      for (const auto& [want, offset, rank_dim] :
           {std::make_tuple(&adapter.a, adapter.a_offset, 0),
            std::make_tuple(&adapter.b, adapter.b_offset, 1)}) {
        const auto it = by_name.find(want->name);
        if (it == by_name.end()) {
          return absl::NotFoundError(absl::StrCat(
              path, ": no tensor '", kPeftPrefix, want->name, "' (nor '", want->name,
              "'): the LoRA adapter of ", LoraTargetName(spec, adapter.target), " in layer ", b,
              " that the config's target_modules ask for; the file holds ",
              file.tensors().size(), " tensors"));
        }
        const SafetensorsTensor& t = *it->second;
        if (t.shape != want->shape) {
          std::string hint;
          if (t.shape.size() == 2 && t.shape[1 - rank_dim] == want->shape[1 - rank_dim] &&
              t.shape[rank_dim] != r) {
            hint = absl::StrCat(" (rank ", t.shape[rank_dim], " in the file; the config says r = ",
                                r, ")");
          }
          return absl::InvalidArgumentError(absl::StrCat(
              path, ": tensor '", t.name, "' has shape ", ShapeString(t.shape), "; expected ",
              ShapeString(want->shape), hint));
        }
        RETURN_IF_ERROR(CheckDType(path, t));
        runs.push_back({&t, 0, Elements(t.shape), b, offset});
        expected.insert(want->name);
      }
    }
  }
  for (const SafetensorsTensor& t : file.tensors()) {
    if (expected.count(CanonicalName(t.name)) == 0) {
      std::vector<std::string> targets;
      for (LoraTarget target : LoraTargetsOf(peft)) {
        targets.push_back(LoraTargetName(spec, target));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": tensor '", t.name, "' is not an adapter of this config (r = ", r,
          ", target_modules ", absl::StrJoin(targets, ", "), " on the ", spec.num_layers(),
          " layers of model '", spec.name(),
          "'); expected exactly those adapters (another target set or model?)"));
    }
  }
  return runs;
}

// Where a prefix's values are in `file`: "prompt_embeddings" present,
// shaped and typed as expected; then no other tensor.
absl::StatusOr<std::vector<Run>> PrefixRuns(const std::string& path, const SafetensorsFile& file,
                                            const ModelSpec& spec, const Peft& peft) {
  const int64_t k = PrefixTokens(peft);
  const SafetensorsTensor* t = file.Find(kPromptEmbeddings);
  if (t == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        path, ": no tensor '", kPromptEmbeddings, "': the prefix of PEFT's prefix tuning that "
        "the config's peft_type PREFIX_TUNING asks for; the file holds ", file.tensors().size(),
        " tensors"));
  }
  const std::vector<int64_t> want = PromptEmbeddingsShape(spec, k);
  if (t->shape != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": tensor '", t->name, "' has shape ", ShapeString(t->shape), "; expected ",
        ShapeString(want), " = [num_virtual_tokens, num_layers · 2 · token_dim] with ",
        "num_virtual_tokens ", k, ", num_layers ", spec.num_layers(), " and token_dim ",
        KvWidth(spec), " of model '", spec.name(), "'"));
  }
  RETURN_IF_ERROR(CheckDType(path, *t));
  for (const SafetensorsTensor& other : file.tensors()) {
    if (&other != t) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": tensor '", other.name, "' is not part of a prefix; expected '",
          kPromptEmbeddings, "' alone (another PEFT method's adapters?)"));
    }
  }
  std::vector<Run> runs;
  const int64_t kv = KvWidth(spec);
  ForEachPrefixRun(spec, k, [&](int64_t l, int64_t block_offset, int64_t prompt_offset) {
    runs.push_back({t, prompt_offset, kv, l, block_offset});
  });
  return runs;
}

// Reads the config's JSON and checks its keys; every error names the file.
class ConfigReader {
 public:
  ConfigReader(std::string path, const ModelSpec& spec) : path_(std::move(path)), spec_(spec) {}

  absl::StatusOr<Peft> Read() {
    std::string text;
    RETURN_IF_ERROR(ReadFileToString(path_, &text));
    Json root;
    try {
      root = Json::parse(text);
    } catch (const Json::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(path_, ": not valid JSON: ", e.what()));
    }
    if (!root.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path_, ": not a JSON object but ", Show(root)));
    }
    Peft peft;
    const Json& type = Member(root, "peft_type");
    if (type == "LORA") {
      RETURN_IF_ERROR(ReadLora(root, &peft));
    } else if (type == "PREFIX_TUNING") {
      RETURN_IF_ERROR(ReadPrefix(root, &peft));
    } else {
      return Error("peft_type", type,
                   "\"LORA\" or \"PREFIX_TUNING\" (LoRA adapters and prefix tuning are the "
                   "PEFT methods supported)");
    }
    const Json& saved = Member(root, "modules_to_save");
    if (!saved.is_null() && !(saved.is_array() && saved.empty())) {
      return Error("modules_to_save", saved,
                   "null (fully trained modules beside the adapters are not supported)");
    }
    const absl::Status valid = ValidatePeft(spec_, peft);
    if (!valid.ok()) {
      return absl::Status(valid.code(), absl::StrCat(path_, ": ", valid.message()));
    }
    return peft;
  }

 private:
  static const Json& Member(const Json& object, const char* key) {
    static const Json* const kNull = new Json();
    const auto it = object.find(key);
    return it == object.end() ? *kNull : *it;
  }

  absl::Status Error(absl::string_view key, const Json& value, absl::string_view expected) const {
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": \"", key, "\" is ", value.is_null() ? "missing (or null)" : Show(value),
        "; expected ", expected));
  }

  absl::Status RequireFalse(const Json& root, const char* key, absl::string_view why) const {
    const Json& value = Member(root, key);
    if (value.is_null() || value == false) return absl::OkStatus();
    return Error(key, value, absl::StrCat("false or absent: ", why));
  }

  // `key` is the integer `want`, what `spec_` has.
  absl::Status RequireInteger(const Json& root, const char* key, int64_t want,
                              absl::string_view what) const {
    const Json& value = Member(root, key);
    if (value.is_number_integer() && value.get<int64_t>() == want) return absl::OkStatus();
    return Error(key, value, absl::StrCat(want, " (", what, " of model '", spec_.name(), "')"));
  }

  absl::Status ReadLora(const Json& root, Peft* peft) const {
    peft->set_kind(LORA);
    const Json& r = Member(root, "r");
    if (!r.is_number_integer() || r.get<int64_t>() < 1 || r.get<int64_t>() > kMaxLoraRank) {
      return Error("r", r, absl::StrCat("an integer rank in [1, ", kMaxLoraRank, "]"));
    }
    peft->set_lora_rank(static_cast<int32_t>(r.get<int64_t>()));
    const Json& alpha = Member(root, "lora_alpha");
    if (!alpha.is_number()) return Error("lora_alpha", alpha, "a number > 0 (alpha / r scales)");
    peft->set_lora_alpha(alpha.get<double>());
    const Json& dropout = Member(root, "lora_dropout");
    if (!dropout.is_null() && !dropout.is_number()) {
      return Error("lora_dropout", dropout, "a number (ignored: no dropout in ZO forward passes)");
    }

    RETURN_IF_ERROR(RequireFalse(root, "use_rslora", "scaling alpha / sqrt(r) is not supported"));
    RETURN_IF_ERROR(RequireFalse(root, "fan_in_fan_out", "transposed (Conv1D) weights are not "
                                                         "supported"));
    RETURN_IF_ERROR(RequireFalse(root, "use_dora", "DoRA is not supported"));
    RETURN_IF_ERROR(RequireFalse(root, "lora_bias", "adapter biases are not supported"));
    const Json& bias = Member(root, "bias");
    if (!bias.is_null() && bias != "none") {
      return Error("bias", bias, "\"none\" (training biases beside the adapters is not supported)");
    }
    for (const char* key : {"layers_to_transform", "layers_pattern"}) {
      const Json& value = Member(root, key);
      if (!value.is_null()) {
        return Error(key, value, "null (adapters on every layer; per-layer adapters are not "
                                 "supported)");
      }
    }
    for (const char* key : {"rank_pattern", "alpha_pattern"}) {
      const Json& value = Member(root, key);
      if (!value.is_null() && !(value.is_object() && value.empty())) {
        return Error(key, value, "null or {} (one r and alpha for every module)");
      }
    }
    return ReadTargets(Member(root, "target_modules"), peft);
  }

  absl::Status ReadPrefix(const Json& root, Peft* peft) const {
    peft->set_kind(PREFIX);
    const Json& k = Member(root, "num_virtual_tokens");
    if (!k.is_number_integer() || k.get<int64_t>() < 1 || k.get<int64_t>() > kMaxPrefixTokens) {
      return Error("num_virtual_tokens", k,
                   absl::StrCat("an integer count of virtual tokens in [1, ", kMaxPrefixTokens,
                                "]"));
    }
    peft->set_prefix_tokens(static_cast<int32_t>(k.get<int64_t>()));
    RETURN_IF_ERROR(RequireInteger(
        root, "token_dim", KvWidth(spec_),
        absl::StrCat("the width of the keys and values, ", KvHeads(spec_),
                     " key/value heads of head_dim ", HeadDim(spec_), ",")));
    RETURN_IF_ERROR(RequireInteger(root, "num_layers", spec_.num_layers(),
                                   "the decoder blocks"));
    RETURN_IF_ERROR(RequireInteger(root, "num_attention_heads", KvHeads(spec_),
                                   "the key/value heads"));
    const Json& submodules = Member(root, "num_transformer_submodules");
    if (!submodules.is_null() && submodules != 1) {
      return Error("num_transformer_submodules", submodules,
                   "1 (a decoder-only model; 2 prefixes an encoder-decoder's two stacks)");
    }
    return RequireFalse(root, "prefix_projection",
                        "a reparametrised prefix needs its MLP; zosched trains the prefix "
                        "directly");
  }

  // `spec_`'s module names, target by target.
  std::vector<std::pair<std::string, LoraTarget>> ValidNames() const {
    std::vector<std::pair<std::string, LoraTarget>> names;
    for (int t = LORA_QUERY; t <= LORA_DOWN; ++t) {
      const LoraTarget target = static_cast<LoraTarget>(t);
      Peft probe;
      probe.set_kind(LORA);
      probe.set_lora_rank(1);
      probe.set_lora_alpha(1);
      probe.add_lora_targets(target);
      if (!ValidatePeft(spec_, probe).ok()) continue;  // e.g. gate without a gated FFN
      names.emplace_back(LoraTargetName(spec_, target), target);
    }
    return names;
  }

  absl::Status ReadTargets(const Json& modules, Peft* peft) const {
    std::vector<std::string> names;
    if (modules.is_string()) {
      names.push_back(modules.get<std::string>());
    } else if (modules.is_array() && !modules.empty()) {
      for (const Json& m : modules) {
        if (!m.is_string()) {
          return Error("target_modules", modules, "a list of module names (strings)");
        }
        names.push_back(m.get<std::string>());
      }
    } else {
      return Error("target_modules", modules, "a non-empty list of module names or one name");
    }
    const std::vector<std::pair<std::string, LoraTarget>> valid = ValidNames();
    std::vector<LoraTarget> targets;
    for (const std::string& name : names) {
      const auto it = std::find_if(valid.begin(), valid.end(),
                                   [&](const auto& v) { return v.first == name; });
      if (it == valid.end()) {
        std::vector<std::string> listed;
        for (const auto& v : valid) listed.push_back(absl::StrCat("\"", v.first, "\""));
        return absl::InvalidArgumentError(absl::StrCat(
            path_, ": \"target_modules\" names \"", name, "\", which is not a module of model '",
            spec_.name(), "' that LoRA adapts here; valid names: ", absl::StrJoin(listed, ", ")));
      }
      if (std::find(targets.begin(), targets.end(), it->second) == targets.end()) {
        targets.push_back(it->second);
      }
    }
    std::sort(targets.begin(), targets.end());
    for (LoraTarget t : targets) peft->add_lora_targets(t);
    return absl::OkStatus();
  }

  const std::string path_;
  const ModelSpec& spec_;
};

}  // namespace

absl::Status SavePeftAdapters(const std::string& dir, const ModelSpec& spec, const Peft& peft,
                              const std::vector<std::vector<float>>& blocks, DType dtype,
                              const std::string& base_model) {
  RETURN_IF_ERROR(CheckAdapters(spec, peft));
  if (!IsPeftDType(dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot save PEFT adapters in dtype ", DType_Name(dtype), "; expected FP32, FP16 or BF16"));
  }
  const int64_t params = AdapterParams(spec, peft);
  if (static_cast<int64_t>(blocks.size()) != spec.num_layers()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "saving PEFT adapters to ", dir, ": ", blocks.size(), " blocks of adapters given; model '",
        spec.name(), "' has ", spec.num_layers(), " (one ADAPTER_PART per decoder block)"));
  }
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (static_cast<int64_t>(blocks[b].size()) != params) {
      return absl::InvalidArgumentError(absl::StrCat(
          "saving PEFT adapters to ", dir, ": block ", b, " holds ", blocks[b].size(),
          " floats; its ADAPTER_PART has AdapterParams = ", params, " (",
          DescribeAdapters(spec, peft), ")"));
    }
  }
  RETURN_IF_ERROR(MakeDirectory(dir));

  std::string data;  // every tensor's bytes, converted; the tensors view it
  RETURN_IF_ERROR(WriteSafetensors(absl::StrCat(dir, "/", kPeftWeightsFile),
                                   PeftTensors(spec, peft, blocks, dtype, &data),
                                   {{"format", "pt"}}));
  return WriteFileAtomically(absl::StrCat(dir, "/", kPeftConfigFile),
                             PeftConfigJson(spec, peft, base_model).dump(2) + "\n");
}

absl::StatusOr<Peft> ReadPeftConfig(const std::string& dir, const ModelSpec& spec) {
  return ConfigReader(absl::StrCat(dir, "/", kPeftConfigFile), spec).Read();
}

absl::StatusOr<std::vector<std::vector<float>>> LoadPeftAdapters(const std::string& dir,
                                                                 const ModelSpec& spec,
                                                                 const Peft& peft) {
  const std::string path = absl::StrCat(dir, "/", kPeftWeightsFile);
  {
    const absl::Status valid = CheckAdapters(spec, peft);
    if (!valid.ok()) {
      return absl::Status(valid.code(), absl::StrCat("loading ", path, ": ", valid.message()));
    }
  }
  ASSIGN_OR_RETURN(SafetensorsFile file, ReadSafetensors(path));
  ASSIGN_OR_RETURN(const std::vector<Run> runs, TrainsLora(peft)
                                                    ? LoraRuns(path, file, spec, peft)
                                                    : PrefixRuns(path, file, spec, peft));

  std::set<const SafetensorsTensor*> finite;
  std::vector<std::vector<float>> blocks(spec.num_layers(),
                                         std::vector<float>(AdapterParams(spec, peft)));
  for (const Run& run : runs) {
    const SafetensorsTensor& t = *run.tensor;
    const int64_t element_bytes = DTypeBytes(t.dtype);
    if (finite.insert(&t).second) {
      const int64_t bad = FirstNonFinite(t.dtype, t.bytes.data(), Elements(t.shape));
      if (bad >= 0) {
        float value = 0;
        ConvertBuffer(t.dtype, t.bytes.data() + bad * element_bytes, FP32, &value, 1);
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": tensor '", t.name, "' holds ", value, " at element ", bad,
            "; expected finite values (a NaN or Inf adapter makes every loss NaN)"));
      }
    }
    ConvertBuffer(t.dtype, t.bytes.data() + run.from * element_bytes, FP32,
                  blocks[run.layer].data() + run.to, run.count);
  }
  return blocks;
}

}  // namespace zosched
