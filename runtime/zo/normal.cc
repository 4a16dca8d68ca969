#include "runtime/zo/normal.h"

#include <cstdint>

namespace zosched {

void FillNormals(uint64_t seed, uint32_t stream, uint64_t first, int64_t count, float* out) {
  if (count <= 0) return;
  uint64_t index = first;
  uint64_t left = static_cast<uint64_t>(count);
  while (left > 0) {
    float z[4];
    StandardNormal4(seed, stream, index >> 2, z);
    // Elements index .. of this group of four, at most `left` of them.
    uint64_t take = 4 - (index & 3u);
    if (take > left) take = left;
    for (uint64_t i = 0; i < take; ++i) *out++ = z[(index & 3u) + i];
    index += take;
    left -= take;
  }
}

}  // namespace zosched
