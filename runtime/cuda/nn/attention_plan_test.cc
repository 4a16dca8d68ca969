// The GPU attention's steps (attention_plan.h), run on the host: each
// product by a column-major reference GEMM with cuBLAS's semantics, each
// softmax pass by the SoftmaxPass contract, on byte buffers laid out as the
// device's. The context they leave in the query buffer must be causal
// attention computed directly, for every tiling (whole heads, several heads
// per call, chunks of query rows that do and do not divide seq), FP32 and
// FP16 (probabilities stored in half the bytes of the scores), grouped-query
// attention (several query heads per key/value head, one key/value head),
// query and key/value rows wider than their heads (GPT-2's fused q | k | v),
// and padded, length-1 and invalid examples; and attention over a prefix as
// attention.cc runs it (each example's rows joined behind the prefix's, the
// plan of seq k + seq, the softmax's prefix mask from row_math.h).
#include "kernel_plans/attention_plan.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/nn/attention_reference.h"
#include "runtime/cuda/nn/row_math.h"
#include "runtime/dtype/element.h"

namespace zosched {
namespace {

// Host buffers of the device layout, elements stored as T's bytes. With
// `prefix` > 0, shape.seq counts the prefix's rows before the real ones
// (causal_softmax.h: the softmax's rows < prefix are no queries).
class HostAttention : public AttentionSteps {
 public:
  HostAttention(const AttentionShape& shape, const std::vector<int32_t>& lengths,
                int64_t prefix = 0)
      : shape_(shape), lengths_(lengths), prefix_(prefix) {
    const size_t rows = shape.examples * shape.seq;
    const size_t bytes = static_cast<size_t>(shape.element_bytes);
    q_.resize(rows * shape.q_ld * bytes);
    k_.resize(rows * shape.kv_ld * bytes);
    v_.resize(rows * shape.kv_ld * bytes);
    scratch_.resize(shape.scratch_bytes);
  }

  std::vector<char>& buffer(AttentionBuffer which) {
    switch (which) {
      case AttentionBuffer::kQuery: return q_;
      case AttentionBuffer::kKey: return k_;
      case AttentionBuffer::kValue: return v_;
      case AttentionBuffer::kScratch: break;
    }
    return scratch_;
  }

  // Element i of a buffer of T.
  float Get(AttentionBuffer which, int64_t i) { return Load(buffer(which), i * Bytes(), false); }
  void Set(AttentionBuffer which, int64_t i, float x) {
    Store(buffer(which), i * Bytes(), false, x);
  }

  absl::Status Product(const AttentionProduct& p) override {
    ++products;
    for (int64_t g = 0; g < p.batch; ++g) {
      for (int64_t j = 0; j < p.n; ++j) {
        for (int64_t i = 0; i < p.m; ++i) {
          float sum = 0.0f;
          for (int64_t l = 0; l < p.k; ++l) {
            const int64_t a = p.transpose_a ? l + i * p.a.ld : i + l * p.a.ld;
            sum += Operand(p.a, g, a) * Operand(p.b, g, l + j * p.b.ld);
          }
          const int64_t c = g * p.c.stride + i + j * p.c.ld;
          Store(buffer(p.c.buffer), p.c.bytes + c * (p.c_fp32 ? 4 : Bytes()), p.c_fp32,
                p.alpha * sum);
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status Softmax(const SoftmaxPass& s) override {
    ++softmaxes;
    const int32_t length = lengths_[s.example];
    for (int64_t g = 0; g < s.heads; ++g) {
      for (int64_t r = 0; r < s.rows; ++r) {
        const int64_t row_bytes = s.bytes + (g * s.head_stride + r * s.ld) * 4;
        const int64_t visible =
            CausalVisibleKeys(s.first_row + r, prefix_, length, shape_.seq - prefix_);
        std::vector<float> row(s.keys, visible < 0 ? NAN : 0.0f);
        if (visible > 0) {
          float max = -INFINITY;
          for (int64_t j = 0; j < visible; ++j) {
            max = std::fmax(max, Load(scratch_, row_bytes + 4 * j, true));
          }
          float sum = 0.0f;
          for (int64_t j = 0; j < visible; ++j) {
            row[j] = std::exp(Load(scratch_, row_bytes + 4 * j, true) - max);
            sum += row[j];
          }
          for (int64_t j = 0; j < visible; ++j) row[j] /= sum;
        }
        for (int64_t j = 0; j < s.keys; ++j) Store(scratch_, row_bytes + j * Bytes(), false, row[j]);
      }
    }
    return absl::OkStatus();
  }

  int products = 0;
  int softmaxes = 0;

 private:
  int Bytes() const { return shape_.element_bytes; }

  // Element `index` of matrix g of an A or B operand (T).
  float Operand(const StridedOperand& o, int64_t g, int64_t index) {
    return Load(buffer(o.buffer), o.bytes + (g * o.stride + index) * Bytes(), false);
  }

  float Load(const std::vector<char>& b, int64_t at, bool fp32) {
    const int bytes = fp32 ? 4 : Bytes();
    EXPECT_GE(at, 0);
    EXPECT_LE(at + bytes, static_cast<int64_t>(b.size())) << "read past a buffer";
    if (at < 0 || at + bytes > static_cast<int64_t>(b.size())) return NAN;
    if (bytes == 4) {
      float x;
      std::memcpy(&x, b.data() + at, 4);
      return x;
    }
    Half h;
    std::memcpy(&h, b.data() + at, 2);
    return ToFloat(h);
  }

  void Store(std::vector<char>& b, int64_t at, bool fp32, float x) {
    const int bytes = fp32 ? 4 : Bytes();
    EXPECT_GE(at, 0);
    EXPECT_LE(at + bytes, static_cast<int64_t>(b.size())) << "write past a buffer";
    if (at < 0 || at + bytes > static_cast<int64_t>(b.size())) return;
    if (bytes == 4) {
      std::memcpy(b.data() + at, &x, 4);
      return;
    }
    const Half h = FromFloat<Half>(x);
    std::memcpy(b.data() + at, &h, 2);
  }

  AttentionShape shape_;
  std::vector<int32_t> lengths_;
  int64_t prefix_;
  std::vector<char> q_, k_, v_, scratch_;
};

// Fills q, k, v with values in [-2, 2] (stored as T), runs the steps and
// checks the whole query buffer against causal attention in double from
// the same stored inputs (the columns past the heads unchanged). Returns
// the number of products.
int RunAndCheck(const AttentionShape& shape, const std::vector<int32_t>& lengths,
                double tolerance) {
  HostAttention host(shape, lengths);
  const int64_t rows = shape.examples * shape.seq;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::vector<float> q(rows * shape.q_ld), k(rows * shape.kv_ld), v(rows * shape.kv_ld);
  const std::pair<AttentionBuffer, std::vector<float>*> buffers[] = {
      {AttentionBuffer::kQuery, &q}, {AttentionBuffer::kKey, &k}, {AttentionBuffer::kValue, &v}};
  for (const auto& [b, values_of] : buffers) {
    std::vector<float>& values = *values_of;
    for (size_t i = 0; i < values.size(); ++i) {
      host.Set(b, i, uniform(rng));
      values[i] = host.Get(b, i);
    }
  }
  const absl::Status status = ForEachAttentionStep(shape, host);
  EXPECT_TRUE(status.ok()) << status;
  const std::vector<double> want = ReferenceCausalAttention(shape, q, k, v, lengths);
  for (size_t i = 0; i < q.size(); ++i) {
    const float got = host.Get(AttentionBuffer::kQuery, i);
    const int64_t row = i / shape.q_ld, e = row / shape.seq;
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got)) << "example " << e << " row " << row % shape.seq;
    } else {
      EXPECT_NEAR(got, want[i], tolerance) << "example " << e << " row " << row % shape.seq
                                           << " column " << i % shape.q_ld;
    }
  }
  EXPECT_EQ(host.softmaxes * 2, host.products);
  return host.products;
}

// Multi-head attention over dense rows.
AttentionShape Shape(int64_t examples, int64_t seq, int64_t heads, int64_t head_dim,
                     int element_bytes, int64_t scratch_bytes) {
  AttentionShape shape;
  shape.examples = examples;
  shape.seq = seq;
  shape.heads = heads;
  shape.kv_heads = heads;
  shape.head_dim = head_dim;
  shape.q_ld = heads * head_dim;
  shape.kv_ld = heads * head_dim;
  shape.element_bytes = element_bytes;
  shape.q_scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  shape.scratch_bytes = scratch_bytes;
  return shape;
}

// The same with kv_heads key/value heads and rows `q_pad` and `kv_pad`
// elements wider than their heads.
AttentionShape GroupedShape(int64_t examples, int64_t seq, int64_t heads, int64_t kv_heads,
                            int64_t head_dim, int64_t q_pad, int64_t kv_pad, int element_bytes,
                            int64_t scratch_bytes) {
  AttentionShape shape = Shape(examples, seq, heads, head_dim, element_bytes, scratch_bytes);
  shape.kv_heads = kv_heads;
  shape.q_ld = heads * head_dim + q_pad;
  shape.kv_ld = kv_heads * head_dim + kv_pad;
  return shape;
}

constexpr double kFp32Tolerance = 1e-5;
// FP16: inputs are exact, the probabilities and the context are rounded to
// 11 significant bits (values up to 2: 2^-10 each).
constexpr double kFp16Tolerance = 4e-3;

TEST(PlanAttentionTiling, WholeHeadsAsManyAsTheScratchHolds) {
  // OPT-1.3B, seq 2048, one example, FP16: the workspace beyond q, k, v is
  // T · h + seq² halves = 16 MiB, one head's fp32 scores.
  AttentionShape shape = Shape(1, 2048, 32, 64, 2, (2048 * 2048 + 2048 * 2048) * 2);
  absl::StatusOr<AttentionTiling> tiling = PlanAttentionTiling(shape);
  ASSERT_TRUE(tiling.ok()) << tiling.status();
  EXPECT_EQ(tiling->heads_per_call, 1);
  EXPECT_EQ(tiling->rows_per_chunk, 2048);
  shape.element_bytes = 4;  // FP32: twice the bytes, two heads per call
  shape.scratch_bytes *= 2;
  tiling = PlanAttentionTiling(shape);
  ASSERT_TRUE(tiling.ok()) << tiling.status();
  EXPECT_EQ(tiling->heads_per_call, 2);
  shape.scratch_bytes = int64_t{1} << 40;  // never more heads than there are
  EXPECT_EQ(PlanAttentionTiling(shape)->heads_per_call, 32);
}

TEST(PlanAttentionTiling, ChunksOfRowsWhenOneHeadDoesNotFit) {
  // seq 11: rows of 12 floats; 40 floats hold 3 rows.
  const absl::StatusOr<AttentionTiling> tiling = PlanAttentionTiling(Shape(1, 11, 2, 4, 4, 160));
  ASSERT_TRUE(tiling.ok()) << tiling.status();
  EXPECT_EQ(tiling->heads_per_call, 1);
  EXPECT_EQ(tiling->rows_per_chunk, 3);
}

TEST(PlanAttentionTiling, RefusesAScratchWithoutOneRowAndBadShapes) {
  absl::StatusOr<AttentionTiling> tiling = PlanAttentionTiling(Shape(1, 11, 2, 4, 4, 47));
  ASSERT_FALSE(tiling.ok());
  EXPECT_EQ(tiling.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(tiling.status().message().find("at least 48 bytes"), std::string::npos)
      << tiling.status();
  tiling = PlanAttentionTiling(Shape(1, 11, 2, 4, 3, 1 << 20));
  ASSERT_FALSE(tiling.ok());
  EXPECT_NE(tiling.status().message().find("element_bytes 3"), std::string::npos);
  tiling = PlanAttentionTiling(Shape(1, 0, 2, 4, 4, 1 << 20));
  ASSERT_FALSE(tiling.ok());
  EXPECT_NE(tiling.status().message().find("seq 0"), std::string::npos);
}

TEST(AttentionSteps, WholeHeadsGiveCausalAttention) {
  // 11 · 12 floats per head: room for exactly one head per call.
  const int products = RunAndCheck(Shape(3, 11, 3, 4, 4, 11 * 12 * 4), {11, 6, 1}, kFp32Tolerance);
  EXPECT_EQ(products, 3 * 3 * 2);
}

TEST(AttentionSteps, SeveralHeadsPerCallWithAShorterLastGroup) {
  // Room for two heads: groups of 2 and 1.
  const int products = RunAndCheck(Shape(2, 7, 3, 5, 4, 2 * 7 * 8 * 4), {7, 4}, kFp32Tolerance);
  EXPECT_EQ(products, 2 * 2 * 2);
}

TEST(AttentionSteps, ChunksOfQueryRowsThatDoNotDivideSeq) {
  for (int64_t rows : {1, 3, 10}) {
    SCOPED_TRACE(rows);
    // seq 11, rows of 12 floats.
    const int products =
        RunAndCheck(Shape(2, 11, 2, 4, 4, rows * 12 * 4), {11, 5}, kFp32Tolerance);
    EXPECT_EQ(products, 2 * 2 * 2 * ((11 + rows - 1) / rows));
  }
}

TEST(AttentionSteps, HalfPrecisionProbabilitiesInTheScoresBytes) {
  RunAndCheck(Shape(2, 9, 2, 8, 2, 9 * 12 * 4), {9, 3}, kFp16Tolerance);     // whole heads
  RunAndCheck(Shape(2, 9, 2, 8, 2, 2 * 12 * 4), {9, 3}, kFp16Tolerance);     // 2-row chunks
  RunAndCheck(Shape(1, 9, 4, 8, 2, 3 * 9 * 12 * 4), {8}, kFp16Tolerance);  // 3 heads a call
}

TEST(AttentionSteps, SequenceOfOne) {
  RunAndCheck(Shape(2, 1, 2, 4, 2, 16), {1, 1}, kFp16Tolerance);
}

TEST(AttentionSteps, AnInvalidLengthGivesNaNOnlyToItsExample) {
  RunAndCheck(Shape(3, 5, 2, 4, 4, 5 * 8 * 4), {5, 0, 3}, kFp32Tolerance);
  RunAndCheck(Shape(2, 5, 2, 4, 4, 2 * 8 * 4), {9, 2}, kFp32Tolerance);
}

TEST(AttentionSteps, GroupedQueryHeadsReadTheirKeyValueHead) {
  // 6 query heads on 2 key/value heads (group 3): whole heads, both
  // key/value heads in one call; then one head per call; then row chunks.
  int products = RunAndCheck(GroupedShape(2, 7, 6, 2, 4, 0, 0, 4, 2 * 7 * 8 * 4), {7, 4},
                             kFp32Tolerance);
  EXPECT_EQ(products, 2 * 3 * 1 * 2);  // examples · group · calls · 2
  products = RunAndCheck(GroupedShape(2, 7, 6, 2, 4, 0, 0, 4, 7 * 8 * 4), {7, 4}, kFp32Tolerance);
  EXPECT_EQ(products, 2 * 3 * 2 * 2);
  RunAndCheck(GroupedShape(1, 7, 6, 2, 4, 0, 0, 4, 3 * 8 * 4), {6}, kFp32Tolerance);
  // FP16, and a single key/value head (multi-query attention).
  RunAndCheck(GroupedShape(2, 9, 4, 2, 8, 0, 0, 2, 9 * 12 * 4), {9, 3}, kFp16Tolerance);
  RunAndCheck(GroupedShape(2, 5, 4, 1, 4, 0, 0, 4, 5 * 8 * 4), {5, 2}, kFp32Tolerance);
}

TEST(AttentionSteps, RowsWiderThanTheirHeadsKeepTheOtherColumns) {
  // GPT-2's fused rows: the queries' rows also hold k and v (q_ld = q +
  // 2kv); then 4 query heads of d 6 on 2 key/value heads, both row kinds
  // padded, FP16.
  RunAndCheck(GroupedShape(2, 6, 2, 2, 4, 16, 8, 4, 6 * 8 * 4), {6, 3}, kFp32Tolerance);
  RunAndCheck(GroupedShape(2, 6, 4, 2, 6, 24, 5, 2, 2 * 6 * 8 * 4), {6, 1}, kFp16Tolerance);
}

TEST(PlanAttentionTiling, RefusesGroupsThatDoNotDivideAndShortRows) {
  absl::StatusOr<AttentionTiling> tiling =
      PlanAttentionTiling(GroupedShape(1, 4, 6, 4, 4, 0, 0, 4, 1 << 10));
  ASSERT_FALSE(tiling.ok());
  EXPECT_NE(tiling.status().message().find("kv_heads to divide heads"), std::string::npos)
      << tiling.status();
  tiling = PlanAttentionTiling(GroupedShape(1, 4, 4, 2, 4, -1, 0, 4, 1 << 10));
  ASSERT_FALSE(tiling.ok());
  EXPECT_NE(tiling.status().message().find("query rows of at least 16"), std::string::npos)
      << tiling.status();
  tiling = PlanAttentionTiling(GroupedShape(1, 4, 4, 2, 4, 0, -1, 4, 1 << 10));
  ASSERT_FALSE(tiling.ok());
  // At most one key/value head's worth of heads per call.
  tiling = PlanAttentionTiling(GroupedShape(1, 4, 8, 2, 4, 0, 0, 4, 1 << 20));
  ASSERT_TRUE(tiling.ok()) << tiling.status();
  EXPECT_EQ(tiling->heads_per_call, 2);
}

// Attention over a prefix of k keys and values as attention.cc runs it:
// each example alone, its queries behind k zero rows and its keys and
// values behind the prefix's, through the plan of its PrefixJoinedShape
// (seq k + seq) with the softmax's prefix mask; rows k .. k + seq of its
// joined queries must be its context over the prefix
// (attention_reference.h), for every tiling.
void CheckJoinedPrefix(AttentionShape shape, const std::vector<int32_t>& lengths,
                       int64_t tokens, int64_t scratch_bytes, double tolerance) {
  shape.scratch_bytes = scratch_bytes;
  const int64_t seq = shape.seq, rows = shape.examples * seq;
  const AttentionShape joined = PrefixJoinedShape(shape, tokens);
  const int64_t qw = joined.q_ld, kvw = joined.kv_ld;
  // Values in [-2, 2], as T stores them (a scratch host buffer rounds them).
  HostAttention rounding(shape, lengths);
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  auto draw = [&](int64_t n) {
    std::vector<float> x(n);
    for (float& value : x) {
      rounding.Set(AttentionBuffer::kQuery, 0, uniform(rng));
      value = rounding.Get(AttentionBuffer::kQuery, 0);
    }
    return x;
  };
  const std::vector<float> q = draw(rows * shape.q_ld), k = draw(rows * shape.kv_ld),
                           v = draw(rows * shape.kv_ld);
  ReferencePrefix prefix;
  prefix.tokens = tokens;
  prefix.keys = draw(tokens * kvw);
  prefix.values = draw(tokens * kvw);
  const std::vector<double> want = ReferenceCausalAttention(shape, q, k, v, lengths, prefix);
  for (int64_t e = 0; e < shape.examples; ++e) {
    SCOPED_TRACE("example " + std::to_string(e));
    HostAttention host(joined, {lengths[e]}, tokens);
    for (int64_t r = 0; r < joined.seq; ++r) {
      const int64_t t = r - tokens;  // the real position, when >= 0
      for (int64_t c = 0; c < qw; ++c) {
        host.Set(AttentionBuffer::kQuery, r * qw + c,
                 t < 0 ? 0.0f : q[(e * seq + t) * shape.q_ld + c]);
      }
      for (int64_t c = 0; c < kvw; ++c) {
        const int64_t real = (e * seq + t) * shape.kv_ld + c;
        host.Set(AttentionBuffer::kKey, r * kvw + c, t < 0 ? prefix.keys[r * kvw + c] : k[real]);
        host.Set(AttentionBuffer::kValue, r * kvw + c,
                 t < 0 ? prefix.values[r * kvw + c] : v[real]);
      }
    }
    const absl::Status status = ForEachAttentionStep(joined, host);
    ASSERT_TRUE(status.ok()) << status;
    for (int64_t t = 0; t < seq; ++t) {
      for (int64_t c = 0; c < qw; ++c) {
        const float got = host.Get(AttentionBuffer::kQuery, (tokens + t) * qw + c);
        const double expected = want[(e * seq + t) * shape.q_ld + c];
        if (std::isnan(expected)) {
          EXPECT_TRUE(std::isnan(got)) << "row " << t;
        } else {
          EXPECT_NEAR(got, expected, tolerance) << "row " << t << " column " << c;
        }
      }
    }
  }
}

TEST(AttentionSteps, AnExampleJoinedBehindAPrefixIsAttentionOverIt) {
  // seq 9 behind a prefix of 3: 12 keys, score rows of 12 floats. Whole
  // heads (both key/value heads in one call, then one), chunks of 5 rows
  // and of one; grouped-query heads with rows wider than their heads, a
  // padded, a length-1 and an invalid example; FP32 and FP16.
  const AttentionShape fp32 = GroupedShape(4, 9, 4, 2, 4, 8, 3, 4, 0);
  const std::vector<int32_t> lengths = {9, 4, 1, 0};
  for (int64_t scratch_bytes : {2 * 12 * 12 * 4, 12 * 12 * 4, 5 * 12 * 4, 12 * 4}) {
    SCOPED_TRACE(scratch_bytes);
    CheckJoinedPrefix(fp32, lengths, 3, scratch_bytes, kFp32Tolerance);
  }
  const AttentionShape fp16 = GroupedShape(2, 9, 4, 1, 8, 0, 0, 2, 0);
  CheckJoinedPrefix(fp16, {9, 5}, 3, 12 * 12 * 4, kFp16Tolerance);
  CheckJoinedPrefix(fp16, {9, 5}, 3, 2 * 12 * 4, kFp16Tolerance);
}

// Records the steps as text.
class StepLog : public AttentionSteps {
 public:
  absl::Status Product(const AttentionProduct& p) override {
    lines.push_back(Operand(p.a) + Operand(p.b) + Operand(p.c) + " m" + std::to_string(p.m) +
                    " n" + std::to_string(p.n) + " k" + std::to_string(p.k) + " batch" +
                    std::to_string(p.batch));
    return absl::OkStatus();
  }
  absl::Status Softmax(const SoftmaxPass& s) override {
    lines.push_back("softmax e" + std::to_string(s.example) + " r" + std::to_string(s.first_row) +
                    " rows" + std::to_string(s.rows) + " keys" + std::to_string(s.keys));
    return absl::OkStatus();
  }
  std::vector<std::string> lines;

 private:
  static std::string Operand(const StridedOperand& o) {
    return " [" + std::to_string(static_cast<int>(o.buffer)) + "@" + std::to_string(o.bytes) +
           " ld" + std::to_string(o.ld) + " stride" + std::to_string(o.stride) + "]";
  }
};

TEST(AttentionSteps, AnExamplesStepsDoNotDependOnTheRestOfTheBatch) {
  // The products of example 0 are the same (shapes, offsets) with 1 or 3
  // examples, when the scratch is the same: cuBLAS then picks the same
  // algorithms for them.
  StepLog alone, in_batch;
  ASSERT_TRUE(ForEachAttentionStep(Shape(1, 11, 3, 4, 2, 3 * 12 * 4), alone).ok());
  ASSERT_TRUE(ForEachAttentionStep(Shape(3, 11, 3, 4, 2, 3 * 12 * 4), in_batch).ok());
  ASSERT_EQ(in_batch.lines.size(), 3 * alone.lines.size());
  for (size_t i = 0; i < alone.lines.size(); ++i) EXPECT_EQ(alone.lines[i], in_batch.lines[i]);
}

TEST(AttentionSteps, AStepsErrorStopsTheWalk) {
  class FailingSoftmax : public StepLog {
   public:
    absl::Status Softmax(const SoftmaxPass&) override {
      return absl::InternalError("launch failed");
    }
  } failing;
  const absl::Status status = ForEachAttentionStep(Shape(1, 4, 2, 4, 4, 1 << 10), failing);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(failing.lines.size(), 1u);  // the first scores product only
}

}  // namespace
}  // namespace zosched
