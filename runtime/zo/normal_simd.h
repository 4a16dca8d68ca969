// FillNormals (normal.h) with SIMD: the same floats, bit for bit, several
// times faster on x86-64.
//
// Contract: for every instruction set `isa` that NormalIsaSupported accepts,
// FillNormalsWithIsa(isa, seed, stream, first, count, out) writes
// out[i] = StandardNormal(seed, stream, first + i) for i in [0, count),
// bitwise, for any seed, stream, first (any alignment to the groups of four)
// and count. So the vector paths also equal the GPU's normals.
//
// Instruction sets (x86-64 only; other builds have kScalar alone):
// - kScalar: StandardNormal4 per group of four, the reference.
// - kSse2: 4 groups per step in 128-bit registers (normal_sse2.cc); every
//   x86-64 CPU has SSE2.
// - kAvx2: 8 groups per step in 256-bit registers (normal_avx2.cc, the only
//   file built with -mavx2), taken only where the CPU reports AVX2 usable
//   (cpuid and the OS's saved register state, __builtin_cpu_supports).
// None uses fused multiply-add. How the vector math keeps every bit:
// normal_lanes.h.
#pragma once

#include <cstdint>

namespace zosched {

enum class NormalIsa { kScalar, kSse2, kAvx2 };

// "scalar", "sse2" or "avx2".
const char* NormalIsaName(NormalIsa isa);

// Whether this build and CPU can run `isa`: kScalar always; kSse2 in every
// x86-64 build; kAvx2 in x86-64 builds on CPUs with AVX2. Detected once.
bool NormalIsaSupported(NormalIsa isa);

// The fastest supported instruction set (kAvx2, else kSse2, else kScalar):
// what FillNormals uses.
NormalIsa FastestNormalIsa();

// FillNormals computed with `isa`: out[i] = StandardNormal(seed, stream,
// first + i) for i in [0, count), bitwise. `out` holds `count` floats, any
// alignment; count <= 0 writes nothing; first + count must not overflow
// uint64. CHECK-fails if !NormalIsaSupported(isa) (a caller's bug: ask first).
void FillNormalsWithIsa(NormalIsa isa, uint64_t seed, uint32_t stream, uint64_t first,
                        int64_t count, float* out);

}  // namespace zosched
