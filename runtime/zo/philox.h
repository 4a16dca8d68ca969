// Philox-4x32-10: the counter-based random bit generator of Salmon, Moraes,
// Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3" (SC'11).
//
// A pure function of (counter, key): 128 counter bits and 64 key bits give
// 128 random bits. No state, so any element's bits can be computed on any
// device, in any order, by any slicing. Matches the Random123 reference
// (philox4x32, 10 rounds) bit for bit; philox_test.cc checks its published
// known-answer vectors. Integer-only: identical on CPU and GPU by construction.
#pragma once

#include <cstdint>

#include "base/hd.h"

namespace zosched {

// Four 32-bit words; v[0] is Random123's word 0.
struct Uint4 {
  uint32_t v[4];
};

// Two 32-bit words; v[0] is Random123's key word 0.
struct Uint2 {
  uint32_t v[2];
};

namespace philox_internal {

constexpr uint32_t kM0 = 0xD2511F53u;  // multiplier of counter word 0
constexpr uint32_t kM1 = 0xCD9E8D57u;  // multiplier of counter word 2
constexpr uint32_t kW0 = 0x9E3779B9u;  // Weyl key bump of key word 0 (golden ratio)
constexpr uint32_t kW1 = 0xBB67AE85u;  // Weyl key bump of key word 1 (sqrt(3) - 1)

// One Philox S-box round: two 32x32->64 multiplies, the high halves xor'ed
// with the other counter words and the round key.
ZS_HD inline Uint4 Round(Uint4 c, Uint2 k) {
  const uint64_t p0 = static_cast<uint64_t>(kM0) * c.v[0];
  const uint64_t p1 = static_cast<uint64_t>(kM1) * c.v[2];
  const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32);
  const uint32_t lo0 = static_cast<uint32_t>(p0);
  const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32);
  const uint32_t lo1 = static_cast<uint32_t>(p1);
  Uint4 out;
  out.v[0] = hi1 ^ c.v[1] ^ k.v[0];
  out.v[1] = lo1;
  out.v[2] = hi0 ^ c.v[3] ^ k.v[1];
  out.v[3] = lo0;
  return out;
}

}  // namespace philox_internal

// Returns Philox-4x32 with 10 rounds of `counter` under `key`: round, then
// the key bumped by (W0, W1) before each of the next 9 rounds.
ZS_HD inline Uint4 Philox4x32_10(Uint4 counter, Uint2 key) {
  Uint4 c = counter;
  Uint2 k = key;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k.v[0] += philox_internal::kW0;
      k.v[1] += philox_internal::kW1;
    }
    c = philox_internal::Round(c, k);
  }
  return c;
}

}  // namespace zosched
