#include "runtime/zo/philox.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace zosched {
namespace {

struct Kat {
  Uint4 counter;
  Uint2 key;
  Uint4 expected;
};

// Random123's known-answer vectors, file tests/kat_vectors of the Random123
// distribution (D. E. Shaw Research), lines "philox4x32 10 <counter x4>
// <key x2> <output x4>".
const Kat kKats[] = {
    {{{0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u}},
     {{0x00000000u, 0x00000000u}},
     {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
    {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
     {{0xffffffffu, 0xffffffffu}},
     {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
    {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
     {{0xa4093822u, 0x299f31d0u}},
     {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
};

TEST(Philox4x32_10, MatchesRandom123KnownAnswers) {
  for (const Kat& kat : kKats) {
    const Uint4 out = Philox4x32_10(kat.counter, kat.key);
    for (int w = 0; w < 4; ++w) {
      EXPECT_EQ(out.v[w], kat.expected.v[w]) << std::hex << "word " << w << " of counter "
                                             << kat.counter.v[0] << ", key " << kat.key.v[0];
    }
  }
}

TEST(Philox4x32_10, IsAPureFunctionOfCounterAndKey) {
  const Uint4 c = {{1, 2, 3, 4}};
  const Uint2 k = {{5, 6}};
  const Uint4 a = Philox4x32_10(c, k);
  const Uint4 b = Philox4x32_10(c, k);
  for (int w = 0; w < 4; ++w) EXPECT_EQ(a.v[w], b.v[w]);
}

TEST(Philox4x32_10, EveryInputWordChangesTheOutput) {
  const Uint4 c = {{1, 2, 3, 4}};
  const Uint2 k = {{5, 6}};
  const Uint4 base = Philox4x32_10(c, k);
  for (int w = 0; w < 6; ++w) {
    Uint4 c2 = c;
    Uint2 k2 = k;
    if (w < 4) {
      c2.v[w] ^= 1u;
    } else {
      k2.v[w - 4] ^= 1u;
    }
    const Uint4 out = Philox4x32_10(c2, k2);
    int words_changed = 0;
    for (int o = 0; o < 4; ++o) words_changed += out.v[o] != base.v[o];
    EXPECT_EQ(words_changed, 4) << "flipping the low bit of input word " << w;
  }
}

}  // namespace
}  // namespace zosched
