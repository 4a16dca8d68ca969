// ZS_HD marks per-element math that must compile both as plain C++17 (CPU
// backend, tests) and under nvcc as `__host__ __device__` (CUDA backend), plus
// the few float primitives whose rounding that math depends on.
//
// Floating-point contract for everything built on these helpers (philox.h,
// normal.h, zo_math.h): results are bitwise identical on CPU and GPU because
// every operation is an IEEE-754 binary32 (or binary64) +, -, *, / or sqrt,
// each correctly rounded to nearest-even, evaluated in a fixed order, with no
// library transcendental calls and no fused multiply-add.
//
// - Device: MulRn/AddRn/SubRn/DivRn/SqrtRn use the __fmul_rn/__fadd_rn/
//   __fsub_rn/__fdiv_rn/__fsqrt_rn intrinsics (PTX mul.rn/add.rn/...), which
//   nvcc never contracts into an FMA and never replaces by approximations. So
//   device results do not depend on --fmad (the CUDA build may still pass
//   --fmad=false as a second guard). They do depend on --ftz: never build this
//   code with -use_fast_math or --ftz=true, which flush subnormal inputs and
//   results to zero where the CPU keeps them.
// - Host: plain operators. GCC contracts a*b+c into an FMA under its default
//   -ffp-contract=fast in C++ *whatever the -std* (unlike C, ISO C++ mode does
//   NOT turn contraction off; checked with GCC 12: `-std=c++17 -mfma` emits
//   vfmadd). The host build is safe because it targets baseline x86-64 (no
//   -march/-mfma: no FMA instruction exists, so nothing can be contracted) and
//   has SSE float evaluation (FLT_EVAL_METHOD 0, no x87 excess precision).
//   A host build that enables FMA instructions must also pass
//   -ffp-contract=off and -DZS_HOST_FP_CONTRACT_OFF; without the define the
//   #error below stops the build instead of silently changing the numbers.
//   Never build this code with -ffast-math (also an #error).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define ZS_HD __host__ __device__
#else
#define ZS_HD
#endif

#if !defined(__CUDA_ARCH__)
#if defined(__FAST_MATH__)
#error "runtime/zo: -ffast-math breaks the bitwise CPU/GPU determinism contract"
#endif
#if (defined(__FP_FAST_FMAF) || defined(__FMA__) || defined(__ARM_FEATURE_FMA)) && \
    !defined(ZS_HOST_FP_CONTRACT_OFF)
#error \
    "runtime/zo: FMA instructions are enabled; compile with -ffp-contract=off and define ZS_HOST_FP_CONTRACT_OFF"
#endif
#endif

namespace zosched {
namespace hd {

// Correctly rounded binary32 operations, never fused with their neighbours.
ZS_HD inline float MulRn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

ZS_HD inline float AddRn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

ZS_HD inline float SubRn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

ZS_HD inline float DivRn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// sqrt(a) correctly rounded (IEEE-754 requires it of sqrtf; SSE sqrtss is).
ZS_HD inline float SqrtRn(float a) {
#ifdef __CUDA_ARCH__
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

// Correctly rounded binary64 operations, never fused with their neighbours.
ZS_HD inline double AddRnD(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

ZS_HD inline double SubRnD(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

ZS_HD inline double MulRnD(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

ZS_HD inline double DivRnD(double a, double b) {
#ifdef __CUDA_ARCH__
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

// The bits of a float and back (no conversion, no rounding).
ZS_HD inline uint32_t FloatToBits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
#endif
}

ZS_HD inline float BitsToFloat(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
#endif
}

}  // namespace hd
}  // namespace zosched
