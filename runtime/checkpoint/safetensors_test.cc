#include "runtime/checkpoint/safetensors.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/textproto.h"
#include "gtest/gtest.h"
#include "models/model_spec.h"
#include "models/model_tensors.h"
#include "runtime/checkpoint/checkpoint_files.h"
#include "runtime/dtype/convert.h"

namespace zosched {
namespace {

// Whether `text` contains `part`, showing both if not.
::testing::AssertionResult Contains(absl::string_view text, absl::string_view part) {
  if (text.find(part) != absl::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/safetensors_test_", name);
}

// Writes a safetensors file by hand: the 8-byte little-endian length of
// `header`, `header`, then `data`.
void WriteRaw(const std::string& path, const std::string& header,
              const std::string& data) {
  std::string bytes;
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  bytes += header;
  bytes += data;
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string ReadAll(const std::string& path) {
  std::string s;
  EXPECT_TRUE(ReadFileToString(path, &s).ok());
  return s;
}

// A tiny OPT: 2 blocks, h = 8, f = 16, vocab 32, tied head.
ModelSpec TinyOpt() {
  ModelSpec spec;
  EXPECT_TRUE(ParseTextProto(R"pb(
    name: "tiny-opt" family: OPT hidden_size: 8 num_layers: 2 num_heads: 2
    ffn_size: 16 vocab_size: 32 max_positions: 16 activation: RELU
    norm: LAYER_NORM norm_placement: PRE_NORM positional: LEARNED_OPT_OFFSET
    tied_lm_head: true linear_bias: true final_norm: true weight_dtype: FP16
  )pb", "tiny", &spec).ok());
  EXPECT_TRUE(ValidateModelSpec(spec, "tiny").ok());
  return spec;
}

std::vector<TensorSpec> AllTensors(const ModelSpec& spec) {
  std::vector<TensorSpec> all = EmbeddingTensors(spec);
  for (int64_t l = 0; l < spec.num_layers(); ++l) {
    for (TensorSpec& t : BlockTensors(spec, l)) all.push_back(t);
  }
  for (TensorSpec& t : FinalNormTensors(spec)) all.push_back(t);
  for (TensorSpec& t : HeadTensors(spec)) all.push_back(t);
  return all;
}

std::vector<float> Values(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = 0.001f * static_cast<float>((i * 7919) % 4001 - 2000) + 0.0001f * i;
  return v;
}

std::vector<unsigned char> As(DType dtype, const std::vector<float>& v) {
  std::vector<unsigned char> out(v.size() * DTypeBytes(dtype));
  ConvertBuffer(FP32, v.data(), dtype, out.data(), v.size());
  return out;
}

TEST(SafetensorsTest, ModelRoundTripsInEveryDType) {
  const ModelSpec spec = TinyOpt();
  const std::vector<TensorSpec> tensors = AllTensors(spec);
  const int64_t n = CountElements(tensors);
  const std::vector<float> values = Values(n);
  for (DType stored : {FP32, FP16, BF16}) {
    const std::string path = TempPath(absl::StrCat("model_", DType_Name(stored)));
    const std::vector<unsigned char> data = As(stored, values);
    ASSERT_TRUE(SaveModelParameters(path, spec, {{tensors, stored, data.data()}},
                                    {{"step", "7"}}).ok());
    for (DType to : {FP32, FP16, BF16}) {
      std::vector<unsigned char> loaded(n * DTypeBytes(to), 0xee);
      const absl::Status status = LoadModelParameters(path, spec, tensors, to, loaded.data());
      ASSERT_TRUE(status.ok()) << status;
      std::vector<unsigned char> expected(n * DTypeBytes(to));
      ConvertBuffer(stored, data.data(), to, expected.data(), n);
      EXPECT_EQ(loaded, expected) << DType_Name(stored) << " -> " << DType_Name(to);
    }
    absl::StatusOr<SafetensorsFile> file = ReadSafetensors(path);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ(file->tensors().size(), tensors.size());
    EXPECT_EQ(file->metadata().at("step"), "7");
    EXPECT_EQ(file->metadata().at("format"), "pt");
    EXPECT_EQ(file->metadata().at("zosched.model"), "tiny-opt");
    const SafetensorsTensor* fc1 = file->Find("model.decoder.layers.1.fc1.weight");
    ASSERT_NE(fc1, nullptr);
    EXPECT_EQ(fc1->dtype, stored);
    EXPECT_EQ(fc1->shape, (std::vector<int64_t>{16, 8}));
    // The header is padded to a multiple of 8 bytes.
    const std::string raw = ReadAll(path);
    uint64_t header_bytes = 0;
    for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | static_cast<unsigned char>(raw[i]);
    EXPECT_EQ(header_bytes % 8, 0u);
    EXPECT_EQ(raw.size(), 8 + header_bytes + data.size());
  }
}

TEST(SafetensorsTest, SavesPartsInDifferentDTypesAndLoadsASubset) {
  const ModelSpec spec = TinyOpt();
  const std::vector<TensorSpec> embed = EmbeddingTensors(spec);
  const std::vector<TensorSpec> block0 = BlockTensors(spec, 0);
  const std::vector<float> e = Values(CountElements(embed));
  const std::vector<float> b = Values(CountElements(block0));
  const std::vector<unsigned char> b16 = As(BF16, b);
  const std::string path = TempPath("parts");
  ASSERT_TRUE(SaveModelParameters(path, spec, {{embed, FP32, e.data()}, {block0, BF16, b16.data()}},
                                  {}).ok());
  std::vector<float> got(CountElements(block0));
  ASSERT_TRUE(LoadModelParameters(path, spec, block0, FP32, got.data()).ok());
  std::vector<float> expected(b.size());
  ConvertBuffer(BF16, b16.data(), FP32, expected.data(), b.size());
  EXPECT_EQ(got, expected);
}

// A file written byte by byte, independent of WriteSafetensors: two F32
// values, an F16 [1, 2] and a BF16 scalar, with metadata and padding.
TEST(SafetensorsTest, ReadsAHandWrittenFile) {
  const std::string path = TempPath("hand");
  const std::string header =
      R"({"__metadata__":{"format":"pt"},)"
      R"("b":{"dtype":"F16","shape":[1,2],"data_offsets":[8,12]},)"
      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("c":{"dtype":"BF16","shape":[],"data_offsets":[12,14]}}   )";
  const std::string data(
      "\x00\x00\x80\x3f"   // 1.0f
      "\x00\x00\x20\xc0"   // -2.5f
      "\x00\x3c"           // fp16 1.0
      "\x00\xc1"           // fp16 -2.5
      "\x40\x40",          // bf16 3.0
      14);
  WriteRaw(path, header, data);
  absl::StatusOr<SafetensorsFile> file = ReadSafetensors(path);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->tensors().size(), 3u);
  EXPECT_EQ(file->tensors()[0].name, "a");
  EXPECT_EQ(file->metadata().at("format"), "pt");
  const SafetensorsTensor* a = file->Find("a");
  const SafetensorsTensor* b = file->Find("b");
  const SafetensorsTensor* c = file->Find("c");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(file->Find("d"), nullptr);
  EXPECT_EQ(a->dtype, FP32);
  EXPECT_EQ(b->dtype, FP16);
  EXPECT_EQ(c->dtype, BF16);
  EXPECT_EQ(b->shape, (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(c->shape.empty());
  float av[2];
  ConvertBuffer(FP32, a->bytes.data(), FP32, av, 2);
  EXPECT_EQ(av[0], 1.0f);
  EXPECT_EQ(av[1], -2.5f);
  float bv[2];
  ConvertBuffer(FP16, b->bytes.data(), FP32, bv, 2);
  EXPECT_EQ(bv[0], 1.0f);
  EXPECT_EQ(bv[1], -2.5f);
  float cv;
  ConvertBuffer(BF16, c->bytes.data(), FP32, &cv, 1);
  EXPECT_EQ(cv, 3.0f);

  // Loading "b" and "a" (in that order) as fp32 into one flat buffer.
  ModelSpec spec;
  std::vector<float> flat(4);
  ASSERT_TRUE(LoadModelParameters(path, spec, {{"b", {1, 2}, TensorRole::kMatrix},
                                               {"a", {2}, TensorRole::kBias}},
                                  FP32, flat.data()).ok());
  EXPECT_EQ(flat, (std::vector<float>{1.0f, -2.5f, 1.0f, -2.5f}));
}

TEST(SafetensorsTest, WrittenBytesAreTheDocumentedFormat) {
  const std::string path = TempPath("written");
  const float x[2] = {1.0f, -2.5f};
  SafetensorsTensor t;
  t.name = "x";
  t.dtype = FP32;
  t.shape = {2};
  t.bytes = absl::string_view(reinterpret_cast<const char*>(x), 8);
  ASSERT_TRUE(WriteSafetensors(path, {t}, {}).ok());
  const std::string header = R"({"x":{"data_offsets":[0,8],"dtype":"F32","shape":[2]}})";
  std::string padded = header;
  padded.append((8 - header.size() % 8) % 8, ' ');
  std::string expected(1, static_cast<char>(padded.size()));
  expected.append(7, '\0');
  expected += padded;
  expected += std::string("\x00\x00\x80\x3f\x00\x00\x20\xc0", 8);
  EXPECT_EQ(ReadAll(path), expected);
}

TEST(SafetensorsTest, TiedHeadAndBaseModelNames) {
  // A checkpoint saved from the base model: no "model." prefix, no lm_head.
  const std::string path = TempPath("base_model");
  const std::string header =
      R"({"decoder.embed_tokens.weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  const float e[4] = {1, 2, 3, 4};
  WriteRaw(path, header, std::string(reinterpret_cast<const char*>(e), 16));
  ModelSpec spec = TinyOpt();
  spec.set_vocab_size(2);
  spec.set_hidden_size(2);
  spec.set_num_heads(1);
  std::vector<float> out(8);
  const absl::Status status = LoadModelParameters(
      path, spec,
      {{"model.decoder.embed_tokens.weight", {2, 2}, TensorRole::kEmbedding},
       {"lm_head.weight", {2, 2}, TensorRole::kMatrix}},
      FP32, out.data());
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 4, 1, 2, 3, 4}));
  // Untied: the head must be in the file.
  spec.set_tied_lm_head(false);
  const absl::Status untied = LoadModelParameters(
      path, spec, {{"lm_head.weight", {2, 2}, TensorRole::kMatrix}}, FP32, out.data());
  EXPECT_EQ(untied.code(), absl::StatusCode::kNotFound) << untied;
}

// Error cases, each from a hand-made file.

const char kGoodHeader[] =
    R"({"model.decoder.final_layer_norm.weight":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})";

std::vector<TensorSpec> FinalNormWeight() {
  return {{"model.decoder.final_layer_norm.weight", {8}, TensorRole::kNorm}};
}

// Writes to `path` a file whose one tensor, the final norm's weight, has
// `dtype` and `shape` (a JSON list) over 32 zero bytes.
void WriteFinalNorm(const std::string& path, const std::string& dtype, const std::string& shape) {
  WriteRaw(path,
           absl::StrCat(R"({"model.decoder.final_layer_norm.weight":{"dtype":")", dtype,
                        R"(","shape":)", shape, R"(,"data_offsets":[0,32]}})"),
           std::string(32, '\0'));
}

absl::Status LoadFinalNorm(const std::string& path) {
  std::vector<float> out(8);
  return LoadModelParameters(path, TinyOpt(), FinalNormWeight(), FP32, out.data());
}

TEST(SafetensorsErrorTest, GoodBaseline) {
  const std::string path = TempPath("good");
  WriteRaw(path, kGoodHeader, std::string(32, '\0'));
  EXPECT_TRUE(LoadFinalNorm(path).ok());
}

TEST(SafetensorsErrorTest, MissingFile) {
  const absl::Status s = LoadFinalNorm(TempPath("does_not_exist"));
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(s.message(), "does_not_exist"));
}

TEST(SafetensorsErrorTest, MissingTensor) {
  const std::string path = TempPath("missing_tensor");
  WriteRaw(path, kGoodHeader, std::string(32, '\0'));
  std::vector<float> out(16);
  const absl::Status s = LoadModelParameters(
      path, TinyOpt(), {{"model.decoder.final_layer_norm.bias", {8}, TensorRole::kNorm}},
      FP32, out.data());
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(s.message(), path));
  EXPECT_TRUE(Contains(s.message(), "'model.decoder.final_layer_norm.bias' not found"));
}

TEST(SafetensorsErrorTest, WrongShape) {
  const std::string path = TempPath("wrong_shape");
  WriteFinalNorm(path, "F32", "[2,4]");
  const absl::Status s = LoadFinalNorm(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), path));
  EXPECT_TRUE(Contains(s.message(), "'model.decoder.final_layer_norm.weight': shape [8] expected, found [2, 4]"));
}

TEST(SafetensorsErrorTest, TruncatedData) {
  const std::string path = TempPath("truncated");
  WriteRaw(path, kGoodHeader, std::string(31, '\0'));
  const absl::Status s = LoadFinalNorm(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(s.message(), path));
  EXPECT_TRUE(Contains(s.message(), "'model.decoder.final_layer_norm.weight'"));
  EXPECT_TRUE(Contains(s.message(), "beyond the 31-byte data buffer"));
}

TEST(SafetensorsErrorTest, TruncatedHeader) {
  const std::string path = TempPath("truncated_header");
  // Claims a 90-byte header, has 20 bytes after the length.
  std::string bytes = std::string("\x5a\0\0\0\0\0\0\0", 8) + std::string(kGoodHeader).substr(0, 20);
  std::ofstream(path, std::ios::binary) << bytes;
  absl::Status s = LoadFinalNorm(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(s.message(), "header length 90 exceeds the 20 bytes"));
  std::ofstream(path, std::ios::binary) << "abc";
  s = LoadFinalNorm(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(s.message(), "3 bytes, shorter than the 8-byte header length"));
}

TEST(SafetensorsErrorTest, UnknownDType) {
  const std::string path = TempPath("unknown_dtype");
  WriteFinalNorm(path, "F17", "[8]");
  const absl::Status s = LoadFinalNorm(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), path));
  EXPECT_TRUE(Contains(s.message(), "'model.decoder.final_layer_norm.weight': unknown dtype \"F17\""));
}

TEST(SafetensorsErrorTest, NonFloatDTypeOpensButDoesNotLoad) {
  const std::string path = TempPath("int_dtype");
  WriteFinalNorm(path, "I32", "[8]");
  ASSERT_TRUE(ReadSafetensors(path).ok());
  const absl::Status s = LoadFinalNorm(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "dtype I32 cannot be loaded"));
}

TEST(SafetensorsErrorTest, HeaderNotJson) {
  const std::string path = TempPath("not_json");
  WriteRaw(path, R"({"model.decoder.final_layer_norm.weight":{"dtype":"F32",)", std::string(32, '\0'));
  const absl::Status s = LoadFinalNorm(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), path));
  EXPECT_TRUE(Contains(s.message(), "header is not valid JSON"));
  EXPECT_TRUE(Contains(s.message(), "parse error"));  // the parser's message
}

TEST(SafetensorsErrorTest, MalformedEntries) {
  const struct {
    const char* header;
    const char* message;
  } cases[] = {
      {R"([1, 2])", "header is JSON but not an object: array"},
      {R"({"t":{"dtype":"F32","shape":[8]}})", "'t': \"data_offsets\" is not two"},
      {R"({"t":{"dtype":"F32","shape":[-8],"data_offsets":[0,32]}})", "'t': shape [-8] has an entry"},
      {R"({"t":{"shape":[8],"data_offsets":[0,32]}})", "'t': no string \"dtype\""},
      {R"({"t":{"dtype":"F32","shape":[4],"data_offsets":[0,32]}})", "'t': data_offsets [0, 32] span 32 bytes but shape [4] of F32 needs 16"},
      {R"({"t":{"dtype":"F32","shape":[8],"data_offsets":[32,0]}})", "'t': data_offsets [32, 0] end before"},
      {R"({"t":[1]})", "'t': entry is not a JSON object"},
      {R"({"__metadata__":{"k":1}})", "\"__metadata__\" value of 'k' is not a string"},
      // Found by fuzz/safetensors_fuzzer: a number beyond a double used to
      // escape as an uncaught exception, an element count whose byte size
      // overflows used to overflow again in the message (UBSan).
      {R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,1e999]}})",
       "header is not valid JSON: [json.exception.out_of_range.406]"},
      {R"({"t":{"dtype":"F32","shape":[4611686018427387904,1],"data_offsets":[0,32]}})",
       "'t': data_offsets [0, 32] span 32 bytes but shape [4611686018427387904, 1] of F32 "
       "needs more than an int64 can count"},
      {R"({"t":{"dtype":"F32","shape":[2,[3]],"data_offsets":[0,32]}})",
       "'t': shape [2,array] has an entry"},
      // Two tensors sharing bytes: loading one would overwrite the other.
      {R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
       R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})",
       "tensors 'a' (data_offsets [0, 16]) and 'b' (data_offsets [8, 24]) overlap"},
  };
  for (const auto& c : cases) {
    const std::string path = TempPath("malformed");
    WriteRaw(path, c.header, std::string(32, '\0'));
    const absl::StatusOr<SafetensorsFile> file = ReadSafetensors(path);
    ASSERT_FALSE(file.ok()) << c.header;
    EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument) << c.header;
    EXPECT_TRUE(Contains(file.status().message(), c.message)) << c.header;
    EXPECT_TRUE(Contains(file.status().message(), path)) << c.header;
  }
}

// The message describes a nested shape entry by its type: printing it
// recursed once per level and overflowed the stack (found by
// fuzz/safetensors_fuzzer).
TEST(SafetensorsErrorTest, DeeplyNestedShapeIsAnError) {
  const int depth = 200000;
  const std::string path = TempPath("deep");
  WriteRaw(path,
           absl::StrCat(R"({"t":{"dtype":"F32","shape":[)", std::string(depth, '['),
                        std::string(depth, ']'), R"(],"data_offsets":[0,0]}})"),
           "");
  const absl::StatusOr<SafetensorsFile> file = ReadSafetensors(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(file.status().message(), "'t': shape [array] has an entry"));
}

// A user's path that is not a file is refused before it is opened: a
// directory without a checkpoint used to fail in mmap ("No such device"),
// /dev/zero as a truncated file, and a FIFO would block in open.
TEST(SafetensorsErrorTest, ADirectoryDeviceOrFifoIsNotAFile) {
  const std::string fifo = TempPath("fifo");
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const struct {
    std::string path;
    absl::StatusCode code;
    std::string message;
  } cases[] = {
      {::testing::TempDir(), absl::StatusCode::kNotFound,
       ::testing::TempDir() + " is a directory holding neither model.safetensors nor "
                              "model.safetensors.index.json; expected a .safetensors file, a "
                              "Hugging Face checkpoint directory or its index (PyTorch .bin "
                              "checkpoints are not read: save the model with safe_serialization)"},
      {"/dev/zero", absl::StatusCode::kInvalidArgument,
       "/dev/zero is not a regular file (a character device); expected a .safetensors file"},
      {fifo, absl::StatusCode::kInvalidArgument, fifo + " is not a regular file (a FIFO); expected a .safetensors file"},
  };
  for (const auto& c : cases) {
    const absl::Status s = LoadFinalNorm(c.path);
    EXPECT_EQ(s.code(), c.code) << c.path;
    EXPECT_EQ(s.message(), c.message);
  }
}

// The tiny model's parameters saved as `dtype` with `bad` at element
// `index` of tensor `name`.
std::string SaveWith(DType dtype, const std::string& name, int64_t index, float bad) {
  const ModelSpec spec = TinyOpt();
  const std::vector<TensorSpec> tensors = AllTensors(spec);
  std::vector<float> values = Values(CountElements(tensors));
  int64_t offset = 0;
  for (const TensorSpec& t : tensors) {
    if (t.name == name) values[offset + index] = bad;
    offset += t.elements();
  }
  const std::string path = TempPath(absl::StrCat("bad_", DType_Name(dtype), "_", name));
  const std::vector<unsigned char> data = As(dtype, values);
  EXPECT_TRUE(SaveModelParameters(path, spec, {{tensors, dtype, data.data()}}, {}).ok());
  return path;
}

// NaN or Inf weights make every loss after them NaN: refused when loaded,
// naming the file, the tensor, the element and its value, in every dtype.
TEST(SafetensorsErrorTest, NanOrInfWeightsAreRefused) {
  const ModelSpec spec = TinyOpt();
  const std::vector<TensorSpec> tensors = AllTensors(spec);
  std::vector<float> out(CountElements(tensors));
  const std::string fc1 = "model.decoder.layers.1.fc1.weight";  // [16, 8]
  const struct {
    float bad;
    const char* shown;
  } values[] = {{std::numeric_limits<float>::quiet_NaN(), "nan"},
                {std::numeric_limits<float>::infinity(), "inf"},
                {-std::numeric_limits<float>::infinity(), "-inf"}};
  for (DType dtype : {FP32, FP16, BF16}) {
    for (const auto& v : values) {
      const std::string path = SaveWith(dtype, fc1, 8 * 3 + 5, v.bad);
      const std::string want = absl::StrCat(path, ": tensor '", fc1, "' element 29 ([3, 5] in shape [16, 8]) is ", v.shown,
                                            ": weights must be finite numbers");
      for (DType to : {FP32, BF16}) {
        const absl::Status s = LoadModelParameters(path, spec, tensors, to, out.data());
        EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << DType_Name(dtype);
        EXPECT_TRUE(Contains(s.message(), want)) << DType_Name(dtype) << " -> " << DType_Name(to);
      }
      absl::StatusOr<CheckpointFiles> checkpoint = CheckpointFiles::Open(path);
      ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
      const absl::Status s = CheckModelParameters(*checkpoint, spec, tensors);
      EXPECT_TRUE(Contains(s.message(), want)) << DType_Name(dtype);
    }
  }
  // A finite value too large for fp16 is the file's business only once
  // stored: an F32 file holding 1e6 loads.
  const std::string big = SaveWith(FP32, fc1, 0, 1e6f);
  EXPECT_TRUE(LoadModelParameters(big, spec, tensors, FP32, out.data()).ok());
}

// The check goes block by block with the conversion: an Inf past the first
// block is found too, and named by its index in the whole tensor.
TEST(SafetensorsErrorTest, NonFiniteValueBeyondTheFirstBlock) {
  const int64_t n = 3 * 70000;
  std::vector<float> values(n, 0.5f);
  values[70000 + 66000] = std::numeric_limits<float>::infinity();
  SafetensorsTensor t;
  t.name = "big";
  t.dtype = FP32;
  t.shape = {3, 70000};
  t.bytes = absl::string_view(reinterpret_cast<const char*>(values.data()), n * 4);
  const std::string path = TempPath("big");
  ASSERT_TRUE(WriteSafetensors(path, {t}, {}).ok());
  std::vector<float> out(n);
  const absl::Status s =
      LoadModelParameters(path, TinyOpt(), {{"big", {3, 70000}, TensorRole::kMatrix}}, FP32, out.data());
  EXPECT_TRUE(Contains(s.message(), "tensor 'big' element 136000 ([1, 66000] in shape [3, 70000]) is inf"));
}

// CheckModelParameters finds what LoadModelParameters would refuse, without
// converting: a missing tensor, a wrong shape.
TEST(SafetensorsErrorTest, CheckModelParametersRefusesWhatLoadingWould) {
  const std::string path = TempPath("check_good");
  WriteRaw(path, kGoodHeader, std::string(32, '\0'));
  absl::StatusOr<CheckpointFiles> file = CheckpointFiles::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(CheckModelParameters(*file, TinyOpt(), FinalNormWeight()).ok());
  absl::Status s = CheckModelParameters(
      *file, TinyOpt(), {{"model.decoder.final_layer_norm.bias", {8}, TensorRole::kNorm}});
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(s.message(), "'model.decoder.final_layer_norm.bias' not found"));
  s = CheckModelParameters(
      *file, TinyOpt(), {{"model.decoder.final_layer_norm.weight", {4, 2}, TensorRole::kNorm}});
  EXPECT_TRUE(Contains(s.message(), "shape [4, 2] expected, found [8]"));
}

TEST(SafetensorsErrorTest, WriterRejectsBadTensors) {
  const float x[2] = {0, 0};
  SafetensorsTensor t;
  t.name = "x";
  t.dtype = FP32;
  t.shape = {3};
  t.bytes = absl::string_view(reinterpret_cast<const char*>(x), 8);
  absl::Status s = WriteSafetensors(TempPath("bad_write"), {t}, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "'x': 8 bytes of data for shape [3] of F32"));
  t.shape = {2};
  s = WriteSafetensors(TempPath("bad_write"), {t, t}, {});
  EXPECT_TRUE(Contains(s.message(), "'x': duplicate name"));
  s = WriteSafetensors(TempPath("no_such_dir/x"), {t}, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace zosched
