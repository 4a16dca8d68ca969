// Storage element types for code that is generic over the compute dtypes
// FP32, FP16 and BF16, on the host and on the device (`__host__ __device__`
// under nvcc): kernels are templated on the element type, and every value is
// widened to fp32 for arithmetic and narrowed back on store with
// half_convert.h's conversions (exact widening, round to nearest even), so a
// kernel stores the same bits the CPU would.
//
//   template <class T> __global__ void Scale(T* x, float a, int64_t n) {
//     ... x[i] = FromFloat<T>(hd::MulRn(ToFloat(x[i]), a)); ...
//   }
//
// Half (fp16) and BFloat16 (bf16) are 2-byte bit patterns with the layout of
// CUDA's __half and __nv_bfloat16 (cuBLAS reads them as CUDA_R_16F / CUDA_R_16BF).
#pragma once

#include <cstdint>

#include "base/hd.h"
#include "runtime/dtype/half_convert.h"

namespace zosched {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit storage types");

ZS_HD inline float ToFloat(float x) { return x; }
ZS_HD inline float ToFloat(Half x) { return Fp16ToFloat(x.bits); }
ZS_HD inline float ToFloat(BFloat16 x) { return Bf16ToFloat(x.bits); }

template <class T>
ZS_HD inline T FromFloat(float x);
template <>
ZS_HD inline float FromFloat<float>(float x) {
  return x;
}
template <>
ZS_HD inline Half FromFloat<Half>(float x) {
  return Half{FloatToFp16(x)};
}
template <>
ZS_HD inline BFloat16 FromFloat<BFloat16>(float x) {
  return BFloat16{FloatToBf16(x)};
}

// The element types a kernel launcher is asked for at run time (nvcc code
// cannot name the DType proto enum; the backend maps DType to this).
enum class ElementType : int { kF32 = 0, kF16 = 1, kBF16 = 2 };

ZS_HD inline int ElementBytes(ElementType t) { return t == ElementType::kF32 ? 4 : 2; }

}  // namespace zosched
