#include "runtime/dtype/convert.h"

#include <cstring>

#include "base/check.h"
#include "models/model_spec.h"

namespace zosched {
namespace {

// Element i of `src` (type `from`) widened to fp32. Loads through memcpy, so
// `src` needs no alignment (compilers emit a plain load).
inline float Load(DType from, const unsigned char* src, int64_t i) {
  if (from == FP32) {
    float x;
    memcpy(&x, src + 4 * i, 4);
    return x;
  }
  uint16_t h;
  memcpy(&h, src + 2 * i, 2);
  return from == FP16 ? Fp16ToFloat(h) : Bf16ToFloat(h);
}

template <DType kFrom>
void ConvertFrom(const unsigned char* src, DType to, unsigned char* dst,
                 int64_t n) {
  switch (to) {
    case FP32:
      for (int64_t i = 0; i < n; ++i) {
        const float x = Load(kFrom, src, i);
        memcpy(dst + 4 * i, &x, 4);
      }
      return;
    case FP16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = FloatToFp16(Load(kFrom, src, i));
        memcpy(dst + 2 * i, &h, 2);
      }
      return;
    case BF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t b = FloatToBf16(Load(kFrom, src, i));
        memcpy(dst + 2 * i, &b, 2);
      }
      return;
    default:
      CHECK(false) << "ConvertBuffer: unsupported destination dtype " << to;
  }
}

}  // namespace

void ConvertBuffer(DType from, const void* src, DType to, void* dst,
                   int64_t n) {
  CHECK(from == FP32 || from == FP16 || from == BF16)
      << "ConvertBuffer: unsupported source dtype " << from;
  CHECK(to == FP32 || to == FP16 || to == BF16)
      << "ConvertBuffer: unsupported destination dtype " << to;
  CHECK(n >= 0) << "ConvertBuffer: negative count " << n;
  if (n == 0) return;
  if (from == to) {
    if (src != dst) memcpy(dst, src, static_cast<size_t>(n * DTypeBytes(to)));
    return;
  }
  const auto* in = static_cast<const unsigned char*>(src);
  auto* out = static_cast<unsigned char*>(dst);
  switch (from) {
    case FP32:
      ConvertFrom<FP32>(in, to, out, n);
      return;
    case FP16:
      ConvertFrom<FP16>(in, to, out, n);
      return;
    default:
      ConvertFrom<BF16>(in, to, out, n);
      return;
  }
}

}  // namespace zosched
