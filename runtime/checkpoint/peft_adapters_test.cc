#include "runtime/checkpoint/peft_adapters.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "gtest/gtest.h"
#include "models/adapters.h"
#include "models/model_spec.h"
#include "models/peft_for_test.h"
#include "models/zoo_model_for_test.h"
#include "nlohmann/json.hpp"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/dtype/convert.h"

namespace zosched {
namespace {

using Json = nlohmann::json;

// A directory path under TEST_TMPDIR, new to this test (not created).
std::string FreshDir(const std::string& name) {
  static int count = 0;
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/peft_", name, "_", count++);
}

// Adapters with a distinct value at every element. `bf16_exact` keeps them
// to k / 64 with |k| <= 128: 8 significant bits, exact in BF16.
std::vector<std::vector<float>> Adapters(const ModelSpec& spec, const Peft& peft,
                                         bool bf16_exact) {
  std::vector<std::vector<float>> blocks(spec.num_layers(),
                                         std::vector<float>(AdapterParams(spec, peft)));
  int64_t k = 0;
  for (std::vector<float>& block : blocks) {
    for (float& x : block) {
      x = bf16_exact ? static_cast<float>(k % 257 - 128) / 64.0f
                     : static_cast<float>(std::sin(0.37 * k) * 0.01 + 1e-7 * k);
      ++k;
    }
  }
  return blocks;
}

bool Bitwise(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size() ||
        std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0) {
      return false;
    }
  }
  return true;
}

Json ReadConfigJson(const std::string& dir) {
  std::string text;
  EXPECT_TRUE(ReadFileToString(absl::StrCat(dir, "/adapter_config.json"), &text).ok());
  return Json::parse(text);
}

void WriteConfigJson(const std::string& dir, const Json& config) {
  ASSERT_TRUE(WriteFile(absl::StrCat(dir, "/adapter_config.json"), config.dump(2)).ok());
}

// Rewrites dir's adapter_model.safetensors through `edit`, which may change
// the tensors (their bytes owned by `storage`).
template <typename Edit>
void RewriteTensors(const std::string& dir, Edit edit) {
  const std::string path = absl::StrCat(dir, "/adapter_model.safetensors");
  std::vector<SafetensorsTensor> tensors;
  std::vector<std::string> storage;
  {
    absl::StatusOr<SafetensorsFile> file = ReadSafetensors(path);
    ASSERT_TRUE(file.ok()) << file.status();
    storage.reserve(file->tensors().size() + 8);
    for (const SafetensorsTensor& t : file->tensors()) {
      storage.emplace_back(t.bytes);
      SafetensorsTensor copy = t;
      copy.bytes = storage.back();
      tensors.push_back(copy);
    }
  }
  edit(tensors, storage);
  ASSERT_TRUE(WriteSafetensors(path, tensors, {{"format", "pt"}}).ok());
}

// Saves `peft`'s adapters and returns the directory.
std::string Saved(const ModelSpec& spec, const Peft& peft, DType dtype = FP32) {
  const std::string dir = FreshDir(spec.name());
  const absl::Status saved =
      SavePeftAdapters(dir, spec, peft, Adapters(spec, peft, false), dtype, "facebook/opt-125m");
  EXPECT_TRUE(saved.ok()) << saved;
  return dir;
}

void ExpectError(const absl::Status& status, absl::StatusCode code,
                 const std::vector<std::string>& says) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& s : says) {
    EXPECT_NE(status.message().find(s), absl::string_view::npos)
        << "'" << s << "' not in " << status;
  }
}

TEST(PeftAdaptersTest, OptFp32RoundTripIsBitwise) {
  const ModelSpec opt = Zoo("opt-tiny");
  const Peft peft = LoraPeft(8, 16);
  const std::vector<std::vector<float>> blocks = Adapters(opt, peft, false);
  const std::string dir = FreshDir("opt_fp32");
  ASSERT_TRUE(SavePeftAdapters(dir, opt, peft, blocks, FP32, "facebook/opt-125m").ok());

  absl::StatusOr<Peft> read = ReadPeftConfig(dir, opt);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->kind(), LORA);
  EXPECT_EQ(read->lora_rank(), 8);
  EXPECT_EQ(read->lora_alpha(), 16);
  EXPECT_EQ(LoraTargetsOf(*read), LoraTargetsOf(peft));

  absl::StatusOr<std::vector<std::vector<float>>> loaded = LoadPeftAdapters(dir, opt, *read);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(Bitwise(*loaded, blocks));

  // PEFT's names and shapes, in F32, with metadata {"format": "pt"}.
  absl::StatusOr<SafetensorsFile> file =
      ReadSafetensors(absl::StrCat(dir, "/adapter_model.safetensors"));
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->tensors().size(), 2u * 2 * opt.num_layers());  // q, v: A and B
  const SafetensorsTensor* a =
      file->Find("base_model.model.model.decoder.layers.3.self_attn.v_proj.lora_A.weight");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype_name, "F32");
  EXPECT_EQ(a->shape, (std::vector<int64_t>{8, opt.hidden_size()}));
  EXPECT_EQ(file->metadata().at("format"), "pt");
}

TEST(PeftAdaptersTest, LlamaBf16RoundTripWithOtherTargets) {
  const ModelSpec llama = Zoo("llama-tiny");
  const Peft peft = LoraPeft(4, 8.5, {LORA_DOWN, LORA_GATE, LORA_KEY, LORA_OUTPUT});
  const std::vector<std::vector<float>> blocks = Adapters(llama, peft, true);
  const std::string dir = FreshDir("llama_bf16");
  ASSERT_TRUE(SavePeftAdapters(dir, llama, peft, blocks, BF16, "meta-llama/Llama-3.1-8B").ok());

  absl::StatusOr<Peft> read = ReadPeftConfig(dir, llama);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->lora_rank(), 4);
  EXPECT_EQ(read->lora_alpha(), 8.5);
  EXPECT_EQ(LoraTargetsOf(*read), LoraTargetsOf(peft));

  absl::StatusOr<std::vector<std::vector<float>>> loaded = LoadPeftAdapters(dir, llama, *read);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(Bitwise(*loaded, blocks));

  absl::StatusOr<SafetensorsFile> file =
      ReadSafetensors(absl::StrCat(dir, "/adapter_model.safetensors"));
  ASSERT_TRUE(file.ok()) << file.status();
  const SafetensorsTensor* b =
      file->Find("base_model.model.model.layers.0.mlp.down_proj.lora_B.weight");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->dtype_name, "BF16");
  EXPECT_EQ(b->shape, (std::vector<int64_t>{llama.hidden_size(), 4}));
  EXPECT_EQ(file->Find("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"), nullptr);
}

// FP16 rounds to nearest; what it rounds to comes back.
TEST(PeftAdaptersTest, Fp16RoundsOnSave) {
  const ModelSpec opt = Zoo("opt-tiny");
  const Peft peft = LoraPeft(2, 4, {LORA_UP});
  std::vector<std::vector<float>> blocks = Adapters(opt, peft, false);
  const std::string dir = FreshDir("opt_fp16");
  ASSERT_TRUE(SavePeftAdapters(dir, opt, peft, blocks, FP16, "").ok());
  absl::StatusOr<std::vector<std::vector<float>>> loaded = LoadPeftAdapters(dir, opt, peft);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (std::vector<float>& block : blocks) {
    for (float& x : block) x = Fp16ToFloat(FloatToFp16(x));
  }
  EXPECT_TRUE(Bitwise(*loaded, blocks));
}

TEST(PeftAdaptersTest, ConfigIsPeftsJson) {
  const ModelSpec opt = Zoo("opt-tiny");
  const std::string dir = Saved(opt, LoraPeft(8, 16));
  const Json config = ReadConfigJson(dir);
  EXPECT_EQ(config["peft_type"], "LORA");
  EXPECT_EQ(config["task_type"], "CAUSAL_LM");
  EXPECT_EQ(config["r"], 8);
  EXPECT_TRUE(config["lora_alpha"].is_number_integer()) << config["lora_alpha"];
  EXPECT_EQ(config["lora_alpha"], 16);
  EXPECT_EQ(config["target_modules"], Json::array({"q_proj", "v_proj"}));
  EXPECT_EQ(config["lora_dropout"], 0.0);
  EXPECT_EQ(config["bias"], "none");
  EXPECT_EQ(config["fan_in_fan_out"], false);
  EXPECT_EQ(config["inference_mode"], true);
  EXPECT_EQ(config["base_model_name_or_path"], "facebook/opt-125m");
  EXPECT_TRUE(config["modules_to_save"].is_null());
  EXPECT_TRUE(config["revision"].is_null());
  EXPECT_EQ(config["init_lora_weights"], true);
  EXPECT_EQ(config["use_rslora"], false);
  EXPECT_EQ(config.size(), 14u);
  // No temporary file is left beside the final ones.
  for (const char* tmp : {"/adapter_config.json.tmp", "/adapter_model.safetensors.tmp"}) {
    EXPECT_FALSE(RegularFileBytes(absl::StrCat(dir, tmp), "a file").ok()) << tmp;
  }

  const ModelSpec llama = Zoo("llama-tiny");
  const Json llama_config =
      ReadConfigJson(Saved(llama, LoraPeft(4, 8.5, {LORA_UP, LORA_GATE, LORA_QUERY})));
  EXPECT_TRUE(llama_config["lora_alpha"].is_number_float());
  EXPECT_EQ(llama_config["lora_alpha"], 8.5);
  EXPECT_EQ(llama_config["target_modules"], Json::array({"gate_proj", "q_proj", "up_proj"}));

  // Saving again over the directory replaces both files.
  const Peft lora = LoraPeft(2, 4);
  ASSERT_TRUE(SavePeftAdapters(dir, opt, lora, Adapters(opt, lora, false), FP32, "").ok());
  EXPECT_EQ(ReadConfigJson(dir)["r"], 2);
}

// What PEFT itself writes or accepts: a string target_modules, a dropout,
// options at their defaults; tensors without the prefix or with the older
// ".default" adapter name.
TEST(PeftAdaptersTest, ReadsPeftsOtherSpellings) {
  const ModelSpec opt = Zoo("opt-tiny");
  const Peft peft = LoraPeft(8, 16, {LORA_QUERY});
  const std::string dir = Saved(opt, peft);
  Json config = ReadConfigJson(dir);
  config["target_modules"] = "q_proj";
  config["lora_dropout"] = 0.05;
  config["layers_to_transform"] = nullptr;
  config["rank_pattern"] = Json::object();
  config["use_dora"] = false;
  WriteConfigJson(dir, config);
  absl::StatusOr<Peft> read = ReadPeftConfig(dir, opt);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(LoraTargetsOf(*read), std::vector<LoraTarget>{LORA_QUERY});

  RewriteTensors(dir, [](std::vector<SafetensorsTensor>& tensors, std::vector<std::string>&) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      std::string& name = tensors[i].name;
      name = name.substr(std::string("base_model.model.").size());
      if (i % 2 == 0) name.insert(name.size() - std::string(".weight").size(), ".default");
    }
  });
  absl::StatusOr<std::vector<std::vector<float>>> loaded = LoadPeftAdapters(dir, opt, *read);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(Bitwise(*loaded, Adapters(opt, peft, false)));
}

TEST(PeftAdaptersTest, RefusesMissingFiles) {
  const ModelSpec opt = Zoo("opt-tiny");
  const std::string dir = FreshDir("missing");
  ExpectError(ReadPeftConfig(dir, opt).status(), absl::StatusCode::kNotFound,
              {absl::StrCat(dir, "/adapter_config.json")});
  ExpectError(LoadPeftAdapters(dir, opt, LoraPeft(8, 16)).status(), absl::StatusCode::kNotFound,
              {absl::StrCat(dir, "/adapter_model.safetensors")});
}

TEST(PeftAdaptersTest, RefusesMissingAndExtraTensors) {
  const ModelSpec opt = Zoo("opt-tiny");
  const std::string dir = Saved(opt, LoraPeft(8, 16));  // q_proj, v_proj
  ExpectError(LoadPeftAdapters(dir, opt, LoraPeft(8, 16, {LORA_QUERY, LORA_KEY, LORA_VALUE}))
                  .status(),
              absl::StatusCode::kNotFound,
              {"adapter_model.safetensors",
               "base_model.model.model.decoder.layers.0.self_attn.k_proj.lora_A.weight",
               "layer 0"});
  ExpectError(LoadPeftAdapters(dir, opt, LoraPeft(8, 16, {LORA_QUERY})).status(),
              absl::StatusCode::kInvalidArgument,
              {"adapter_model.safetensors",
               "'base_model.model.model.decoder.layers.0.self_attn.v_proj.lora_A.weight' is not an "
               "adapter of this config"});

  // One tensor dropped from the file.
  RewriteTensors(dir, [](std::vector<SafetensorsTensor>& tensors, std::vector<std::string>&) {
    tensors.erase(tensors.begin() + 5);
  });
  const absl::Status missing = LoadPeftAdapters(dir, opt, LoraPeft(8, 16)).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound) << missing;
  EXPECT_NE(missing.message().find("no tensor 'base_model.model."), absl::string_view::npos)
      << missing;
}

TEST(PeftAdaptersTest, RefusesWrongShapeAndRank) {
  const ModelSpec opt = Zoo("opt-tiny");
  const std::string dir = Saved(opt, LoraPeft(8, 16));
  const std::string h = absl::StrCat(opt.hidden_size());

  // The config says r = 4; the tensors have rank 8.
  Json config = ReadConfigJson(dir);
  config["r"] = 4;
  WriteConfigJson(dir, config);
  absl::StatusOr<Peft> read = ReadPeftConfig(dir, opt);
  ASSERT_TRUE(read.ok()) << read.status();
  ExpectError(LoadPeftAdapters(dir, opt, *read).status(), absl::StatusCode::kInvalidArgument,
              {"base_model.model.model.decoder.layers.0.self_attn.q_proj.lora_A.weight",
               absl::StrCat("has shape [8, ", h, "]; expected [4, ", h, "]"),
               "rank 8 in the file; the config says r = 4"});

  // A B of the wrong width.
  RewriteTensors(dir, [&](std::vector<SafetensorsTensor>& tensors,
                          std::vector<std::string>& storage) {
    for (SafetensorsTensor& t : tensors) {
      if (t.name == "base_model.model.model.decoder.layers.2.self_attn.v_proj.lora_B.weight") {
        t.shape = {opt.hidden_size() - 1, 8};
        storage.emplace_back(t.shape[0] * 8 * sizeof(float), '\0');
        t.bytes = storage.back();
      }
    }
  });
  ExpectError(LoadPeftAdapters(dir, opt, LoraPeft(8, 16)).status(),
              absl::StatusCode::kInvalidArgument,
              {"adapter_model.safetensors", "layers.2.self_attn.v_proj.lora_B.weight",
               absl::StrCat("has shape [", opt.hidden_size() - 1, ", 8]; expected [", h, ", 8]")});
}

TEST(PeftAdaptersTest, RefusesNonFiniteValues) {
  const ModelSpec opt = Zoo("opt-tiny");
  const Peft peft = LoraPeft(2, 4);
  std::vector<std::vector<float>> blocks = Adapters(opt, peft, false);
  blocks[1][3] = std::numeric_limits<float>::quiet_NaN();
  const std::string dir = FreshDir("nan");
  ASSERT_TRUE(SavePeftAdapters(dir, opt, peft, blocks, BF16, "").ok());
  ExpectError(LoadPeftAdapters(dir, opt, peft).status(), absl::StatusCode::kInvalidArgument,
              {"layers.1.self_attn.q_proj.lora_A.weight", "nan at element 3"});
}

TEST(PeftAdaptersTest, RefusesConfigsItCannotRun) {
  const ModelSpec opt = Zoo("opt-tiny");
  const std::string dir = Saved(opt, LoraPeft(8, 16));
  const Json good = ReadConfigJson(dir);
  auto refused = [&](const char* key, const Json& value, const std::vector<std::string>& says) {
    Json config = good;
    config[key] = value;
    WriteConfigJson(dir, config);
    std::vector<std::string> all = says;
    all.push_back("adapter_config.json");
    ExpectError(ReadPeftConfig(dir, opt).status(), absl::StatusCode::kInvalidArgument, all);
  };
  refused("target_modules", Json::array({"q_proj", "c_attn"}),
          {"\"c_attn\"", "valid names: \"q_proj\", \"k_proj\", \"v_proj\", \"out_proj\", "
                         "\"fc1\", \"fc2\""});
  refused("target_modules", "gate_proj", {"\"gate_proj\"", "valid names"});
  refused("peft_type", "IA3", {"\"peft_type\"", "\"LORA\""});
  refused("r", nullptr, {"\"r\" is missing"});
  refused("r", 2.5, {"\"r\" is 2.5"});
  refused("lora_alpha", "16", {"\"lora_alpha\""});
  refused("lora_alpha", -1, {"lora_alpha -1 is not a finite number > 0"});
  refused("use_rslora", true, {"\"use_rslora\" is true"});
  refused("fan_in_fan_out", true, {"\"fan_in_fan_out\" is true"});
  refused("bias", "lora_only", {"\"bias\" is \"lora_only\"", "\"none\""});
  refused("layers_to_transform", Json::array({0, 1}), {"\"layers_to_transform\""});
  refused("layers_pattern", "layers", {"\"layers_pattern\""});
  refused("alpha_pattern", Json::object({{"q_proj", 32}}), {"\"alpha_pattern\""});
  refused("modules_to_save", Json::array({"lm_head"}), {"\"modules_to_save\""});

  ASSERT_TRUE(WriteFile(absl::StrCat(dir, "/adapter_config.json"), "{\"r\": ").ok());
  ExpectError(ReadPeftConfig(dir, opt).status(), absl::StatusCode::kInvalidArgument,
              {"adapter_config.json: not valid JSON"});
}

TEST(PeftAdaptersTest, SaveRefusesBadArguments) {
  const ModelSpec opt = Zoo("opt-tiny");
  const Peft peft = LoraPeft(8, 16);
  std::vector<std::vector<float>> blocks = Adapters(opt, peft, false);
  const std::string dir = FreshDir("bad_save");

  std::vector<std::vector<float>> three(blocks.begin(), blocks.begin() + 3);
  ExpectError(SavePeftAdapters(dir, opt, peft, three, FP32, ""),
              absl::StatusCode::kInvalidArgument,
              {"3 blocks of adapters given; model 'opt-tiny' has 4"});
  blocks[2].pop_back();
  ExpectError(SavePeftAdapters(dir, opt, peft, blocks, FP32, ""),
              absl::StatusCode::kInvalidArgument,
              {"block 2 holds", absl::StrCat("AdapterParams = ", AdapterParams(opt, peft))});
  blocks[2].push_back(0);
  ExpectError(SavePeftAdapters(dir, opt, Peft(), blocks, FP32, ""),
              absl::StatusCode::kInvalidArgument, {"PEFT_NONE"});
  ExpectError(SavePeftAdapters(dir, opt, peft, blocks, DTYPE_UNSPECIFIED, ""),
              absl::StatusCode::kInvalidArgument, {"expected FP32, FP16 or BF16"});
  // Nothing was created.
  EXPECT_EQ(RegularFileBytes(dir, "a directory").status().code(), absl::StatusCode::kNotFound);

  const std::string orphan = absl::StrCat(FreshDir("no_parent"), "/adapters");
  ExpectError(SavePeftAdapters(orphan, opt, peft, blocks, FP32, ""), absl::StatusCode::kNotFound,
              {orphan, "its parent must exist"});
}


// The one tensor of a prefix's adapter_model.safetensors, in fp32.
std::vector<float> PromptEmbeddings(const std::string& dir, std::vector<int64_t>* shape) {
  absl::StatusOr<SafetensorsFile> file =
      ReadSafetensors(absl::StrCat(dir, "/adapter_model.safetensors"));
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return {};
  EXPECT_EQ(file->tensors().size(), 1u);
  const SafetensorsTensor* t = file->Find("prompt_embeddings");
  EXPECT_NE(t, nullptr);
  if (t == nullptr) return {};
  EXPECT_EQ(file->metadata().at("format"), "pt");
  *shape = t->shape;
  std::vector<float> values(t->shape[0] * t->shape[1]);
  ConvertBuffer(t->dtype, t->bytes.data(), FP32, values.data(), values.size());
  return values;
}

// OPT (kv = hidden) and a grouped-query LLaMA (kv = 2 heads · 16 < hidden
// 64), in every dtype: values exact in BF16 come back bitwise.
TEST(PeftPrefixTest, RoundTripOptAndGqaLlama) {
  for (const char* name : {"opt-tiny", "llama-tiny"}) {
    const ModelSpec spec = Zoo(name);
    const int64_t kv = KvWidth(spec);
    EXPECT_EQ(kv, std::string(name) == "opt-tiny" ? 64 : 32);
    for (DType dtype : {FP32, FP16, BF16}) {
      SCOPED_TRACE(absl::StrCat(name, " ", DType_Name(dtype)));
      const Peft peft = PrefixPeft(5);
      const std::vector<std::vector<float>> blocks = Adapters(spec, peft, true);
      ASSERT_EQ(blocks[0].size(), 2u * 5 * kv);
      const std::string dir = FreshDir(absl::StrCat("prefix_", name));
      ASSERT_TRUE(SavePeftAdapters(dir, spec, peft, blocks, dtype, "facebook/opt-125m").ok());

      absl::StatusOr<Peft> read = ReadPeftConfig(dir, spec);
      ASSERT_TRUE(read.ok()) << read.status();
      EXPECT_EQ(read->kind(), PREFIX);
      EXPECT_EQ(read->prefix_tokens(), 5);
      EXPECT_EQ(read->lora_rank(), 0);

      absl::StatusOr<std::vector<std::vector<float>>> loaded = LoadPeftAdapters(dir, spec, *read);
      ASSERT_TRUE(loaded.ok()) << loaded.status();
      EXPECT_TRUE(Bitwise(*loaded, blocks));

      absl::StatusOr<SafetensorsFile> file =
          ReadSafetensors(absl::StrCat(dir, "/adapter_model.safetensors"));
      ASSERT_TRUE(file.ok()) << file.status();
      ASSERT_EQ(file->tensors().size(), 1u);
      EXPECT_EQ(file->tensors()[0].name, "prompt_embeddings");
      EXPECT_EQ(file->tensors()[0].dtype, dtype);
      EXPECT_EQ(file->tensors()[0].shape, (std::vector<int64_t>{5, spec.num_layers() * 2 * kv}));
    }
  }
}

// Element [j, 2l · kv + c] is block l's prefix_keys[j, c] and
// [j, (2l + 1) · kv + c] its prefix_values[j, c], both ways.
TEST(PeftPrefixTest, PromptEmbeddingsHoldEachLayersKeyThenValuePerToken) {
  const ModelSpec llama = Zoo("llama-tiny");  // 4 layers, kv = 32
  const int64_t k = 3, kv = 32, layers = 4, width = layers * 2 * kv;
  const Peft peft = PrefixPeft(k);
  // Block l: keys [k, kv] then values [k, kv]; the value says where it is.
  auto code = [&](int64_t l, int64_t value, int64_t j, int64_t c) {
    return static_cast<float>(l * 10000 + value * 1000 + j * 100 + c);
  };
  std::vector<std::vector<float>> blocks(layers, std::vector<float>(2 * k * kv));
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t value = 0; value < 2; ++value) {
      for (int64_t j = 0; j < k; ++j) {
        for (int64_t c = 0; c < kv; ++c) blocks[l][(value * k + j) * kv + c] = code(l, value, j, c);
      }
    }
  }
  const std::string dir = FreshDir("prefix_mapping");
  ASSERT_TRUE(SavePeftAdapters(dir, llama, peft, blocks, FP32, "").ok());
  std::vector<int64_t> shape;
  const std::vector<float> prompt = PromptEmbeddings(dir, &shape);
  ASSERT_EQ(shape, (std::vector<int64_t>{k, width}));
  for (int64_t j = 0; j < k; ++j) {
    for (int64_t l = 0; l < layers; ++l) {
      for (int64_t c = 0; c < kv; ++c) {
        EXPECT_EQ(prompt[j * width + 2 * l * kv + c], code(l, 0, j, c)) << j << " " << l;
        EXPECT_EQ(prompt[j * width + (2 * l + 1) * kv + c], code(l, 1, j, c)) << j << " " << l;
      }
    }
  }
  // By hand: token 1's row is layer 0's key, layer 0's value, layer 1's
  // key, ...; [1, 133] is layer 2's key (2 · 2 · 32 = 128), head 0, dim 5;
  // [2, 255] is layer 3's value, head 1, dim 15.
  EXPECT_EQ(prompt[1 * width + 0], 100.0f);
  EXPECT_EQ(prompt[1 * width + 32], 1100.0f);
  EXPECT_EQ(prompt[1 * width + 64], 10100.0f);
  EXPECT_EQ(prompt[1 * width + 133], 20105.0f);
  EXPECT_EQ(prompt[2 * width + 255], 31231.0f);

  // A file written by hand loads into the same places.
  RewriteTensors(dir, [&](std::vector<SafetensorsTensor>& tensors,
                          std::vector<std::string>& storage) {
    std::vector<float> hand(k * width);
    for (int64_t i = 0; i < k * width; ++i) hand[i] = static_cast<float>(i);
    storage.emplace_back(reinterpret_cast<const char*>(hand.data()), hand.size() * sizeof(float));
    tensors[0].bytes = storage.back();
  });
  absl::StatusOr<std::vector<std::vector<float>>> loaded = LoadPeftAdapters(dir, llama, peft);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t value = 0; value < 2; ++value) {
      for (int64_t j = 0; j < k; ++j) {
        for (int64_t c = 0; c < kv; ++c) {
          EXPECT_EQ((*loaded)[l][(value * k + j) * kv + c],
                    static_cast<float>(j * width + (2 * l + value) * kv + c));
        }
      }
    }
  }
  EXPECT_EQ((*loaded)[2][0 * k * kv + 1 * kv + 5], 389.0f);   // layer 2's key of token 1, c 5
  EXPECT_EQ((*loaded)[3][1 * k * kv + 2 * kv + 31], 767.0f);  // layer 3's value of token 2, c 31
}

TEST(PeftPrefixTest, ConfigIsPeftsPrefixTuningConfig) {
  const ModelSpec llama = Zoo("llama-tiny");
  const std::string dir = FreshDir("prefix_config");
  const Peft prefix = PrefixPeft(5);
  ASSERT_TRUE(SavePeftAdapters(dir, llama, prefix, Adapters(llama, prefix, false), FP32,
                               "meta-llama/Llama-3.2-1B")
                  .ok());
  const Json config = ReadConfigJson(dir);
  EXPECT_EQ(config["peft_type"], "PREFIX_TUNING");
  EXPECT_EQ(config["task_type"], "CAUSAL_LM");
  EXPECT_EQ(config["num_virtual_tokens"], 5);
  EXPECT_EQ(config["token_dim"], 32);            // kv_heads · head_dim, not hidden 64
  EXPECT_EQ(config["num_attention_heads"], 2);   // kv_heads
  EXPECT_EQ(config["num_layers"], 4);
  EXPECT_EQ(config["num_transformer_submodules"], 1);
  EXPECT_EQ(config["encoder_hidden_size"], 32);  // PEFT's default: token_dim
  EXPECT_EQ(config["prefix_projection"], false);
  EXPECT_EQ(config["inference_mode"], true);
  EXPECT_EQ(config["base_model_name_or_path"], "meta-llama/Llama-3.2-1B");
  EXPECT_TRUE(config["revision"].is_null());
  EXPECT_EQ(config.size(), 12u);

  const ModelSpec opt = Zoo("opt-tiny");
  const Json opt_config = ReadConfigJson(Saved(opt, PrefixPeft(2)));
  EXPECT_EQ(opt_config["token_dim"], 64);
  EXPECT_EQ(opt_config["num_attention_heads"], 4);

  // What PEFT itself writes beside them is read past.
  Json peft_written = config;
  peft_written["init_weights"] = nullptr;
  peft_written["modules_to_save"] = nullptr;
  peft_written["peft_version"] = "0.18.0";
  peft_written["auto_mapping"] = nullptr;
  peft_written["encoder_hidden_size"] = 64;
  peft_written.erase("num_transformer_submodules");
  WriteConfigJson(dir, peft_written);
  absl::StatusOr<Peft> read = ReadPeftConfig(dir, llama);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->prefix_tokens(), 5);
}

TEST(PeftPrefixTest, RefusesConfigsOfAnotherModelOrMethod) {
  const ModelSpec llama = Zoo("llama-tiny");
  const std::string dir = Saved(llama, PrefixPeft(5));
  const Json good = ReadConfigJson(dir);
  auto refused = [&](const char* key, const Json& value, const std::vector<std::string>& says) {
    Json config = good;
    config[key] = value;
    WriteConfigJson(dir, config);
    std::vector<std::string> all = says;
    all.push_back(absl::StrCat(dir, "/adapter_config.json: "));
    ExpectError(ReadPeftConfig(dir, llama).status(), absl::StatusCode::kInvalidArgument, all);
  };
  // PEFT before its grouped-query fix used the hidden size and query heads.
  refused("token_dim", 64,
          {"\"token_dim\" is 64; expected 32 (the width of the keys and values, 2 key/value "
           "heads of head_dim 16, of model 'llama-tiny')"});
  refused("num_attention_heads", 4,
          {"\"num_attention_heads\" is 4; expected 2 (the key/value heads of model "
           "'llama-tiny')"});
  refused("num_layers", 5,
          {"\"num_layers\" is 5; expected 4 (the decoder blocks of model 'llama-tiny')"});
  refused("num_layers", nullptr, {"\"num_layers\" is missing (or null); expected 4"});
  refused("prefix_projection", true,
          {"\"prefix_projection\" is true; expected false or absent: a reparametrised prefix "
           "needs its MLP; zosched trains the prefix directly"});
  refused("num_transformer_submodules", 2, {"\"num_transformer_submodules\" is 2; expected 1"});
  refused("num_virtual_tokens", nullptr, {"\"num_virtual_tokens\" is missing"});
  refused("num_virtual_tokens", 2.5, {"\"num_virtual_tokens\" is 2.5"});
  refused("num_virtual_tokens", 64, {"prefix_tokens 64 is out of range"});  // max_positions 64
  refused("modules_to_save", Json::array({"lm_head"}), {"\"modules_to_save\""});
  refused("peft_type", "P_TUNING",
          {"\"peft_type\" is \"P_TUNING\"; expected \"LORA\" or \"PREFIX_TUNING\""});
  refused("peft_type", nullptr, {"\"peft_type\" is missing", "\"PREFIX_TUNING\""});
}

TEST(PeftPrefixTest, RefusesTensorsNotOfTheConfigsPrefix) {
  const ModelSpec llama = Zoo("llama-tiny");
  const std::string dir = Saved(llama, PrefixPeft(5));
  const std::string file = absl::StrCat(dir, "/adapter_model.safetensors");

  // The config says k = 4; the file has 5 rows. Another model's layers.
  ExpectError(LoadPeftAdapters(dir, llama, PrefixPeft(4)).status(),
              absl::StatusCode::kInvalidArgument,
              {file, "tensor 'prompt_embeddings' has shape [5, 256]; expected [4, 256] = "
                     "[num_virtual_tokens, num_layers · 2 · token_dim] with num_virtual_tokens 4, "
                     "num_layers 4 and token_dim 32 of model 'llama-tiny'"});
  ExpectError(LoadPeftAdapters(dir, Zoo("opt-tiny"), PrefixPeft(5)).status(),
              absl::StatusCode::kInvalidArgument,
              {"has shape [5, 256]; expected [5, 512]"});
  // LoRA adapters are not a prefix, nor a prefix LoRA adapters.
  ExpectError(LoadPeftAdapters(Saved(llama, LoraPeft(2, 4)), llama, PrefixPeft(5)).status(),
              absl::StatusCode::kNotFound, {"no tensor 'prompt_embeddings'", "holds 16 tensors"});
  ExpectError(LoadPeftAdapters(dir, llama, LoraPeft(2, 4)).status(), absl::StatusCode::kNotFound,
              {"no tensor 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight'"});

  // An extra tensor.
  RewriteTensors(dir, [](std::vector<SafetensorsTensor>& tensors, std::vector<std::string>&) {
    SafetensorsTensor extra = tensors[0];
    extra.name = "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight";
    tensors.push_back(extra);
  });
  ExpectError(LoadPeftAdapters(dir, llama, PrefixPeft(5)).status(),
              absl::StatusCode::kInvalidArgument,
              {file, "tensor 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight' is "
                     "not part of a prefix; expected 'prompt_embeddings' alone"});

  // F64.
  RewriteTensors(dir, [](std::vector<SafetensorsTensor>& tensors,
                         std::vector<std::string>& storage) {
    tensors.erase(tensors.begin());  // the extra one, first by name
    ASSERT_EQ(tensors.size(), 1u);
    ASSERT_EQ(tensors[0].name, "prompt_embeddings");
    storage.emplace_back(tensors[0].bytes.size() * 2, '\0');
    tensors[0].bytes = storage.back();
    tensors[0].dtype = DTYPE_UNSPECIFIED;
    tensors[0].dtype_name = "F64";
  });
  ExpectError(LoadPeftAdapters(dir, llama, PrefixPeft(5)).status(),
              absl::StatusCode::kInvalidArgument,
              {file, "tensor 'prompt_embeddings' has dtype F64; expected F32, F16 or BF16"});
}

TEST(PeftPrefixTest, RefusesNonFiniteValuesAndBadBlocks) {
  const ModelSpec opt = Zoo("opt-tiny");
  const Peft peft = PrefixPeft(2);
  std::vector<std::vector<float>> blocks = Adapters(opt, peft, false);
  blocks[1][2 * 64 + 3] = std::numeric_limits<float>::infinity();  // layer 1's value 0, c 3
  const std::string dir = FreshDir("prefix_inf");
  ASSERT_TRUE(SavePeftAdapters(dir, opt, peft, blocks, BF16, "").ok());
  ExpectError(LoadPeftAdapters(dir, opt, peft).status(), absl::StatusCode::kInvalidArgument,
              {"'prompt_embeddings' holds inf at element 195"});  // (2 · 1 + 1) · 64 + 3

  blocks[1].pop_back();
  ExpectError(SavePeftAdapters(dir, opt, peft, blocks, FP32, ""),
              absl::StatusCode::kInvalidArgument,
              {"block 1 holds 255 floats; its ADAPTER_PART has AdapterParams = 256 (the keys "
               "and values of k = 2 virtual tokens, 64 wide, of model 'opt-tiny')"});
  ExpectError(SavePeftAdapters(dir, opt, PrefixPeft(0), blocks, FP32, ""),
              absl::StatusCode::kInvalidArgument, {"prefix_tokens 0 is out of range"});
}

}  // namespace
}  // namespace zosched
