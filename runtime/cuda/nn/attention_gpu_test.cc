// The GPU's causal attention (attention.h) against attention computed
// directly in double (attention_reference.h), in FP32, FP16 and BF16,
// multi-head and grouped-query (with query and key/value rows wider than
// their heads), with the scratch holding several heads, exactly one, or a
// few rows of scores, without and over a prefix of keys and values;
// plus its determinism (run to run, and an example against the rest of its
// batch, bitwise) and its refusal of a scratch without one row or of a
// prefix without its scratch. Built only under --config=cuda; skips when
// no GPU is visible.
#include "runtime/cuda/nn/attention.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/device_test_util.h"
#include "runtime/cuda/nn/attention_reference.h"
#include "runtime/cuda/nn/gemm.h"
#include "runtime/dtype/element.h"

namespace zosched {
namespace {

// Values of `type` as host bytes, and back.
std::vector<char> Encode(ElementType type, const std::vector<float>& x) {
  std::vector<char> bytes(x.size() * ElementBytes(type));
  for (size_t i = 0; i < x.size(); ++i) {
    char* at = bytes.data() + i * ElementBytes(type);
    if (type == ElementType::kF32) {
      std::memcpy(at, &x[i], 4);
    } else {
      const uint16_t bits = type == ElementType::kF16 ? FromFloat<Half>(x[i]).bits
                                                      : FromFloat<BFloat16>(x[i]).bits;
      std::memcpy(at, &bits, 2);
    }
  }
  return bytes;
}

float Decode(ElementType type, const char* at) {
  if (type == ElementType::kF32) {
    float x;
    std::memcpy(&x, at, 4);
    return x;
  }
  uint16_t bits;
  std::memcpy(&bits, at, 2);
  return type == ElementType::kF16 ? Fp16ToFloat(bits) : Bf16ToFloat(bits);
}

struct Problem {
  int64_t seq = 37;  // not a multiple of 4: padded score rows
  int64_t heads = 3;
  int64_t kv_heads = 3;
  int64_t head_dim = 64;
  int64_t q_ld = 3 * 64;   // elements per query row
  int64_t kv_ld = 3 * 64;  // per key and value row
  std::vector<int32_t> lengths = {37, 20, 1};
  std::vector<float> q, k, v;  // as stored: rounded to the element type
  ReferencePrefix prefix;      // none unless tokens > 0; rounded too

  AttentionShape Shape(ElementType type, int64_t scratch_bytes) const {
    AttentionShape shape;
    shape.examples = static_cast<int64_t>(lengths.size());
    shape.seq = seq;
    shape.heads = heads;
    shape.kv_heads = kv_heads;
    shape.head_dim = head_dim;
    shape.q_ld = q_ld;
    shape.kv_ld = kv_ld;
    shape.element_bytes = ElementBytes(type);
    shape.q_scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    shape.scratch_bytes = scratch_bytes;
    return shape;
  }
};

// Multi-head attention over dense rows; with `grouped`, 4 query heads on 2
// key/value heads, each kind of row wider than its heads (GPT-2's fused
// rows hold k and v beside the queries); with prefix_tokens > 0, over a
// prefix of that many keys and values.
Problem MakeProblem(ElementType type, unsigned seed, bool grouped = false,
                    int64_t prefix_tokens = 0) {
  Problem p;
  if (grouped) {
    p.heads = 4;
    p.kv_heads = 2;
    p.q_ld = 4 * 64 + 2 * 2 * 64;
    p.kv_ld = 2 * 64 + 8;
  }
  const int64_t rows = static_cast<int64_t>(p.lengths.size()) * p.seq;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  p.q.resize(rows * p.q_ld);
  p.k.resize(rows * p.kv_ld);
  p.v.resize(rows * p.kv_ld);
  p.prefix.tokens = prefix_tokens;
  p.prefix.keys.resize(prefix_tokens * p.kv_heads * p.head_dim);
  p.prefix.values.resize(prefix_tokens * p.kv_heads * p.head_dim);
  for (std::vector<float>* x : {&p.q, &p.k, &p.v, &p.prefix.keys, &p.prefix.values}) {
    for (float& value : *x) {
      value = uniform(rng);
      value = Decode(type, Encode(type, {value}).data());
    }
  }
  return p;
}

// Runs CausalAttention on the GPU (over p.prefix when it has tokens, with
// PrefixJoinedBytes of joined scratch, or none when !joined_scratch);
// returns the context as floats (empty after a failure, which the test
// reports).
std::vector<float> RunGpu(ElementType type, const Problem& p, int64_t scratch_bytes,
                          absl::Status* status, bool joined_scratch = true) {
  cudaStream_t stream;
  EXPECT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  DevicePtr workspace = Alloc(kGemmWorkspaceBytes);
  EXPECT_NE(workspace, nullptr) << "cudaMalloc failed";
  absl::StatusOr<std::unique_ptr<Gemm>> gemm =
      Gemm::Create(stream, workspace.get(), kGemmWorkspaceBytes, /*allow_tf32=*/false);
  EXPECT_TRUE(gemm.ok()) << gemm.status();
  std::vector<float> context;
  if (gemm.ok()) {
    const std::vector<char> q = Encode(type, p.q), k = Encode(type, p.k), v = Encode(type, p.v);
    DevicePtr dq = Alloc(q.size()), dk = Alloc(k.size()), dv = Alloc(v.size());
    DevicePtr lengths = Alloc(p.lengths.size() * sizeof(int32_t));
    DevicePtr scratch = Alloc(scratch_bytes);
    EXPECT_TRUE(dq && dk && dv && lengths && scratch) << "cudaMalloc failed";
    EXPECT_EQ(cudaMemcpy(dq.get(), q.data(), q.size(), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dk.get(), k.data(), k.size(), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dv.get(), v.data(), v.size(), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(lengths.get(), p.lengths.data(), p.lengths.size() * sizeof(int32_t),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    const AttentionShape shape = p.Shape(type, scratch_bytes);
    const std::vector<char> pk = Encode(type, p.prefix.keys);
    const std::vector<char> pv = Encode(type, p.prefix.values);
    DevicePtr dpk = Alloc(pk.size()), dpv = Alloc(pv.size());
    DevicePtr joined =
        p.prefix.tokens > 0 ? Alloc(PrefixJoinedBytes(shape, p.prefix.tokens)) : nullptr;
    EXPECT_TRUE(dpk && dpv && (joined || p.prefix.tokens == 0)) << "cudaMalloc failed";
    EXPECT_EQ(cudaMemcpy(dpk.get(), pk.data(), pk.size(), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dpv.get(), pv.data(), pv.size(), cudaMemcpyHostToDevice), cudaSuccess);
    AttentionPrefix prefix;
    prefix.tokens = p.prefix.tokens;
    prefix.keys = dpk.get();
    prefix.values = dpv.get();
    prefix.joined = joined_scratch ? joined.get() : nullptr;
    *status = CausalAttention(**gemm, type, shape, dq.get(), dk.get(), dv.get(),
                              static_cast<const int32_t*>(lengths.get()), scratch.get(),
                              p.prefix.tokens > 0 ? &prefix : nullptr);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    std::vector<char> out(q.size());
    EXPECT_EQ(cudaMemcpy(out.data(), dq.get(), out.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < p.q.size(); ++i) {
      context.push_back(Decode(type, out.data() + i * ElementBytes(type)));
    }
  }
  gemm = absl::InternalError("destroyed");  // before its stream
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  return context;
}

// Bytes of scratch for `rows` padded rows of scores of a seq-37 problem.
constexpr int64_t kRowBytes = 40 * 4;

// Inputs are exact; the probabilities and the context are rounded to the
// type (11 / 8 significant bits) and |v| <= 2.
double ToleranceOf(ElementType type) {
  return type == ElementType::kF32 ? 1e-4 : type == ElementType::kF16 ? 5e-3 : 3e-2;
}

// Elements of `got` off `want` by more than `tolerance`, or not NaN where
// `want` is (an invalid length's context).
int64_t CountWrong(const std::vector<float>& got, const std::vector<double>& want,
                   double tolerance) {
  EXPECT_EQ(got.size(), want.size());
  int64_t wrong = 0;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    wrong += std::isnan(want[i]) ? !std::isnan(got[i])
                                 : !(std::fabs(got[i] - want[i]) <= tolerance);
  }
  return wrong;
}

class AttentionGpu : public ::testing::TestWithParam<ElementType> {};

TEST_P(AttentionGpu, MatchesDirectAttentionForEveryTiling) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const ElementType type = GetParam();
  const double tolerance = ToleranceOf(type);
  for (bool grouped : {false, true}) {
    SCOPED_TRACE(grouped ? "grouped-query, wide rows" : "multi-head");
    Problem p = MakeProblem(type, 11, grouped);
    p.lengths = {37, 20, 0};  // the last example's length is invalid: NaN context
    const std::vector<double> want =
        ReferenceCausalAttention(p.Shape(type, 0), p.q, p.k, p.v, p.lengths);
    // All heads at once, one head, rows of 5 (37 = 7 · 5 + 2), one row.
    for (int64_t scratch_bytes : {3 * 37 * kRowBytes, 37 * kRowBytes, 5 * kRowBytes, kRowBytes}) {
      SCOPED_TRACE(scratch_bytes);
      absl::Status status;
      const std::vector<float> got = RunGpu(type, p, scratch_bytes, &status);
      ASSERT_TRUE(status.ok()) << status;
      EXPECT_EQ(CountWrong(got, want, tolerance), 0);
    }
  }
}

// Over a prefix of 5 keys and values: 42 keys at most, score rows of 44
// floats.
constexpr int64_t kPrefixTokens = 5;
constexpr int64_t kPrefixRowBytes = 44 * 4;

TEST_P(AttentionGpu, MatchesDirectAttentionOverAPrefixForEveryTiling) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const ElementType type = GetParam();
  const double tolerance = ToleranceOf(type);
  for (bool grouped : {false, true}) {
    SCOPED_TRACE(grouped ? "grouped-query, wide rows" : "multi-head");
    Problem p = MakeProblem(type, 13, grouped, kPrefixTokens);
    p.lengths = {37, 20, 0};  // the last example's length is invalid: NaN context
    const std::vector<double> want =
        ReferenceCausalAttention(p.Shape(type, 0), p.q, p.k, p.v, p.lengths, p.prefix);
    // All heads at once, one head, rows of 5 (42 = 8 · 5 + 2), one row.
    for (int64_t scratch_bytes :
         {3 * 42 * kPrefixRowBytes, 42 * kPrefixRowBytes, 5 * kPrefixRowBytes, kPrefixRowBytes}) {
      SCOPED_TRACE(scratch_bytes);
      absl::Status status;
      const std::vector<float> got = RunGpu(type, p, scratch_bytes, &status);
      ASSERT_TRUE(status.ok()) << status;
      EXPECT_EQ(CountWrong(got, want, tolerance), 0);
    }
  }
}

// No GPU needed: the prefix moves every context row, so the comparison
// above is not vacuous.
TEST(AttentionReference, APrefixChangesEveryContextRow) {
  const Problem p = MakeProblem(ElementType::kF32, 13, /*grouped=*/true, kPrefixTokens);
  const AttentionShape shape = p.Shape(ElementType::kF32, 0);
  const std::vector<double> plain = ReferenceCausalAttention(shape, p.q, p.k, p.v, p.lengths);
  const std::vector<double> over =
      ReferenceCausalAttention(shape, p.q, p.k, p.v, p.lengths, p.prefix);
  const int64_t width = p.heads * p.head_dim;
  for (size_t e = 0; e < p.lengths.size(); ++e) {
    for (int64_t i = 0; i < p.lengths[e]; ++i) {
      const int64_t row = (static_cast<int64_t>(e) * p.seq + i) * p.q_ld;
      double diff = 0;
      for (int64_t c = 0; c < width; ++c) {
        diff = std::max(diff, std::fabs(plain[row + c] - over[row + c]));
      }
      EXPECT_GT(diff, 1e-3) << "example " << e << " row " << i;
    }
  }
}

TEST_P(AttentionGpu, SameInputsGiveTheSameBitsAndAnExampleIgnoresItsBatch) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const ElementType type = GetParam();
  for (int64_t tokens : {int64_t{0}, kPrefixTokens}) {
    SCOPED_TRACE(tokens == 0 ? "no prefix" : "over a prefix");
    const Problem a = MakeProblem(type, 3, /*grouped=*/false, tokens);
    // Example 0 and the prefix as in a, the others not.
    Problem b = MakeProblem(type, 4, /*grouped=*/false, tokens);
    b.prefix = a.prefix;
    const size_t example = a.seq * a.q_ld;  // q_ld == kv_ld: dense multi-head rows
    std::copy_n(a.q.begin(), example, b.q.begin());
    std::copy_n(a.k.begin(), example, b.k.begin());
    std::copy_n(a.v.begin(), example, b.v.begin());
    b.lengths = {37, 2, 30};
    absl::Status s1, s2, s3;
    const std::vector<float> first = RunGpu(type, a, 42 * kPrefixRowBytes, &s1);
    const std::vector<float> second = RunGpu(type, a, 42 * kPrefixRowBytes, &s2);
    const std::vector<float> other = RunGpu(type, b, 42 * kPrefixRowBytes, &s3);
    ASSERT_TRUE(s1.ok() && s2.ok() && s3.ok()) << s1 << s2 << s3;
    EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(first.data(), other.data(), example * sizeof(float)), 0);
  }
}

TEST_P(AttentionGpu, RefusesAScratchWithoutOneRowOfScores) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const Problem p = MakeProblem(GetParam(), 5);
  absl::Status status;
  const std::vector<float> got = RunGpu(GetParam(), p, kRowBytes - 4, &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(std::memcmp(got.data(), p.q.data(), got.size() * sizeof(float)), 0)
      << "the queries were changed";
}

TEST_P(AttentionGpu, RefusesAPrefixWithoutItsScratchOrARowOfItsScores) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const Problem p = MakeProblem(GetParam(), 5, /*grouped=*/false, kPrefixTokens);
  absl::Status status;
  std::vector<float> got =
      RunGpu(GetParam(), p, 42 * kPrefixRowBytes, &status, /*joined_scratch=*/false);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("prefix of 5 tokens"), std::string::npos) << status;
  EXPECT_EQ(std::memcmp(got.data(), p.q.data(), got.size() * sizeof(float)), 0)
      << "the queries were changed";
  // One row of 37 scores, but not of 5 + 37.
  got = RunGpu(GetParam(), p, kRowBytes, &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("a prefix of 5 tokens, then seq 37"), std::string::npos)
      << status;
  EXPECT_EQ(std::memcmp(got.data(), p.q.data(), got.size() * sizeof(float)), 0)
      << "the queries were changed";
}

INSTANTIATE_TEST_SUITE_P(Types, AttentionGpu,
                         ::testing::Values(ElementType::kF32, ElementType::kF16,
                                           ElementType::kBF16));

}  // namespace
}  // namespace zosched
