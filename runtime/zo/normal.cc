#include "runtime/zo/normal.h"

#include <cstdint>

#include "runtime/zo/normal_simd.h"

namespace zosched {

void FillNormals(uint64_t seed, uint32_t stream, uint64_t first, int64_t count, float* out) {
  FillNormalsWithIsa(FastestNormalIsa(), seed, stream, first, count, out);
}

}  // namespace zosched
