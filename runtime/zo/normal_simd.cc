#include "runtime/zo/normal_simd.h"

#include <algorithm>
#include <cstdint>

#include "base/check.h"
#include "runtime/zo/normal.h"
#include "runtime/zo/normal_lanes.h"

namespace zosched {
namespace {

// Writes the elements index, index + 1, ... of the group of four that holds
// `index`, at most `left` of them, to out; returns how many it wrote.
uint64_t FillPartOfGroup(uint64_t seed, uint32_t stream, uint64_t index, uint64_t left,
                         float* out) {
  float z[4];
  StandardNormal4(seed, stream, index >> 2, z);
  const uint64_t lane = index & 3u;
  const uint64_t take = std::min<uint64_t>(4 - lane, left);
  for (uint64_t i = 0; i < take; ++i) out[i] = z[lane + i];
  return take;
}

// out[4 k .. 4 k + 3] = StandardNormal4(seed, stream, first_group + k) for k
// in [0, groups): the widest kernel `isa` allows on as many groups as fit its
// lanes, narrower ones on the rest.
void FillWholeGroups(NormalIsa isa, uint64_t seed, uint32_t stream, uint64_t first_group,
                     int64_t groups, float* out) {
  int64_t done = 0;
#if defined(__x86_64__)
  const Uint2 key = NormalKey(seed);
  if (isa == NormalIsa::kAvx2) {
    const int64_t n = groups - groups % 8;
    normal_lanes_internal::FillNormalGroupsAvx2(key, stream, first_group, n, out);
    done = n;
  }
  if (isa != NormalIsa::kScalar) {
    const int64_t n = (groups - done) - (groups - done) % 4;
    normal_lanes_internal::FillNormalGroupsSse2(key, stream, first_group + done, n,
                                                out + 4 * done);
    done += n;
  }
#endif
  for (; done < groups; ++done) StandardNormal4(seed, stream, first_group + done, out + 4 * done);
}

}  // namespace

const char* NormalIsaName(NormalIsa isa) {
  switch (isa) {
    case NormalIsa::kScalar:
      return "scalar";
    case NormalIsa::kSse2:
      return "sse2";
    case NormalIsa::kAvx2:
      return "avx2";
  }
  return "unknown";
}

bool NormalIsaSupported(NormalIsa isa) {
#if defined(__x86_64__)
  static const bool has_avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return isa != NormalIsa::kAvx2 || has_avx2;
#else
  return isa == NormalIsa::kScalar;
#endif
}

NormalIsa FastestNormalIsa() {
  for (NormalIsa isa : {NormalIsa::kAvx2, NormalIsa::kSse2}) {
    if (NormalIsaSupported(isa)) return isa;
  }
  return NormalIsa::kScalar;
}

void FillNormalsWithIsa(NormalIsa isa, uint64_t seed, uint32_t stream, uint64_t first,
                        int64_t count, float* out) {
  CHECK(NormalIsaSupported(isa)) << NormalIsaName(isa) << " is not supported by this CPU or build";
  if (count <= 0) return;
  uint64_t index = first;
  uint64_t left = static_cast<uint64_t>(count);
  if ((index & 3u) != 0) {  // head: the rest of a group begun before `first`
    const uint64_t n = FillPartOfGroup(seed, stream, index, left, out);
    index += n;
    left -= n;
    out += n;
  }
  const int64_t groups = static_cast<int64_t>(left / 4);
  FillWholeGroups(isa, seed, stream, index >> 2, groups, out);
  index += 4 * static_cast<uint64_t>(groups);
  left -= 4 * static_cast<uint64_t>(groups);
  out += 4 * groups;
  if (left > 0) FillPartOfGroup(seed, stream, index, left, out);  // tail
}

}  // namespace zosched
