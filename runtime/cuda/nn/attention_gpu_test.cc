// The GPU's causal attention (attention.h) against attention computed
// directly in double (attention_reference.h), in FP32, FP16 and BF16,
// multi-head and grouped-query (with query and key/value rows wider than
// their heads), with the scratch holding several heads, exactly one, or a
// few rows of scores;
// plus its determinism (run to run, and an example against the rest of its
// batch, bitwise) and its refusal of a scratch without one row. Built only
// under --config=cuda; skips when no GPU is visible.
#include "runtime/cuda/nn/attention.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
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
// rows hold k and v beside the queries).
Problem MakeProblem(ElementType type, unsigned seed, bool grouped = false) {
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
  for (std::vector<float>* x : {&p.q, &p.k, &p.v}) {
    x->resize(rows * (x == &p.q ? p.q_ld : p.kv_ld));
    for (float& value : *x) {
      value = uniform(rng);
      value = Decode(type, Encode(type, {value}).data());
    }
  }
  return p;
}

// Runs CausalAttention on the GPU; returns the context as floats (empty
// after a failure, which the test reports).
std::vector<float> RunGpu(ElementType type, const Problem& p, int64_t scratch_bytes,
                          absl::Status* status) {
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
    *status = CausalAttention(**gemm, type, p.Shape(type, scratch_bytes), dq.get(), dk.get(),
                              dv.get(), static_cast<const int32_t*>(lengths.get()), scratch.get());
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

class AttentionGpu : public ::testing::TestWithParam<ElementType> {};

TEST_P(AttentionGpu, MatchesDirectAttentionForEveryTiling) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const ElementType type = GetParam();
  // Inputs are exact; the probabilities and the context are rounded to the
  // type (11 / 8 significant bits) and |v| <= 2.
  const double tolerance = type == ElementType::kF32 ? 1e-4 : type == ElementType::kF16 ? 5e-3 : 3e-2;
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
      ASSERT_EQ(got.size(), want.size());
      int64_t wrong = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        wrong += std::isnan(want[i]) ? !std::isnan(got[i])
                                     : !(std::fabs(got[i] - want[i]) <= tolerance);
      }
      EXPECT_EQ(wrong, 0);
    }
  }
}

TEST_P(AttentionGpu, SameInputsGiveTheSameBitsAndAnExampleIgnoresItsBatch) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const ElementType type = GetParam();
  const Problem a = MakeProblem(type, 3);
  Problem b = MakeProblem(type, 4);  // example 0 as in a, the others not
  const size_t example = a.seq * a.q_ld;  // q_ld == kv_ld: dense multi-head rows
  std::copy_n(a.q.begin(), example, b.q.begin());
  std::copy_n(a.k.begin(), example, b.k.begin());
  std::copy_n(a.v.begin(), example, b.v.begin());
  b.lengths = {37, 2, 30};
  absl::Status s1, s2, s3;
  const std::vector<float> first = RunGpu(type, a, 37 * kRowBytes, &s1);
  const std::vector<float> second = RunGpu(type, a, 37 * kRowBytes, &s2);
  const std::vector<float> other = RunGpu(type, b, 37 * kRowBytes, &s3);
  ASSERT_TRUE(s1.ok() && s2.ok() && s3.ok()) << s1 << s2 << s3;
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(first.data(), other.data(), example * sizeof(float)), 0);
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

INSTANTIATE_TEST_SUITE_P(Types, AttentionGpu,
                         ::testing::Values(ElementType::kF32, ElementType::kF16,
                                           ElementType::kBF16));

}  // namespace
}  // namespace zosched
