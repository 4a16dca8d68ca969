// Differential test of the ZO kernels (perturb, update, cast, projected
// gradient) against the CPU backend's reference code, with tolerance zero:
// every element must have the same bits (docs/ARCHITECTURE.md, 'Determinism
// contract').
// Built only under --config=cuda; the GPU cases skip when no GPU is visible.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/device_test_util.h"
#include "runtime/cuda/zo/cast.h"
#include "runtime/cuda/zo/perturb.h"
#include "runtime/cuda/zo/projected_gradient.h"
#include "runtime/cuda/zo/update.h"
#include "runtime/dtype/element.h"
#include "runtime/dtype/half_convert.h"
#include "runtime/model_parts.h"
#include "runtime/dtype/convert.h"
#include "runtime/zo/normal.h"
#include "runtime/zo/zo_math.h"
#include "runtime/zo/zo_state.h"
#include "runtime/zo_ranges.h"

namespace zosched {
namespace {


template <class T>
DevicePtr Upload(const std::vector<T>& host) {
  const size_t bytes = host.size() * sizeof(T);
  DevicePtr d = Alloc(bytes);
  if (d != nullptr &&
      cudaMemcpy(d.get(), host.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    return nullptr;
  }
  return d;
}

// The first n elements at `d`, after everything enqueued so far (the tests
// launch on the legacy default stream, which cudaMemcpy waits for).
template <class T>
std::vector<T> Download(const DevicePtr& d, size_t n) {
  std::vector<T> host(n);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(host.data(), d.get(), n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

// A device copy of `host` between two guard bands of sentinel bytes, to
// check that a kernel writes nothing outside the range it is given.
template <class T>
class GuardedBuffer {
 public:
  explicit GuardedBuffer(const std::vector<T>& host) : n_(host.size()) {
    const auto* elements = reinterpret_cast<const unsigned char*>(host.data());
    std::vector<unsigned char> bytes(kGuardBytes, kSentinel);
    bytes.insert(bytes.end(), elements, elements + n_ * sizeof(T));
    bytes.insert(bytes.end(), kGuardBytes, kSentinel);
    d_ = Upload(bytes);
  }
  bool ok() const { return d_ != nullptr; }
  void* get() const { return static_cast<unsigned char*>(d_.get()) + kGuardBytes; }
  // The n elements, after checking that both guard bands are intact.
  std::vector<T> Elements() const {
    const std::vector<unsigned char> bytes = Download<unsigned char>(d_, Bytes());
    for (size_t k = 0; k < kGuardBytes; ++k) {
      EXPECT_EQ(bytes[k], kSentinel) << "written before the range";
      EXPECT_EQ(bytes[Bytes() - 1 - k], kSentinel) << "written after the range";
    }
    std::vector<T> host(n_);
    std::memcpy(host.data(), bytes.data() + kGuardBytes, n_ * sizeof(T));
    return host;
  }

 private:
  static constexpr size_t kGuardBytes = 64;
  static constexpr unsigned char kSentinel = 0x5a;
  size_t Bytes() const { return 2 * kGuardBytes + n_ * sizeof(T); }
  size_t n_;
  DevicePtr d_;
};

// Counts elements whose bits differ, reporting the first few.
template <class T>
int64_t Mismatches(const std::vector<T>& got, const std::vector<T>& want) {
  EXPECT_EQ(got.size(), want.size());
  int64_t bad = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0 && bad++ < 5) {
      ADD_FAILURE() << "element " << i;
    }
  }
  return bad;
}

template <class T>
ElementType TypeOf();
template <>
ElementType TypeOf<float>() {
  return ElementType::kF32;
}
template <>
ElementType TypeOf<Half>() {
  return ElementType::kF16;
}
template <>
ElementType TypeOf<BFloat16>() {
  return ElementType::kBF16;
}

// n parameters of mixed sign and magnitude, stored as T.
template <class T>
std::vector<T> Params(int64_t n) {
  std::vector<T> theta(n);
  for (int64_t i = 0; i < n; ++i) {
    const float scale = (i % 3 == 0) ? 1e-3f : (i % 3 == 1 ? 0.05f : 2.0f);
    theta[i] = FromFloat<T>(scale * static_cast<float>((i * 7919) % 2001 - 1000) * 1e-3f);
  }
  return theta;
}

std::vector<float> Widen(const std::vector<float>& v) { return v; }
template <class T>
std::vector<float> Widen(const std::vector<T>& v) {
  std::vector<float> wide(v.size());
  for (size_t i = 0; i < v.size(); ++i) wide[i] = ToFloat(v[i]);
  return wide;
}

template <class T>
std::vector<T> Narrow(const std::vector<float>& v) {
  std::vector<T> narrow(v.size());
  for (size_t i = 0; i < v.size(); ++i) narrow[i] = FromFloat<T>(v[i]);
  return narrow;
}

// The CPU reference of LaunchPerturb: PerturbRange on the widened values,
// narrowed back (for T = float exactly PerturbRange; for fp16/bf16 the loop
// FromFloat<T>(Perturbed(ToFloat(theta[i]), z, eps, sign))).
template <class T>
std::vector<T> PerturbOnCpu(uint64_t seed, uint32_t stream, int64_t first,
                            const std::vector<T>& theta, float eps, int sign) {
  const std::vector<float> wide = Widen(theta);
  std::vector<float> out(theta.size());
  PerturbRange(seed, stream, first, static_cast<int64_t>(theta.size()), wide.data(), eps, sign,
               out.data());
  return Narrow<T>(out);
}

constexpr uint64_t kSeed = 0x9e3779b97f4a7c15ull;
constexpr uint32_t kStream = 5;
constexpr int64_t kHighFirst = (int64_t{1} << 33) + 3;  // unaligned, high counter word set

template <class T>
void CheckPerturb(int64_t first, int64_t count, int sign) {
  SCOPED_TRACE(testing::Message() << "type " << static_cast<int>(TypeOf<T>()) << " first " << first
                                  << " count " << count << " sign " << sign);
  const float eps = 1e-3f;
  const std::vector<T> theta = Params<T>(count);
  DevicePtr d_theta = Upload(theta);
  GuardedBuffer<T> d_out{std::vector<T>(count)};
  ASSERT_TRUE(d_theta != nullptr && d_out.ok());
  ASSERT_EQ(LaunchPerturb(TypeOf<T>(), kSeed, kStream, first, count, d_theta.get(), eps, sign,
                          d_out.get(), nullptr),
            cudaSuccess);
  EXPECT_EQ(Mismatches(d_out.Elements(), PerturbOnCpu(kSeed, kStream, first, theta, eps, sign)), 0);
}

TEST(ZoKernelsGpu, PerturbMatchesPerturbRange) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  for (int sign : {+1, -1}) {
    CheckPerturb<float>(kHighFirst, 100003, sign);
    CheckPerturb<Half>(kHighFirst, 100003, sign);
    CheckPerturb<BFloat16>(kHighFirst, 100003, sign);
  }
}

TEST(ZoKernelsGpu, PerturbEdgesOfPhiloxGroups) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  // Every alignment of both ends of short ranges.
  for (int64_t first = 0; first < 8; ++first) {
    for (int64_t count = 1; count <= 9; ++count) {
      CheckPerturb<float>(first, count, +1);
      CheckPerturb<Half>(kHighFirst + first, count, -1);
    }
  }
}

template <class T>
void CheckPerturbRows(int64_t row_width) {
  SCOPED_TRACE(testing::Message() << "type " << static_cast<int>(TypeOf<T>()) << " row_width "
                                  << row_width);
  const int64_t table_rows = 37;
  const int64_t table_first = (int64_t{1} << 32) + 1;
  const std::vector<int32_t> rows = {5, 0, 36, 5, 17, 1, 2, 3, 35};
  const int64_t n_rows = static_cast<int64_t>(rows.size());
  const float eps = 2e-3f;
  const int sign = -1;
  const std::vector<T> table = Params<T>(table_rows * row_width);
  DevicePtr d_table = Upload(table);
  DevicePtr d_rows = Upload(rows);
  GuardedBuffer<T> d_out{std::vector<T>(n_rows * row_width)};
  ASSERT_TRUE(d_table != nullptr && d_rows != nullptr && d_out.ok());
  ASSERT_EQ(LaunchPerturbRows(TypeOf<T>(), kSeed, kStream, table_first, d_table.get(), row_width,
                              static_cast<const int32_t*>(d_rows.get()), n_rows, eps, sign,
                              d_out.get(), nullptr),
            cudaSuccess);
  // As the CPU backend's Embed: PerturbRange of each gathered table row.
  std::vector<T> want;
  for (int32_t t : rows) {
    const std::vector<T> row(table.begin() + t * row_width, table.begin() + (t + 1) * row_width);
    const std::vector<T> perturbed =
        PerturbOnCpu(kSeed, kStream, table_first + t * row_width, row, eps, sign);
    want.insert(want.end(), perturbed.begin(), perturbed.end());
  }
  EXPECT_EQ(Mismatches(d_out.Elements(), want), 0);
}

TEST(ZoKernelsGpu, PerturbRowsMatchesPerturbRangeOfEachRow) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  for (int64_t row_width : {1, 3, 4, 13, 1030}) {
    CheckPerturbRows<float>(row_width);
    CheckPerturbRows<Half>(row_width);
    CheckPerturbRows<BFloat16>(row_width);
  }
}

// LoRA's frozen rows: the same rows as they are, bitwise.
template <class T>
void CheckGatherRows(int64_t row_width) {
  SCOPED_TRACE(testing::Message() << "type " << static_cast<int>(TypeOf<T>()) << " row_width "
                                  << row_width);
  const int64_t table_rows = 37;
  const std::vector<int32_t> rows = {5, 0, 36, 5, 17, 1, 2, 3, 35};
  const int64_t n_rows = static_cast<int64_t>(rows.size());
  const std::vector<T> table = Params<T>(table_rows * row_width);
  DevicePtr d_table = Upload(table);
  DevicePtr d_rows = Upload(rows);
  GuardedBuffer<T> d_out{std::vector<T>(n_rows * row_width)};
  ASSERT_TRUE(d_table != nullptr && d_rows != nullptr && d_out.ok());
  ASSERT_EQ(LaunchGatherRows(TypeOf<T>(), d_table.get(), row_width,
                             static_cast<const int32_t*>(d_rows.get()), n_rows, d_out.get(),
                             nullptr),
            cudaSuccess);
  std::vector<T> want;
  for (int32_t t : rows) {
    want.insert(want.end(), table.begin() + t * row_width, table.begin() + (t + 1) * row_width);
  }
  EXPECT_EQ(Mismatches(d_out.Elements(), want), 0);
}

TEST(ZoKernelsGpu, GatherRowsCopiesEachRow) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  for (int64_t row_width : {1, 3, 1030}) {
    CheckGatherRows<float>(row_width);
    CheckGatherRows<Half>(row_width);
    CheckGatherRows<BFloat16>(row_width);
  }
}

// The decay spans of a part whose elements [first, first + count) are
// updated: decaying and non-decaying tensors, unaligned borders, one gap
// (an element in no span stays as it is, on both sides), far above 2^32.
std::vector<DecaySpan> TestSpans() {
  const int64_t b = int64_t{1} << 33;
  return {{0, b + 5, true},           {b + 5, b + 17, false},
          {b + 17, b + 1000, true},   {b + 1000, b + 1001, false},
          {b + 1003, b + 4000, true}, {b + 4000, b + 4333, false},
          {b + 4333, b + 90000, true}};
}

DecaySpanTable ToTable(const std::vector<DecaySpan>& spans) {
  DecaySpanTable table;
  table.count = static_cast<int>(spans.size());
  for (size_t s = 0; s < spans.size(); ++s) {
    table.begin[s] = spans[s].begin;
    table.end[s] = spans[s].end;
    table.decays[s] = spans[s].decays;
  }
  return table;
}

// The pending update of `directions` directions of step seed kSeed: entry i
// has DirectionSeed(kSeed, i), a g of its own and learning rate `lr`.
std::vector<ZoState> Pending(int directions, float lr) {
  const float g[] = {-3.75f, 1.3125f, 0.40625f, -2.0f};
  std::vector<ZoState> pending(directions);
  for (int i = 0; i < directions; ++i) {
    pending[i].seed = DirectionSeed(kSeed, i);
    pending[i].g = g[i % 4] * static_cast<float>(1 + i / 4);
    pending[i].learning_rate = lr;
  }
  return pending;
}

template <class T>
void CheckUpdate(const std::vector<ZoState>& pending) {
  const int directions = static_cast<int>(pending.size());
  SCOPED_TRACE(testing::Message() << "type " << static_cast<int>(TypeOf<T>()) << " directions "
                                  << directions << " lr " << pending[0].learning_rate);
  const int64_t first = (int64_t{1} << 33) + 1, count = 80001;
  const uint32_t stream = 2;
  const float weight_decay = 0.01f;
  const std::vector<DecaySpan> spans = TestSpans();
  const std::vector<T> theta = Params<T>(count);
  GuardedBuffer<T> d_theta(theta);
  DevicePtr d_state = Upload(pending);
  ASSERT_TRUE(d_theta.ok() && d_state != nullptr);
  ASSERT_EQ(LaunchUpdate(TypeOf<T>(), static_cast<const ZoState*>(d_state.get()), directions,
                         stream, ToTable(spans), weight_decay, first, count, d_theta.get(),
                         nullptr),
            cudaSuccess);
  // The CPU reference: UpdateRange on the widened values, narrowed back.
  std::vector<float> wide = Widen(theta);
  UpdateRange(pending.data(), directions, stream, spans, weight_decay, first, count, wide.data());
  const std::vector<T> want = Narrow<T>(wide);
  EXPECT_EQ(Mismatches(d_theta.Elements(), want), 0);
  if (pending[0].learning_rate == 0) {
    EXPECT_EQ(Mismatches(want, theta), 0);
  } else {
    EXPECT_NE(std::memcmp(want.data(), theta.data(), theta.size() * sizeof(T)), 0)
        << "the update changed nothing";
  }
}

TEST(ZoKernelsGpu, UpdateMatchesUpdateRange) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const std::vector<ZoState> pending = Pending(1, 1e-3f);
  CheckUpdate<float>(pending);
  CheckUpdate<Half>(pending);
  CheckUpdate<BFloat16>(pending);
}

TEST(ZoKernelsGpu, UpdateWithNothingPendingChangesNothing) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  for (int directions : {1, 3}) {
    const std::vector<ZoState> pending = Pending(directions, 0.0f);
    CheckUpdate<float>(pending);
    CheckUpdate<Half>(pending);
    CheckUpdate<BFloat16>(pending);
  }
}

// n-SPSA: the mean of g_i z_i over three directions (and more, past the
// group of four g values Pending cycles through), bitwise UpdateRange's.
TEST(ZoKernelsGpu, UpdateOfSeveralDirectionsMatchesUpdateRange) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  for (int directions : {3, 9}) {
    const std::vector<ZoState> pending = Pending(directions, 1e-3f);
    CheckUpdate<float>(pending);
    CheckUpdate<Half>(pending);
    CheckUpdate<BFloat16>(pending);
  }
}

// A one-direction update is MeZO's Updated, element by element, whatever
// UpdateRange does: the q = 1 bits never moved.
TEST(ZoKernelsGpu, UpdateOfOneDirectionIsUpdated) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const ZoState s = Pending(1, 1e-3f)[0];
  const int64_t first = 3, count = 1001;
  const uint32_t stream = 7;
  const float weight_decay = 0.01f;
  DecaySpanTable spans;
  spans.count = 1;
  spans.begin[0] = 0;
  spans.end[0] = first + count;
  spans.decays[0] = true;
  const std::vector<float> theta = Params<float>(count);
  GuardedBuffer<float> d_theta(theta);
  DevicePtr d_state = Upload(std::vector<ZoState>{s});
  ASSERT_TRUE(d_theta.ok() && d_state != nullptr);
  ASSERT_EQ(LaunchUpdate(ElementType::kF32, static_cast<const ZoState*>(d_state.get()), 1, stream,
                         spans, weight_decay, first, count, d_theta.get(), nullptr),
            cudaSuccess);
  std::vector<float> want(count);
  for (int64_t i = 0; i < count; ++i) {
    want[i] = Updated(theta[i], StandardNormal(s.seed, stream, first + i), s.learning_rate, s.g,
                      weight_decay, true);
  }
  EXPECT_EQ(Mismatches(d_theta.Elements(), want), 0);
}

// The CPU's conversion of `n` elements (ConvertBuffer).
std::vector<unsigned char> ConvertOnCpu(ElementType from, const std::vector<unsigned char>& src,
                                        ElementType to, int64_t n) {
  auto dtype = [](ElementType t) {
    return t == ElementType::kF32 ? FP32 : t == ElementType::kF16 ? FP16 : BF16;
  };
  std::vector<unsigned char> dst(n * ElementBytes(to));
  ConvertBuffer(dtype(from), src.data(), dtype(to), dst.data(), n);
  return dst;
}

// Source bit patterns: for 16-bit types all 65536; for fp32 a prime-stride
// sweep of all 2^32 plus zeros, infinities, NaNs (quiet, signalling, payloads
// that vanish in 16 bits), subnormals and the fp16/bf16 rounding borders.
std::vector<unsigned char> SourcePatterns(ElementType from, int64_t* n) {
  std::vector<unsigned char> bytes;
  if (from != ElementType::kF32) {
    for (uint32_t b = 0; b <= 0xffffu; ++b) {
      const uint16_t h = static_cast<uint16_t>(b);
      bytes.insert(bytes.end(), reinterpret_cast<const unsigned char*>(&h),
                   reinterpret_cast<const unsigned char*>(&h) + 2);
    }
    *n = 65536;
    return bytes;
  }
  std::vector<uint32_t> bits = {
      0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,  // ±0, ±inf
      0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u,  // NaNs
      0x7f801fffu, 0x7fa00000u, 0x7f807fffu, 0x7fff0000u,  // NaN payloads
      0x00000001u, 0x80000001u, 0x007fffffu, 0x00400000u,  // fp32 subnormals
      0x00800000u, 0x7f7fffffu, 0xff7fffffu,               // smallest / largest normal
      0x477fe000u, 0x477fefffu, 0x477ff000u, 0x477ff001u,  // fp16 65504 .. overflow
      0x33000000u, 0x33000001u, 0x33800000u, 0x387fc000u,  // fp16 subnormal borders
      0x38800000u, 0x3f808000u, 0x3f818000u, 0x3f807fffu,  // bf16 ties
      0x7f7f8000u, 0x7f7f7fffu, 0x3c00u,     0x3c01u};
  for (uint64_t u = 7; u <= 0xffffffffull; u += 65521u) bits.push_back(static_cast<uint32_t>(u));
  bytes.resize(bits.size() * 4);
  std::memcpy(bytes.data(), bits.data(), bytes.size());
  *n = static_cast<int64_t>(bits.size());
  return bytes;
}

TEST(ZoKernelsGpu, CastMatchesConvertBufferForAllNinePairs) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const ElementType types[] = {ElementType::kF32, ElementType::kF16, ElementType::kBF16};
  for (ElementType from : types) {
    for (ElementType to : types) {
      SCOPED_TRACE(testing::Message()
                   << "from " << static_cast<int>(from) << " to " << static_cast<int>(to));
      int64_t n = 0;
      const std::vector<unsigned char> src = SourcePatterns(from, &n);
      DevicePtr d_src = Upload(src);
      GuardedBuffer<unsigned char> d_dst{std::vector<unsigned char>(n * ElementBytes(to))};
      ASSERT_TRUE(d_src != nullptr && d_dst.ok());
      ASSERT_EQ(LaunchCast(from, d_src.get(), to, d_dst.get(), n, nullptr), cudaSuccess);
      EXPECT_EQ(Mismatches(d_dst.Elements(), ConvertOnCpu(from, src, to, n)), 0);
    }
  }
}

// LaunchProjectedGradient of a step of `directions` directions of `batch`
// examples against the CPU backend's ProjectedGradientOp, bitwise.
void CheckProjectedGradient(int batch, int directions) {
  SCOPED_TRACE(testing::Message() << "batch " << batch << " directions " << directions);
  const int n = directions * batch;  // losses of each sign
  // Losses of both signs interleaved in a larger buffer, reached through
  // index lists (direction i, example e at i·batch + e) as the CPU backend
  // reaches them. Their magnitudes span 2^-60 .. 2^60, so the double sums
  // round and their order shows.
  std::vector<float> losses(2 * n + 3);
  for (size_t k = 0; k < losses.size(); ++k) {
    const float mantissa = 1.0f + static_cast<float>((k * 7919) % 1021) / 1021.0f;
    losses[k] = std::ldexp(mantissa, static_cast<int>((k * 37) % 121) - 60);
  }
  std::vector<int32_t> plus_index(n), minus_index(n);
  for (int k = 0; k < n; ++k) {
    plus_index[k] = 2 * ((k * 5) % n) + 1;
    minus_index[k] = 2 * ((k * 5) % n) + 2;
  }
  const float eps = 1e-3f, lr = 5e-4f;
  const uint64_t seed = StepSeed(kSeed, 12);
  DevicePtr d_losses = Upload(losses);
  DevicePtr d_plus = Upload(plus_index);
  DevicePtr d_minus = Upload(minus_index);
  GuardedBuffer<ZoState> d_state{std::vector<ZoState>(directions)};
  DevicePtr d_mean = Alloc(sizeof(double));
  ASSERT_TRUE(d_losses != nullptr && d_plus != nullptr && d_minus != nullptr && d_state.ok() &&
              d_mean != nullptr);
  ASSERT_EQ(LaunchProjectedGradient(static_cast<const float*>(d_losses.get()),
                                    static_cast<const int32_t*>(d_plus.get()),
                                    static_cast<const int32_t*>(d_minus.get()), batch, directions,
                                    eps, seed, lr, static_cast<ZoState*>(d_state.get()),
                                    static_cast<double*>(d_mean.get()), nullptr),
            cudaSuccess);
  const std::vector<ZoState> states = d_state.Elements();
  const double mean = Download<double>(d_mean, 1)[0];
  // As the CPU backend's ProjectedGradientOp: the mean loss summed in
  // (direction, example) order, each direction's g over its own losses.
  std::vector<float> loss_plus(n), loss_minus(n);
  double sum = 0;
  for (int k = 0; k < n; ++k) {
    loss_plus[k] = losses[plus_index[k]];
    loss_minus[k] = losses[minus_index[k]];
    sum += 0.5 * (static_cast<double>(loss_plus[k]) + loss_minus[k]);
  }
  const double want_mean = sum / (static_cast<double>(directions) * batch);
  ASSERT_EQ(states.size(), static_cast<size_t>(directions));
  for (int i = 0; i < directions; ++i) {
    SCOPED_TRACE(testing::Message() << "direction " << i);
    const float g = ProjectedGradient(loss_plus.data() + i * batch, loss_minus.data() + i * batch,
                                      batch, eps);
    EXPECT_EQ(states[i].seed, DirectionSeed(seed, i));
    EXPECT_EQ(std::memcmp(&states[i].g, &g, sizeof(g)), 0) << states[i].g << " vs " << g;
    EXPECT_EQ(std::memcmp(&states[i].learning_rate, &lr, sizeof(lr)), 0);
  }
  EXPECT_EQ(states[0].seed, seed) << "direction 0 draws with the step seed";
  EXPECT_EQ(std::memcmp(&mean, &want_mean, sizeof(mean)), 0) << mean << " vs " << want_mean;
}

TEST(ZoKernelsGpu, ProjectedGradientAndMeanLossMatchCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  for (int batch : {1, 16, 37}) CheckProjectedGradient(batch, 1);
}

TEST(ZoKernelsGpu, ProjectedGradientOfSeveralDirectionsMatchesCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  for (int batch : {1, 16, 37}) CheckProjectedGradient(batch, 3);
}

// The whole n-SPSA step on the GPU: the projected gradient's q entries,
// left in device memory, feed the update, which matches UpdateRange over the
// entries the CPU computes from the same losses.
TEST(ZoKernelsGpu, ProjectedGradientFeedsUpdateOfThreeDirections) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  const int batch = 5, directions = 3, n = batch * directions;
  std::vector<float> losses(2 * n);
  for (int k = 0; k < 2 * n; ++k) losses[k] = 2.0f + 0.01f * static_cast<float>((k * 13) % 17);
  std::vector<int32_t> plus_index(n), minus_index(n);
  for (int k = 0; k < n; ++k) {
    plus_index[k] = 2 * k;
    minus_index[k] = 2 * k + 1;
  }
  const float eps = 1e-3f, lr = 1e-3f, weight_decay = 0.01f;
  const uint64_t seed = StepSeed(kSeed, 3);
  const int64_t first = 5, count = 4099;
  const uint32_t stream = 1;
  const std::vector<DecaySpan> spans = {{0, 1000, true}, {1000, first + count, false}};
  const std::vector<BFloat16> theta = Params<BFloat16>(count);
  DevicePtr d_losses = Upload(losses);
  DevicePtr d_plus = Upload(plus_index);
  DevicePtr d_minus = Upload(minus_index);
  DevicePtr d_state = Alloc(directions * sizeof(ZoState));
  DevicePtr d_mean = Alloc(sizeof(double));
  GuardedBuffer<BFloat16> d_theta(theta);
  ASSERT_TRUE(d_losses != nullptr && d_plus != nullptr && d_minus != nullptr &&
              d_state != nullptr && d_mean != nullptr && d_theta.ok());
  auto* state = static_cast<ZoState*>(d_state.get());
  ASSERT_EQ(LaunchProjectedGradient(static_cast<const float*>(d_losses.get()),
                                    static_cast<const int32_t*>(d_plus.get()),
                                    static_cast<const int32_t*>(d_minus.get()), batch, directions,
                                    eps, seed, lr, state, static_cast<double*>(d_mean.get()),
                                    nullptr),
            cudaSuccess);
  ASSERT_EQ(LaunchUpdate(ElementType::kBF16, state, directions, stream, ToTable(spans),
                         weight_decay, first, count, d_theta.get(), nullptr),
            cudaSuccess);
  std::vector<ZoState> pending(directions);
  std::vector<float> loss_plus(n), loss_minus(n);
  for (int k = 0; k < n; ++k) {
    loss_plus[k] = losses[plus_index[k]];
    loss_minus[k] = losses[minus_index[k]];
  }
  for (int i = 0; i < directions; ++i) {
    pending[i].seed = DirectionSeed(seed, i);
    pending[i].g = ProjectedGradient(loss_plus.data() + i * batch, loss_minus.data() + i * batch,
                                     batch, eps);
    pending[i].learning_rate = lr;
  }
  std::vector<float> wide = Widen(theta);
  UpdateRange(pending.data(), directions, stream, spans, weight_decay, first, count, wide.data());
  EXPECT_EQ(Mismatches(d_theta.Elements(), Narrow<BFloat16>(wide)), 0);
}

// Arguments outside the contracts are refused before anything touches the
// device, and empty launches do nothing: no GPU needed.
TEST(ZoKernelsGpu, BadArgumentsAndEmptyLaunches) {
  const auto bad = static_cast<ElementType>(7);
  int dummy = 0;
  void* p = &dummy;  // never dereferenced
  EXPECT_EQ(LaunchPerturb(ElementType::kF32, 1, 0, -1, 4, p, 1e-3f, 1, p, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(LaunchPerturb(ElementType::kF32, 1, 0, 0, -1, p, 1e-3f, 1, p, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(LaunchPerturb(bad, 1, 0, 0, 4, p, 1e-3f, 1, p, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(LaunchPerturb(ElementType::kF16, 1, 0, 0, 0, p, 1e-3f, 1, p, nullptr), cudaSuccess);
  EXPECT_EQ(LaunchPerturbRows(ElementType::kF32, 1, 0, 0, p, -1, nullptr, 1, 1e-3f, 1, p, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(LaunchPerturbRows(bad, 1, 0, 0, p, 4, nullptr, 1, 1e-3f, 1, p, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(LaunchPerturbRows(ElementType::kBF16, 1, 0, 0, p, 4, nullptr, 0, 1e-3f, 1, p, nullptr),
            cudaSuccess);
  EXPECT_EQ(LaunchGatherRows(ElementType::kF32, p, -1, nullptr, 1, p, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(LaunchGatherRows(bad, p, 4, nullptr, 1, p, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(LaunchGatherRows(ElementType::kBF16, p, 4, nullptr, 0, p, nullptr), cudaSuccess);
  DecaySpanTable spans;
  EXPECT_EQ(LaunchUpdate(ElementType::kF32, nullptr, 1, 0, spans, 0.0f, 0, 0, p, nullptr),
            cudaSuccess);
  EXPECT_EQ(LaunchUpdate(ElementType::kF32, nullptr, 3, 0, spans, 0.0f, 0, 0, p, nullptr),
            cudaSuccess);
  EXPECT_EQ(LaunchUpdate(bad, nullptr, 1, 0, spans, 0.0f, 0, 4, p, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(LaunchUpdate(ElementType::kF32, nullptr, 0, 0, spans, 0.0f, 0, 4, p, nullptr),
            cudaErrorInvalidValue);
  spans.count = kMaxDecaySpans + 1;
  EXPECT_EQ(LaunchUpdate(ElementType::kF32, nullptr, 1, 0, spans, 0.0f, 0, 4, p, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(LaunchCast(ElementType::kF32, p, ElementType::kF16, p, -1, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(LaunchCast(ElementType::kF32, p, bad, p, 4, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(LaunchCast(ElementType::kF32, p, ElementType::kF16, p, 0, nullptr), cudaSuccess);
  EXPECT_EQ(LaunchProjectedGradient(nullptr, nullptr, nullptr, 0, 1, 1e-3f, 1, 1e-3f, nullptr,
                                    nullptr, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(LaunchProjectedGradient(nullptr, nullptr, nullptr, 16, 0, 1e-3f, 1, 1e-3f, nullptr,
                                    nullptr, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(LaunchProjectedGradient(nullptr, nullptr, nullptr, 1 << 20, 4096, 1e-3f, 1, 1e-3f,
                                    nullptr, nullptr, nullptr),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace zosched
